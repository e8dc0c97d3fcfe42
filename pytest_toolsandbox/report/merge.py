"""One report from several report directories: shards of a CI matrix, reruns, runs of other agents.

Records are keyed by agent spec and item id. The same item in two directories is one result when the
records agree apart from timings and worker ids (the same directory given twice, an overlap of
shards); when they differ, the later run (by `run.finished`, then by the order given) wins only when
asked (`prefer_latest`), otherwise every such item is a conflict and nothing is written. Runs of a
single agent merged with runs of other agents get the ids a run of all of them together gives
(`…[<agent>-base]`), so their trajectory files do not collide.

The merged directory is written by the plugin's own collector (report/collector.py): the summary's
aggregates, pass^k and usage, the listings and the trajectory pages come from the same code as a run's,
so merging the shards of a run gives the run's records and aggregates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_toolsandbox.basics.item_ids import agent_label, param_id, with_agent
from pytest_toolsandbox.report.journal import JOURNAL_NAME, read_journal
from pytest_toolsandbox.report.record import Record, agent_key
from pytest_toolsandbox.report.slug import trajectory_slug
from pytest_toolsandbox.report.summary import SUMMARY_NAME, SummaryError, checked_summary, load_summary
from pytest_toolsandbox.report.trajectory_html import PageContext

VOLATILE_RECORD_KEYS = ("duration", "worker")
"""Fields that differ between two runs of the same item with the same result."""


class MergeError(ValueError):
    """A report directory that cannot be merged; the message names it and the fix."""


@dataclass(frozen=True)
class Source:
    """One report directory as read: its summary (or, after a killed run, its journal)."""

    directory: Path
    summary: dict[str, Any]
    position: int

    @property
    def agents(self) -> list[str]:
        return list(self.summary.get("run", {}).get("options", {}).get("agents") or [])

    @property
    def order(self) -> tuple[str, int]:
        """Earlier runs first: by when they finished, then by the order they were given in."""
        return (str(self.summary.get("run", {}).get("finished") or ""), self.position)


def read_source(directory: Path, position: int = 0) -> Source:
    """A report directory's summary.json; its records.jsonl when the run was killed before writing one."""
    summary_path = directory / SUMMARY_NAME
    if summary_path.is_file():
        try:
            return Source(directory, load_summary(summary_path), position)
        except SummaryError as error:
            raise MergeError(str(error)) from None
    if (directory / JOURNAL_NAME).is_file():
        data = {"run": {}, "partial": True, "records": read_journal(directory), "crashed": [], "unfinished": []}
        try:
            return Source(directory, checked_summary(directory / JOURNAL_NAME, data), position)
        except SummaryError as error:
            raise MergeError(str(error)) from None
    raise MergeError(f"{directory}: no {SUMMARY_NAME} nor {JOURNAL_NAME}; pass a report directory written by "
                     "a pytest run (--report-dir)")


def _stable(record: Record) -> Record:
    return {key: value for key, value in record.items() if key not in VOLATILE_RECORD_KEYS}


@dataclass
class Entry:
    """A merged record and the directory its trajectory file is read from."""

    record: Record
    source: Source
    original_slug: str | None


@dataclass
class Merged:
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unfinished: set[str] = field(default_factory=set)
    unknown_missing: int = 0
    """Items a source expected but did not finish, when it does not say which (older summaries)."""
    crashed: list[dict[str, str]] = field(default_factory=list)
    stop_reasons: list[str] = field(default_factory=list)


def _slug_of(record: Record) -> str | None:
    path = record.get("trajectory")
    if isinstance(path, str) and path.startswith("trajectories/") and path.endswith(".json"):
        return path[len("trajectories/"):-len(".json")]
    return None


def merge_sources(sources: Sequence[Source], prefer_latest: bool) -> Merged:
    """Records of every source, keyed by (agent spec, item id); see the module docstring for the rules."""
    every_agent = sorted({agent_key(r) for source in sources for r in source.summary["records"]}
                         | {agent for source in sources for agent in source.agents})
    merged = Merged()
    for source in sorted(sources, key=lambda source: source.order):
        single = len(source.agents) <= 1 and len({agent_key(r) for r in source.summary["records"]}) <= 1
        rename = single and len(every_agent) > 1
        for record in source.summary["records"]:
            record = dict(record)
            original_slug = _slug_of(record)
            if rename:
                record["id"] = with_agent(record["id"], agent_label(agent_key(record), tuple(every_agent)))
            key = (agent_key(record), record["id"])
            earlier = merged.entries.get(key)
            if earlier is not None and _stable(earlier.record) != _stable(record):
                (merged.replaced if prefer_latest else merged.conflicts).append(
                    f"{record['id']} (agent {key[0]}): {earlier.source.directory} and {source.directory}")
                if not prefer_latest:
                    continue
            elif earlier is not None:
                continue
            merged.entries[key] = Entry(record, source, original_slug)
        summary = source.summary
        missing = summary.get("unfinished")
        if isinstance(missing, list):
            merged.unfinished.update(with_agent(nodeid, agent_label(source.agents[0], tuple(every_agent)))
                                     if rename and source.agents else nodeid for nodeid in missing)
        elif summary.get("partial"):
            counts = summary.get("counts", {})
            merged.unknown_missing += max(int(counts.get("expected", 0)) - int(counts.get("finished", 0)), 0)
        merged.crashed.extend(summary.get("crashed") or [])
        if summary.get("stop_reason"):
            merged.stop_reasons.append(f"{source.directory}: {summary['stop_reason']}")
    finished = {nodeid for _, nodeid in merged.entries}
    merged.unfinished -= finished
    merged.crashed = [crash for crash in merged.crashed if crash.get("id") not in finished]
    return merged


