"""The command-line entry: tools, the starting world, reference runs, scoring, comparison, suite checks."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from pytest_toolsandbox.basics.gate_defaults import DEFAULT_ALPHA, DEFAULT_MIN_EFFECT, alpha_problem, min_effect_problem
from pytest_toolsandbox.tools.augment import VARIANTS, offered_tools
from pytest_toolsandbox.tools.registry import NOT_GIVEN, all_tools


def _tools_command(args: argparse.Namespace) -> int:
    registry = all_tools()
    offered = {tool.tool: tool for tool in offered_tools(list(registry), registry, variant=args.variant)}
    entries: list[dict[str, Any]] = []
    for name, spec in registry.items():
        schema = offered[name]
        entries.append({
            "name": schema.name, "tool": name, "domain": spec.domain, "action": spec.action,
            "visible_to": str(spec.visible_to), "reads": sorted(map(str, spec.reads)),
            "writes": sorted(map(str, spec.writes)), "description": schema.description,
            "parameters": [{"name": p.name, "required": p.required, "description": p.description,
                            **({"default": p.default} if p.default is not NOT_GIVEN else {})} for p in spec.parameters],
            "json_schema": schema.parameters,
            "openai": schema.openai(), "anthropic": schema.anthropic(),
        })
    if args.json:
        print(json.dumps(entries, indent=2, sort_keys=True, default=repr))
        return 0
    for entry in entries:
        label = "action" if entry["action"] else "read"
        params = ", ".join(f"{p['name']}{'' if p['required'] else '?'}" for p in entry["parameters"])
        print(f"{entry['name']:<36} {entry['domain']:<10} {label:<6} ({params})")
    print(f"{len(entries)} tools")
    return 0


def _run_command(args: argparse.Namespace) -> int:
    from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
    from pytest_toolsandbox.running.episode import run_episode
    from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario

    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as error:
        print(error, file=sys.stderr)
        return 2
    trajectory = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario), variant=args.variant)
    if args.json:
        sys.stdout.write(trajectory.to_json())
        return 0
    from pytest_toolsandbox.report.text.conversation import format_conversation

    print(format_conversation(trajectory))
    return 0


def _world_command(args: argparse.Namespace) -> int:
    """Print the starting world (the default one, or a scenario's), so authors can write milestones against
    real phone numbers, ids and times without reading the source."""
    import polars as pl

    from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario
    from pytest_toolsandbox.scenario.models import Scenario, UserSpec
    from pytest_toolsandbox.scenario.world_builder import initial_tables, scenario_clock

    try:
        scenario = (load_scenario(args.scenario) if args.scenario else
                    Scenario(name="default", categories=["single_tool_call"], tools=["get_wifi_status"],
                             user=UserSpec(goal="-", first_message="-")))
    except ScenarioError as error:
        print(error, file=sys.stderr)
        return 2
    clock = scenario_clock(scenario)
    tables = initial_tables(scenario, clock)
    if args.json:
        print(json.dumps({str(table): frame.to_dicts() for table, frame in tables.items()}, indent=1,
                         ensure_ascii=False, default=str))
        return 0
    print(f"now {clock.now.isoformat()} ({scenario.timezone}, timestamp {clock.now.timestamp():.0f})")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        for table, frame in tables.items():
            shown = frame.with_columns(
                pl.from_epoch(pl.col(column), time_unit="s").dt.replace_time_zone("UTC")
                .dt.convert_time_zone(scenario.timezone).alias(column)
                for column, dtype in frame.schema.items() if column.endswith("timestamp") and dtype.is_numeric())
            print(f"\n{table} ({frame.height} rows)")
            print(shown)
    return 0


def _compare_command(args: argparse.Namespace) -> int:
    from pytest_toolsandbox.report.ci.baseline_file import load_baseline_data
    from pytest_toolsandbox.report.ci.compare import CompareError, compare_groups, compare_lines, regressed, select
    from pytest_toolsandbox.report.results.summary import SummaryError

    problems = [f"{flag}: {problem}" for flag, problem in (("--alpha", alpha_problem(args.alpha)),
                                                         ("--min-effect", min_effect_problem(args.min_effect)))
                if problem is not None]
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    try:
        before = select(load_baseline_data(args.a), args.a, args.agent_a)
        after = select(load_baseline_data(args.b), args.b, args.agent_b)
    except (SummaryError, CompareError) as error:
        print(error, file=sys.stderr)
        return 2
    deltas = compare_groups(before, after, args.alpha, args.min_effect)
    print("\n".join(compare_lines(before, after, deltas, args.alpha, args.min_effect)))
    if args.html:
        from pathlib import Path

        from pytest_toolsandbox.report.pages.comparison_html import RunPages, write_comparison

        out = Path(args.html)
        try:
            out.mkdir(parents=True, exist_ok=True)
            pair = (RunPages(before, Path(args.a).parent), RunPages(after, Path(args.b).parent))
            written = write_comparison(out, [pair], args.alpha, args.min_effect)
        except OSError as error:
            print(f"--html {args.html}: cannot write the comparison page: {error.strerror}", file=sys.stderr)
            return 2
        print(f"comparison page: {written}")
    return 1 if regressed(deltas) else 0


def _merge_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pytest_toolsandbox.report.results.merge import MergeError, check_compatible, read_source, write_merged

    try:
        sources = [read_source(Path(directory), position) for position, directory in enumerate(args.dirs)]
        check_compatible(sources)
    except MergeError as error:
        print(error, file=sys.stderr)
        return 2
    for source in sources:
        if source.dropped:
            print(f"{source.directory}: {source.dropped} record(s) dropped: their scenario, agent, variant or trial "
                  "is not one of that run's (its fingerprint)", file=sys.stderr)
    result = write_merged(sources, Path(args.out), args.prefer == "latest", Path(args.root))
    merged = result.merged
    if merged.conflicts:
        print(f"{len(merged.conflicts)} item(s) ran in several directories with different results; nothing "
              "was written. Keep the later run of each with --prefer latest:", file=sys.stderr)
        for conflict in merged.conflicts:
            print(f"  {conflict}", file=sys.stderr)
        return 1
    for replaced in merged.replaced:
        print(f"later run kept: {replaced}")
    summary = result.summary
    if summary is None:
        print("no records in " + " ".join(args.dirs), file=sys.stderr)
        return 2
    counts = summary["counts"]
    note = f" — PARTIAL: {counts['finished']} of {counts['expected']} items finished" if summary["partial"] else ""
    print(f"merged {len(sources)} report(s): {counts['finished']} records into {args.out}/summary.json and "
          f"{args.out}/index.html{note}")
    for directory in merged.killed:
        print(f"{directory}: its run ended before writing its summary (read from its journal): what it did not "
              "finish is unknown, so the merge is partial")
    if result.scenarios_missing:
        print(f"{len(result.scenarios_missing)} scenario file(s) not found under {args.root} (pages show no goal "
              f"nor reference dialogue; pass --root): {', '.join(result.scenarios_missing[:5])}")
    for problem in result.input_errors:
        print(problem, file=sys.stderr)
    written = result.write_errors
    for line in written.lines() if written else []:
        print(f"not written: {line}", file=sys.stderr)
    return 2 if written or result.input_errors else 0


def _reason(error: Exception) -> str:
    """One line for a validation error: the first bad field and why (pydantic's text runs to a page)."""
    from pydantic import ValidationError

    if isinstance(error, ValidationError):
        first = error.errors()[0]
        field = ".".join(map(str, first["loc"]))
        return f"field {field}: {first['msg']}" if field else first["msg"]
    return str(error)


def _score_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pytest_toolsandbox.evaluation import evaluate
    from pytest_toolsandbox.evaluation.text import format_evaluation
    from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario
    from pytest_toolsandbox.world.trajectory import Trajectory

    try:
        trajectory = Trajectory.load(args.trajectory)
    except (OSError, ValueError) as error:
        print(f"{args.trajectory}: cannot read the trajectory: {_reason(error)}", file=sys.stderr)
        return 2
    scenario_path = args.scenario or trajectory.scenario_path
    if not scenario_path or not Path(scenario_path).is_file():
        print(f"{args.trajectory}: scenario file {scenario_path!r} not found; pass --scenario PATH", file=sys.stderr)
        return 2
    try:
        evaluation = evaluate(load_scenario(scenario_path), trajectory)
    except (ScenarioError, ValueError) as error:
        print(error, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"trajectory": args.trajectory, "scenario": str(scenario_path),
                          **evaluation.model_dump(mode="json")}, indent=2, sort_keys=True, allow_nan=False))
        return 0
    print(format_evaluation(evaluation, trajectory))
    return 0


