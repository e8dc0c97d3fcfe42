"""The import carries every constraint of the reference's milestones and minefields over, or stops.

The converter's own checks run everywhere. The field-by-field comparison needs the reference package:
set TOOLSANDBOX_REFERENCE_PYTHON to an interpreter that has `tool_sandbox` installed (docs/toolsandbox.md
§1); it imports the whole benchmark into a temporary directory, prints the reference's milestone objects
in their own interpreter (`toolsandbox_constraints.py`: similarity functions by name, partial keywords,
target rows, reference indices, the guardrails its matcher adds, the DAG's edges) and compares them with
the constraints our engine compiles from each imported file.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.evaluation.columns import Always, Close, Contains, Exact, Rouge, TraceMatch, freeze_call
from pytest_toolsandbox.evaluation.constraints import EventSpec, compile_events
from pytest_toolsandbox.importer.convert import ConversionError, convert_events
from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from pytest_toolsandbox.world.clock import DEFAULT_NOW, DEFAULT_TIMEZONE, FrozenClock

DUMPER = Path(__file__).with_name("toolsandbox_constraints.py")
CLOCK = FrozenClock.at(DEFAULT_NOW, DEFAULT_TIMEZONE)


# ------------------------------------------------------------------- the converter, on the reader's JSON


def _trace_fill(argument: str, source: int, tolerance: dict[str, Any]) -> dict[str, Any]:
    """One reference constraint filling `argument` of a timestamp_diff call from milestone `source`."""
    return {"table": "SANDBOX", "kind": "fill", "reference": source, "fill_to": "tool_trace",
            "rows": [{"sender": "EXECUTION_ENVIRONMENT", "recipient": "AGENT",
                      "tool_trace": json.dumps({"tool_name": "timestamp_diff", "arguments": {}})}],
            "columns": {"sender": {"kind": "exact"}, "recipient": {"kind": "exact"},
                        "tool_trace": {"kind": "trace", "tolerance": tolerance}},
            "values": [{"name": argument, "path": "result", "formats": []}]}


def _call(tool: str) -> dict[str, Any]:
    return {"table": "SANDBOX", "kind": "snapshot", "reference": None,
            "rows": [{"sender": "EXECUTION_ENVIRONMENT", "recipient": "AGENT",
                      "tool_trace": json.dumps({"tool_name": tool, "arguments": {}})}],
            "columns": {"sender": {"kind": "exact"}, "recipient": {"kind": "exact"},
                        "tool_trace": {"kind": "trace", "tolerance": {}}}}


def _block(*last: dict[str, Any]) -> dict[str, Any]:
    events = [{"constraints": [_call("get_current_timestamp")], "guarded_tables": []},
              {"constraints": [_call("search_holiday")], "guarded_tables": []},
              {"constraints": list(last), "guarded_tables": []}]
    return {"events": events, "edges": [[0, 2], [1, 2]]}


def test_every_tolerance_of_several_constraints_on_one_call_is_kept() -> None:
    block = _block(_trace_fill("timestamp_0", 0, {"timestamp_0": 1}), _trace_fill("timestamp_1", 1, {"timestamp_1": 1}))
    diff = convert_events(block, "milestone", CLOCK, "base: milestones")["timestamp_diff"]
    assert diff["tolerance"] == {"timestamp_0": 1, "timestamp_1": 1}
    assert [fill["milestone"] for fill in diff["fill_from"]] == ["get_current_timestamp", "search_holiday"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c["columns"]["tool_trace"]["tolerance"].update(timestamp_0=2),
     "base: milestones.timestamp_diff: argument 'timestamp_0' has two tolerances (1, 2)"),
    (lambda c: c.update(kind="addition"), "a message compared by 'addition' (reference 1) has no counterpart"),
    (lambda c: c["columns"]["sender"].update(kind="rouge"), "message sender compared by 'rouge' has no counterpart"),
    (lambda c: c.update(fill_to="content"), "values filled into 'content' have no counterpart"),
])
def test_a_construct_without_counterpart_stops_the_import(change: Any, message: str) -> None:
    second = _trace_fill("timestamp_1", 1, {"timestamp_1": 1})
    change(second)
    with pytest.raises(ConversionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        convert_events(_block(_trace_fill("timestamp_0", 0, {"timestamp_0": 1}), second), "milestone", CLOCK,
                       "base: milestones")


def test_a_message_snapshot_measured_from_a_reference_stops_the_import() -> None:
    referenced = {**_call("timestamp_diff"), "reference": 0}
    with pytest.raises(ConversionError, match=r"base: milestones.timestamp_diff: a message compared by 'snapshot' "
                                              r"\(reference 0\) has no counterpart"):
        convert_events(_block(referenced), "milestone", CLOCK, "base: milestones")


# ---------------------------------------------------------------- field by field, against the package

REFERENCE_PYTHON = os.environ.get("TOOLSANDBOX_REFERENCE_PYTHON", "")
TABLES = {"SETTING": "settings", "CONTACT": "contacts", "MESSAGING": "messaging", "REMINDER": "reminders",
          "SANDBOX": "sandbox"}
MEASURES = {"column_exact_match_similarity": "exact", "column_rouge_l_similarity": "rouge",
            "column_contains_similarity": "contains", "column_one_similarity": "any",
            "column_tool_trace_exact_match_similarity": "trace"}
COMPARISONS = {"snapshot_similarity": "snapshot", "addition_similarity": "addition",
               "removal_similarity": "removal", "update_similarity": "update",
               "tool_trace_dependant_similarity": "snapshot"}
"""The reference's function names; a name not listed is a construct the test does not know (KeyError)."""