def _trials(sources: Sequence[Source]) -> int:
    return max([int(s.summary.get("run", {}).get("options", {}).get("trials", 1)) for s in sources] or [1])


def merged_run(sources: Sequence[Source]) -> dict[str, Any]:
    """The `run` part of the merged summary: the earliest start, the latest finish, the union of agents
    and users, the first source's options (with the largest trials, no shard), and where each part came
    from."""
    runs = [source.summary.get("run", {}) for source in sources]
    first = next((run for run in runs if run), {})
    started = [run["started"] for run in runs if run.get("started")]
    finished = [run["finished"] for run in runs if run.get("finished")]
    return {
        **first,
        "started": min(started) if started else None,
        "finished": max(finished) if finished else None,
        "duration": round(sum(float(run.get("duration") or 0.0) for run in runs), 3),
        "exit_status": max((int(run.get("exit_status") or 0) for run in runs), default=0),
        "options": {**first.get("options", {}), "trials": _trials(sources), "shard": None},
        "agents": sorted({agent for run in runs for agent in run.get("agents", [])}),
        "users": sorted({user for run in runs for user in run.get("users", [])}),
        "workers": max((int(run.get("workers") or 0) for run in runs), default=0),
        "merged_from": [{"directory": str(source.directory), "started": run.get("started"),
                         "finished": run.get("finished"), "partial": bool(source.summary.get("partial")),
                         "records": len(source.summary["records"])} for source, run in zip(sources, runs, strict=True)],
    }


def _baseline(sources: Sequence[Source]) -> dict[str, Any] | None:
    paths = {(source.summary.get("baseline") or {}).get("path") for source in sources} - {None}
    return {"path": paths.pop()} if len(paths) == 1 else None


class _Contexts:
    """Each scenario's goal, knowledge and reference dialogue for its pages, read from the scenario file
    when it is found under `root` (the directory pytest ran in); pages of the others go without."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[str, PageContext | None] = {}

    def __call__(self, scenario_path: str) -> PageContext | None:
        if scenario_path not in self.cache:
            from pytest_toolsandbox.report.trajectory_html import scenario_context
            from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario

            try:
                scenario = load_scenario(self.root / scenario_path)
                context = scenario_context(scenario)
                self.cache[scenario_path] = PageContext(context["goal"], context["knowledge"],
                                                        tuple(context["reference"]))
            except (ScenarioError, OSError):
                self.cache[scenario_path] = None
        return self.cache[scenario_path]

    @property
    def missing(self) -> list[str]:
        return sorted(path for path, context in self.cache.items() if context is None)


@dataclass(frozen=True)
class MergeResult:
    summary: dict[str, Any] | None
    merged: Merged
    write_errors: list[str]
    scenarios_missing: list[str]


def write_merged(sources: Sequence[Source], out: Path, prefer_latest: bool, root: Path) -> MergeResult:
    """Merge `sources` into `out` (summary.json, records.jsonl, the site, trajectories and their pages);
    nothing is written when there are conflicts."""
    from pytest_toolsandbox.report.collector import RunCollector

    merged = merge_sources(sources, prefer_latest)
    if merged.conflicts:
        return MergeResult(None, merged, [], [])
    collector = RunCollector(out, _trials(sources))
    entries = sorted(merged.entries.values(), key=lambda entry: (entry.record["id"], agent_key(entry.record)))
    every_id = [entry.record["id"] for entry in entries] + sorted(merged.unfinished)
    collector.expect(len(every_id) + merged.unknown_missing, every_id)
    contexts = _Contexts(root)
    for entry in entries:
        record, trajectory_json, slug = entry.record, None, None
        if entry.original_slug is not None:
            try:
                trajectory_json = (entry.source.directory / "trajectories" / f"{entry.original_slug}.json").read_text(
                    encoding="utf-8")
                slug = trajectory_slug(record["path"], param_id(record["id"]))
            except OSError as error:
                collector.write_errors.append(f"{error.filename}: {error.strerror or error}")
        worker = record.get("worker")
        collector.add_phase(record["id"], "call", False, float(record.get("duration") or 0.0), worker, record,
                            trajectory_json, slug, contexts(record["path"]))
        collector.add_phase(record["id"], "teardown", False, 0.0, worker, None, None, None)
    collector.crashed = list(merged.crashed)
    if (merged.unfinished or merged.unknown_missing) and merged.stop_reasons:
        collector.stop_reason = "; ".join(merged.stop_reasons)
    summary = collector.finish(merged_run(sources), interrupted=False, baseline=_baseline(sources))
    return MergeResult(summary, merged, collector.write_errors, contexts.missing)