def _validate_command(args: argparse.Namespace) -> int:
    from pytest_toolsandbox.suite.validate import collect, validate

    try:
        files = collect(args.paths)
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 2
    if not files:
        print(f"no scenario files (*.yaml, *.yml) under {' '.join(args.paths)}", file=sys.stderr)
        return 2
    report = validate(files, determinism=not args.no_determinism, mutants=not args.no_mutants)
    print(report.to_json() if args.json else report.text())
    return 0 if report.ok else 1


def _stats_command(args: argparse.Namespace) -> int:
    from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario
    from pytest_toolsandbox.suite.features import features
    from pytest_toolsandbox.suite.stats import check, compute
    from pytest_toolsandbox.suite.stats_text import render
    from pytest_toolsandbox.suite.validate import collect

    registry = all_tools()
    try:
        files = collect(args.paths)
        loaded = [features(load_scenario(path, registry), registry) for path in files]
    except (FileNotFoundError, ScenarioError) as error:
        print(f"{error}\n(run `python -m pytest_toolsandbox validate` for every problem)", file=sys.stderr)
        return 2
    stats = compute(loaded, registry)
    shortfalls = check(stats) if args.check else None
    if args.json:
        print(json.dumps({**stats, **({"shortfalls": shortfalls} if shortfalls is not None else {})}, indent=2))
    else:
        print(render(stats, shortfalls))
    return 1 if shortfalls else 0