def _has_reference() -> bool:
    if not REFERENCE_PYTHON:
        return False
    found = subprocess.run([REFERENCE_PYTHON, "-I", "-c", "import tool_sandbox"], capture_output=True, check=False)
    return found.returncode == 0


needs_reference = pytest.mark.skipif(not _has_reference(), reason="the reference package is not installed: set "
                                     "TOOLSANDBOX_REFERENCE_PYTHON to an interpreter with tool_sandbox (docs/"
                                     "toolsandbox.md §1)")


def _rounded(value: Any) -> Any:
    """Numbers as floats to 6 decimals (times are POSIX seconds on both sides; 0 and 0.0 are one bound),
    containers recursively."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return round(float(value), 6)
    if isinstance(value, dict):
        return {str(key): _rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(item) for item in value]
    return value


def _calls(alternatives: Any) -> str:
    """Frozen call alternatives as canonical text (values nested as JSON are decoded first)."""
    def thawed(value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) and value[:1] in "[{" else value

    return json.dumps(sorted(json.dumps(_rounded([tool, {name: thawed(value) for name, value in arguments}]),
                                        sort_keys=True) for tool, arguments in alternatives))


def _our_measure(measure: Any) -> Any:
    if isinstance(measure, Close):
        return ["close", measure.tolerance]
    kinds = {Exact: "exact", Rouge: "rouge", Contains: "contains", Always: "any", TraceMatch: "trace"}
    return kinds[type(measure)]


def _their_measure(column: str, measure: dict[str, Any]) -> Any:
    if measure["name"] == "column_close_similarity":
        return ["close", float(measure["atol_dict"][column])]
    return MEASURES[measure["name"]]


def our_facts(spec: EventSpec) -> list[str]:
    """One line per fact of a compiled milestone: its constraints, each call's tolerances and fills
    merged (our format keeps one constraint per call), its guardrails."""
    facts = []
    for constraint in spec.constraints:
        row = constraint.rows[0]
        measures = {column: _our_measure(measure) for column, measure in constraint.measures.items()
                    if column not in ("tool_trace", "attempt")}
        sources = sorted(fill.source for fill in constraint.fills)
        if constraint.call_column == "tool_trace":
            tolerance = {name: value for name, value in constraint.measures["tool_trace"].tolerances}
            facts.append(["call", row["sender"], row["recipient"], _calls(row["tool_trace"]), measures,
                          _rounded(tolerance), sources, constraint.reference])
        elif constraint.call_column == "attempt":
            facts.append(["attempt", sorted(tool for tool, _ in row["attempt"])])
        elif constraint.table.value == "sandbox":
            facts.append(["text", row["sender"], row["recipient"], row["content"], measures, sources,
                          constraint.reference])
        else:
            facts.append(["table", constraint.table.value, constraint.comparison, sorted(
                json.dumps(_rounded(row), sort_keys=True) for row in constraint.rows), measures,
                constraint.reference])
    facts.append(["guardrails", sorted([table.value, name] for table in spec.guarded for name in spec.guard_against)])
    return sorted(json.dumps(fact, sort_keys=True) for fact in facts)


def their_facts(constraints: list[dict[str, Any]], names: list[str]) -> list[str]:
    """The same lines for a reference milestone: several constraints on one call are merged as ours are."""
    def name(index: int | None) -> str | None:
        return None if index is None else "initial" if index == -1 else names[index]

    facts, calls, guards = [], {}, []
    for constraint in constraints:
        table, similarity = TABLES[constraint["table"]], constraint["similarity"]
        if similarity == "guardrail_similarity":
            guards.append([table, name(constraint["reference"])])
            continue
        comparison = COMPARISONS[similarity]
        filled = similarity == "tool_trace_dependant_similarity"
        source, reference = ([name(constraint["reference"])], None) if filled else ([], name(constraint["reference"]))
        measures = {column: _their_measure(column, measure) for column, measure in constraint["measures"].items()
                    if column != "tool_trace"}
        if table != "sandbox":
            facts.append(["table", table, comparison, sorted(json.dumps(_rounded(row), sort_keys=True)
                                                              for row in constraint["rows"]), measures, reference])
            continue
        (row,) = constraint["rows"]
        sender, recipient = row["sender"].lower(), row["recipient"].lower()
        if "tool_trace" in row:
            trace = json.loads(row["tool_trace"])
            alternatives = [freeze_call(entry["tool_name"], entry["arguments"])
                            for entry in (trace if isinstance(trace, list) else [trace])]
            key = json.dumps([sender, recipient, _calls(alternatives), measures, reference], sort_keys=True)
            merged = calls.setdefault(key, {"tolerance": {}, "sources": set()})
            merged["tolerance"].update(constraint["measures"]["tool_trace"].get("atol_dict") or {})
            merged["sources"].update(source)
        elif (sender, recipient) == ("agent", "execution_environment") and measures["content"] == "contains":
            facts.append(["attempt", [row["content"]]])
        else:
            facts.append(["text", sender, recipient, row["content"], measures, source, reference])
    for key, merged in calls.items():
        sender, recipient, alternatives, measures, reference = json.loads(key)
        facts.append(["call", sender, recipient, alternatives, measures,
                      _rounded({k: float(v) for k, v in merged["tolerance"].items()}), sorted(merged["sources"]),
                      reference])
    facts.append(["guardrails", sorted(guards)])
    return sorted(json.dumps(fact, sort_keys=True) for fact in facts)


def differences(ours: list[EventSpec], theirs: dict[str, Any], kind: str) -> list[str]:
    """Every fact that differs, per milestone, and any difference in the events or the DAG's edges."""
    names = [spec.name for spec in ours]
    if len(ours) != len(theirs["events"]):
        return [f"{kind}: {len(ours)} events here, {len(theirs['events'])} in the reference"]
    found = []
    for spec, constraints in zip(ours, theirs["events"], strict=True):
        mine, reference = our_facts(spec), their_facts(constraints, names)
        found += [f"{kind}.{spec.name}: only here: {fact}" for fact in mine if fact not in reference]
        found += [f"{kind}.{spec.name}: only in the reference: {fact}" for fact in reference if fact not in mine]
    edges = sorted([names[a], names[b]] for a, b in theirs["edges"])
    if sorted([before, spec.name] for spec in ours for before in spec.after) != edges:
        found.append(f"{kind}: edges differ from the reference's {edges}")
    return found


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The imported benchmark and what the import printed."""
    out = tmp_path_factory.mktemp("toolsandbox")
    done = subprocess.run([sys.executable, "-m", "pytest_toolsandbox", "import-toolsandbox", "--python",
                           REFERENCE_PYTHON, "--out", str(out)], check=True, capture_output=True, text=True)
    return out, done.stdout


def mismatches(folder: Path, python: str) -> tuple[int, list[str]]:
    """(the number of imported files in `folder`, every difference from the reference's objects)."""
    scenarios = [load_scenario(path) for path in sorted(find_scenarios(folder))]
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    environment.update(TZ=DEFAULT_TIMEZONE, TOOLSANDBOX_NOW=DEFAULT_NOW)
    dumped = subprocess.run([python, "-I", str(DUMPER)], input=json.dumps([s.name for s in scenarios]),
                            capture_output=True, text=True, env=environment, check=True)
    reference = json.loads(dumped.stdout)
    problems = []
    for scenario in scenarios:
        clock = scenario_clock(scenario)
        for kind in ("milestones", "minefields"):
            ours = compile_events(getattr(scenario, kind), clock, kind)
            problems += [f"{scenario.name}: {line}" for line in differences(ours, reference[scenario.name][kind], kind)]
    return len(scenarios), problems


@needs_reference
def test_every_imported_constraint_equals_the_reference_s_field_by_field(imported: tuple[Path, str]) -> None:
    assert mismatches(imported[0], REFERENCE_PYTHON) == (129, [])


@needs_reference
def test_every_variant_offers_the_reference_s_tools_under_its_names(imported: tuple[Path, str]) -> None:
    """The import compares, per base and variant, the tools (and agent-facing names) it offers with the
    reference's item and prints any difference."""
    assert "129 base scenarios (1032 items) written" in imported[1]
    assert "offered tools differ" not in imported[1]