def _import_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pytest_toolsandbox.importer.command import run

    return run(args.python, Path(args.out), args.check)


def _paper_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pytest_toolsandbox.report.results.summary import SummaryError, dump_summary, load_summary
    from pytest_toolsandbox.report.text.paper import shippable, text_table
    from pytest_toolsandbox.report.writing.files import write_atomic

    try:
        summaries = [(path, load_summary(path)) for path in args.summaries]
    except SummaryError as error:
        print(error, file=sys.stderr)
        return 2
    if args.write_results:
        if len(summaries) != 1:
            print("--write-results takes one summary", file=sys.stderr)
            return 2
        write_atomic(Path(args.write_results), dump_summary(shippable(summaries[0][1])))
    print(text_table(summaries), end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pytest_toolsandbox",
                                     description="ToolSandbox scenarios, tools and trajectories.")
    commands = parser.add_subparsers(dest="command", required=True)
    tools = commands.add_parser("tools", help="list the tool registry with schemas and labels")
    tools.add_argument("--json", action="store_true", help="machine-readable output")
    tools.add_argument("--variant", default="base", choices=sorted(VARIANTS),
                       help="show the schemas as this augmentation variant presents them")
    tools.set_defaults(handler=_tools_command)
    run = commands.add_parser("run", help="play a scenario's reference dialogue and print the trajectory")
    run.add_argument("scenario", help="path to a scenario YAML file")
    run.add_argument("--json", action="store_true", help="print the trajectory JSON")
    run.add_argument("--variant", default="base", choices=sorted(VARIANTS))
    run.set_defaults(handler=_run_command)
    world = commands.add_parser("world", help="print the starting world's tables (default, or a scenario's): "
                                "settings, contacts, messages and reminders with local times")
    world.add_argument("scenario", nargs="?", help="scenario YAML whose world patch to apply (default: none)")
    world.add_argument("--json", action="store_true", help="rows as JSON (timestamps as numbers)")
    world.set_defaults(handler=_world_command)
    score = commands.add_parser("score", help="score a trajectory JSON offline against its scenario")
    score.add_argument("trajectory", help="path to a trajectory JSON file")
    score.add_argument("--scenario", help="scenario YAML (default: the path recorded in the trajectory)")
    score.add_argument("--json", action="store_true", help="machine-readable output")
    score.set_defaults(handler=_score_command)
    compare = commands.add_parser("compare", help="per-category deltas between two runs with the baseline gate's "
                                  "tests; exit 1 when a group regressed")
    compare.add_argument("a", help="the earlier summary.json or baseline file (A)")
    compare.add_argument("b", help="the later summary.json or baseline file (B)")
    compare.add_argument("--agent-a", help="agent to take from A when it holds several")
    compare.add_argument("--agent-b", help="agent to take from B when it holds several")
    compare.add_argument("--alpha", type=float, default=DEFAULT_ALPHA,
                         help=f"significance level, strictly between 0 and 1 (default {DEFAULT_ALPHA:g})")
    compare.add_argument("--min-effect", type=float, default=DEFAULT_MIN_EFFECT, help="smallest drop of a group's "
                         f"similarity or pass rate that counts as a regression (default {DEFAULT_MIN_EFFECT:g})")
    compare.add_argument("--html", metavar="DIR", help="also write DIR/comparison.html: regressions, improvements "
                         "and new tasks with old → new score and links to both trajectories, and the deltas")
    compare.set_defaults(handler=_compare_command)
    merge = commands.add_parser("merge", help="one summary.json and one HTML report from several report "
                                "directories (shards, reruns, other agents); aggregates recomputed")
    merge.add_argument("dirs", nargs="+", metavar="DIR", help="report directories (each with summary.json, or "
                       "records.jsonl after a killed run)")
    merge.add_argument("--out", required=True, metavar="DIR", help="directory to write the merged report to")
    merge.add_argument("--prefer", choices=["latest"], help="an item in several directories with different "
                       "results: keep the run that finished last (default: report a conflict, write nothing)")
    merge.add_argument("--root", default=".", metavar="DIR", help="directory the scenario paths are relative to "
                       "(pytest's rootdir), for the goal and reference dialogue on trajectory pages (default: .)")
    merge.set_defaults(handler=_merge_command)
    validate = commands.add_parser("validate", help="check that every scenario is sound: schema, tools offered, "
                                   "reference scores 1.0 in every variant, unhelpful agent fails, no vacuous "
                                   "milestone, deterministic runs, paraphrase links, examples and generated "
                                   "answers judged right")
    validate.add_argument("paths", nargs="*", default=["scenarios"], help="scenario files or folders "
                          "(default: scenarios)")
    validate.add_argument("--json", action="store_true", help="machine-readable output")
    validate.add_argument("--no-determinism", action="store_true",
                          help="skip the second run in another interpreter (faster; for quick edits)")
    validate.add_argument("--no-mutants", action="store_true",
                          help="skip the mutation stage (generated wrong and right answers; for quick edits)")
    validate.set_defaults(handler=_validate_command)
    stats = commands.add_parser("stats", help="bases and items per category and variant next to the reference "
                                "benchmark, milestones, dialogue length, tool coverage and the suite's other counts")
    stats.add_argument("paths", nargs="*", default=["scenarios"], help="scenario files or folders "
                       "(default: scenarios)")
    stats.add_argument("--json", action="store_true", help="machine-readable output")
    stats.add_argument("--check", action="store_true", help="exit 1 when a minimum count of issue 9 is not met, "
                       "listing the shortfalls")
    stats.set_defaults(handler=_stats_command)
    paper = commands.add_parser("paper-table", help="runs of the imported benchmark in the layout of the "
                                "ToolSandbox paper's Table 5 (similarity) and Table 11 (turns), next to its rows")
    paper.add_argument("summaries", nargs="+", metavar="SUMMARY", help="summary.json files (or shipped results "
                       "such as baselines/toolsandbox/*.json)")
    paper.add_argument("--write-results", metavar="PATH", help="also write the summary's per-item scores and "
                       "verdicts, without any scenario text, to PATH (how baselines/toolsandbox/ is made)")
    paper.set_defaults(handler=_paper_command)
    importer = commands.add_parser("import-toolsandbox", help="convert the scenarios of the installed reference "
                                   "package tool_sandbox (apple/ToolSandbox) into scenario files (docs/toolsandbox.md)")
    importer.add_argument("--python", help="interpreter that can import tool_sandbox (default: this one, if it can)")
    importer.add_argument("--out", default="scenarios/toolsandbox", help="folder to write (default: "
                          "scenarios/toolsandbox)")
    importer.add_argument("--check", action="store_true", help="write nothing; exit 1 listing the files an import "
                          "now would write differently")
    importer.set_defaults(handler=_import_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except BrokenPipeError:
        # The reader went away (`… | head`): stop quietly. Python would report the pipe again when it
        # flushes stdout at exit, so stdout is pointed at the null device first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
