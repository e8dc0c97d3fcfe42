"""One report from several report directories: shards of a CI matrix, reruns, runs of other agents.

Records are keyed by agent spec and item id. The same item in two directories is one result when the
records agree apart from timings and worker ids (the same directory given twice, an overlap of
shards); when they differ, the later run (by `run.finished`, then by the order given) wins only when
asked (`prefer_latest`), otherwise every such item is a conflict and nothing is written. Runs of a
single agent merged with runs of other agents get the ids a run of all of them together gives
(`…[<agent>-base]`), so their trajectory files do not collide.

The merged directory is written by the plugin's own collector (report/writing/collector.py): the summary's
aggregates, pass^k and usage, the listings and the trajectory pages come from the same code as a run's,
so merging the shards of a run gives the run's records and aggregates.

The inputs are untrusted. Every field merge reads is type-checked (one line naming the file and the
field); each input must carry its run's fingerprint (report/results/fingerprint.py), the inputs must agree on
the options that change results and on the content of the scenario files they share, and records that
cannot belong to their input's run are dropped and counted. Work is bounded by the records the inputs
hold, not by numbers written in them: pass^k goes up to the most trials any task holds, whatever
`trials` says. Files are read only inside their input directory (no `..`, no symlink out of it), and a
trajectory is validated before it is copied.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_toolsandbox.basics.item_ids import agent_label, param_id, with_agent
from pytest_toolsandbox.report.pages.trajectory_html import PageContext
from pytest_toolsandbox.report.results.fingerprint import (
    OPTION_DEFAULTS,
    FingerprintError,
    belongs,
    checked_fingerprint,
)
from pytest_toolsandbox.report.results.journal import JOURNAL_NAME, read_journal
from pytest_toolsandbox.report.results.record import Record, agent_key
from pytest_toolsandbox.report.results.slug import trajectory_slug
from pytest_toolsandbox.report.results.summary import (
    SUMMARY_NAME,
    SummaryError,
    checked_summary,
    load_summary,
    task_key,
)
from pytest_toolsandbox.report.writing.write_failures import WriteFailures

VOLATILE_RECORD_KEYS = ("duration", "worker")
"""Fields that differ between two runs of the same item with the same result."""


class MergeError(ValueError):
    """A report directory that cannot be merged; the message names it and the fix."""


Number = Annotated[float, Field(allow_inf_nan=False, ge=0)]


class _Crash(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    id: str
    worker: str = ""
    error: str = ""


class _Counts(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    expected: int = Field(default=0, ge=0)
    finished: int = Field(default=0, ge=0)


class _Run(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    started: str | None = None
    finished: str | None = None
    duration: Number | int = 0
    exit_status: int = 0
    workers: int = Field(default=0, ge=0)
    agents: list[str] = Field(default_factory=list)
    users: list[str | None] = Field(default_factory=list)


class _MergedFields(BaseModel):
    """The parts of a summary merge reads besides the records (report/results/summary.py checks those)."""

    model_config = ConfigDict(extra="allow", strict=True)

    run: _Run = Field(default_factory=_Run)
    partial: bool = False
    counts: _Counts = Field(default_factory=_Counts)
    unfinished: list[str] | None = None
    crashed: list[_Crash] = Field(default_factory=list)
    stop_reason: str | None = None
    baseline: dict[str, Any] | None = None


class _RecordFiles(BaseModel):
    """The record fields merge reads besides those every summary reader checks."""

    model_config = ConfigDict(extra="allow", strict=True)

    trajectory: str | None = None
    duration: Number | int = 0
    worker: str | None = None


def _checked(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """`data` when every field merge reads has its type; else MergeError naming the file and the field."""
    checks: list[tuple[str, type[BaseModel], Any]] = [
        ("", _MergedFields, data), *((f"records[{n}].", _RecordFiles, r) for n, r in enumerate(data["records"]))]
    for where, model, value in checks:
        try:
            model.model_validate(value)
        except ValidationError as error:
            first = error.errors()[0]
            name = where + ".".join(str(part) for part in first["loc"])
            raise MergeError(f"{path}: field {name}: {first['msg']}; this file was not written by "
                             "pytest-toolsandbox or was edited") from None
    return data


def inside(directory: Path, relative: str) -> Path | None:
    """`directory / relative` when it stays inside `directory` once every symlink is followed; None for a
    path with `..`, an absolute path, or a symlink leading out."""
    parts = relative.replace("\\", "/").split("/")
    if any(part in ("", ".", "..") for part in parts):  # also "" and an absolute path: an empty first part
        return None
    path = directory.joinpath(*parts)
    real = Path(os.path.realpath(path))
    return path if real.is_relative_to(Path(os.path.realpath(directory))) else None


def _input_file(directory: Path, name: str) -> Path | None:
    """An input's summary.json or records.jsonl; None when absent; MergeError when it leads out of it."""
    path = directory / name
    if not path.exists() and not path.is_symlink():
        return None
    if inside(directory, name) is None or not path.is_file():
        raise MergeError(f"{path}: not a file inside {directory} (a symlink out of it, or a directory); "
                         "pass a report directory written by a pytest run")
    return path


@dataclass(frozen=True)
class Source:
    """One report directory as read: its summary (or, after a killed run, its journal), its run's
    fingerprint, and the records dropped because they cannot belong to that run."""

    directory: Path
    summary: dict[str, Any]
    position: int
    fingerprint: dict[str, Any] = field(default_factory=dict)
    killed: bool = False
    """Read from the journal: the run ended before writing its summary, so what it did not finish is unknown."""
    dropped: int = 0

    @property
    def agents(self) -> list[str]:
        return list(self.fingerprint.get("agents") or [])

    @property
    def order(self) -> tuple[str, int]:
        """Earlier runs first: by when they finished, then by the order they were given in."""
        return (str(self.summary.get("run", {}).get("finished") or ""), self.position)


def read_source(directory: Path, position: int = 0) -> Source:
    """A report directory's summary.json; its records.jsonl when the run was killed before writing one."""
    summary_path, journal_path = _input_file(directory, SUMMARY_NAME), _input_file(directory, JOURNAL_NAME)
    try:
        if summary_path is not None:
            data, killed = _checked(summary_path, load_summary(summary_path)), False
            where, fingerprint = summary_path, (data.get("run") or {}).get("fingerprint")
        elif journal_path is not None:
            journal = read_journal(directory)
            header = journal.header or {}
            # partial, without `unfinished`: what the run did not finish is unknown
            data = checked_summary(journal_path, {"run": {"started": header.get("started")}, "partial": True,
                                                  "records": journal.records})
            data, killed = _checked(journal_path, data), True
            where, fingerprint = journal_path, header.get("fingerprint")
        else:
            raise MergeError(f"{directory}: no {SUMMARY_NAME} nor {JOURNAL_NAME}; pass a report directory written "
                             "by a pytest run (--report-dir)")
        fingerprint = checked_fingerprint(fingerprint, str(where))
    except (SummaryError, FingerprintError) as error:
        raise MergeError(str(error)) from None
    kept = [record for record in data["records"] if belongs(record, fingerprint)]
    return Source(directory, {**data, "records": kept}, position, fingerprint, killed,
                  len(data["records"]) - len(kept))


def check_compatible(sources: Sequence[Source]) -> None:
    """MergeError (one line) when two inputs ran with different result options, or saw different
    contents of a scenario file they share."""
    first = sources[0]
    for source in sources[1:]:
        before = {**OPTION_DEFAULTS, **first.fingerprint["options"]}
        after = {**OPTION_DEFAULTS, **source.fingerprint["options"]}
        differing = sorted(key for key in set(before) | set(after) if before.get(key) != after.get(key))
        if differing:
            key = differing[0]
            raise MergeError(f"{first.directory} and {source.directory} ran with different options "
                             f"(options.{key}: {before.get(key)!r} and {after.get(key)!r}"
                             f"{f', and {len(differing) - 1} more' if len(differing) > 1 else ''}); their "
                             "results cannot be one report")
    seen: dict[str, tuple[str, Source]] = {}
    for source in sources:
        for path, digest in source.fingerprint["scenarios"].items():
            earlier = seen.setdefault(path, (digest, source))
            if earlier[0] != digest:
                raise MergeError(f"{path} differs between {earlier[1].directory} and {source.directory} (the "
                                 "scenario file changed between the runs); their results cannot be one report")


def _stable(record: Record) -> Record:
    return {key: value for key, value in record.items() if key not in VOLATILE_RECORD_KEYS}


@dataclass
class Entry:
    """A merged record and the directory its trajectory file is read from."""

    record: Record
    source: Source
    trajectory: str | None


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
    killed: list[str] = field(default_factory=list)
    """Inputs read from their journal: runs that ended before their summary, so the merge is partial."""


def _trajectory_of(record: Record) -> str | None:
    """The record's trajectory file (relative to its report directory) when it names one under
    `trajectories/`; where it leads is checked when it is read."""
    path = record.get("trajectory")
    if isinstance(path, str) and path.startswith("trajectories/") and path.endswith(".json"):
        return path
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
            trajectory = _trajectory_of(record)
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
            merged.entries[key] = Entry(record, source, trajectory)
        summary = source.summary
        missing = summary.get("unfinished")
        if isinstance(missing, list):
            merged.unfinished.update(with_agent(nodeid, agent_label(source.agents[0], tuple(every_agent)))
                                     if rename and source.agents else nodeid for nodeid in missing)
        elif summary.get("partial"):
            counts = summary.get("counts", {})
            merged.unknown_missing += max(int(counts.get("expected", 0)) - int(counts.get("finished", 0)), 0)
        merged.crashed.extend(summary.get("crashed") or [])
        if source.killed:
            merged.killed.append(str(source.directory))
        if summary.get("stop_reason"):
            merged.stop_reasons.append(f"{source.directory}: {summary['stop_reason']}")
    finished = {nodeid for _, nodeid in merged.entries}
    merged.unfinished -= finished
    merged.crashed = [crash for crash in merged.crashed if crash.get("id") not in finished]
    return merged


def _trials(sources: Sequence[Source]) -> int:
    """The merged run's trials: the largest any input ran, but never more than the most records any task
    (agent, scenario, variant) holds: pass^k is computed for every k up to it, and a number written in a
    file must not decide how much work that is."""
    claimed = max(source.fingerprint["trials"] for source in sources)
    per_task = Counter((agent_key(record), task_key(record)) for source in sources
                       for record in source.summary["records"])
    return min(claimed, max(per_task.values(), default=1))  # each at least 1 (a fingerprint's trials are)


def merged_run(sources: Sequence[Source]) -> dict[str, Any]:
    """The `run` part of the merged summary: the earliest start, the latest finish, the union of agents
    and users, the first source's options (with the largest trials, no shard), and where each part came
    from."""
    runs = [source.summary["run"] for source in sources]  # a summary's holds its fingerprint; a journal's, its start
    first: dict[str, Any] = runs[0]
    started = [run["started"] for run in runs if run.get("started")]
    finished = [run["finished"] for run in runs if run.get("finished")]
    return {
        **first,
        "started": min(started) if started else None,
        "finished": max(finished) if finished else None,
        "duration": round(sum(float(run.get("duration") or 0.0) for run in runs), 3),
        "exit_status": max(int(run.get("exit_status") or 0) for run in runs),
        "options": {**first.get("options", {}), "trials": _trials(sources), "shard": None},
        "agents": sorted({agent for source in sources for agent in source.agents}),
        "users": sorted({str(user) for source in sources for user in source.fingerprint["users"]}),
        "fingerprint": merged_fingerprint(sources),
        "workers": max(int(run.get("workers") or 0) for run in runs),
        "merged_from": [_merged_from(source) for source in sources],
    }


def _merged_from(source: Source) -> dict[str, Any]:
    """What one input brought to the merged run, as its `merged_from` entry."""
    run = source.summary["run"]
    return {"directory": str(source.directory), "started": run.get("started"), "finished": run.get("finished"),
            "partial": bool(source.summary.get("partial")), "records": len(source.summary["records"])}


def merged_fingerprint(sources: Sequence[Source]) -> dict[str, Any]:
    """The fingerprint of the run the inputs make together (check_compatible has compared their options)."""
    first = sources[0].fingerprint
    variants = [variant for source in sources for variant in source.fingerprint["variants"]]
    return {**first, "agents": sorted({agent for source in sources for agent in source.agents}),
            "users": sorted({str(user) for source in sources for user in source.fingerprint["users"]}),
            "variants": list(dict.fromkeys(variants)), "trials": _trials(sources),
            "scenarios": dict(sorted({path: digest for source in sources
                                      for path, digest in source.fingerprint["scenarios"].items()}.items()))}


def _baseline(sources: Sequence[Source]) -> dict[str, Any] | None:
    paths = {(source.summary.get("baseline") or {}).get("path") for source in sources} - {None}
    return {"path": paths.pop()} if len(paths) == 1 else None


class _Contexts:
    """Each scenario's goal, knowledge and reference dialogue for its pages, read from the scenario file
    when it is found under `root` (the directory pytest ran in); pages of the others go without. A
    record's path is data: one leading out of `root` is never read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[str, PageContext | None] = {}

    def __call__(self, scenario_path: str) -> PageContext | None:
        if scenario_path not in self.cache:
            self.cache[scenario_path] = self._read(scenario_path)
        return self.cache[scenario_path]

    def _read(self, scenario_path: str) -> PageContext | None:
        from pytest_toolsandbox.report.pages.trajectory_html import scenario_context
        from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario

        path = inside(self.root, scenario_path)
        if path is None:
            return None
        try:
            context = scenario_context(load_scenario(path))
        except (ScenarioError, OSError):
            return None
        return PageContext(context["goal"], context["knowledge"], tuple(context["reference"]))

    @property
    def missing(self) -> list[str]:
        return sorted(path for path, context in self.cache.items() if context is None)


@dataclass(frozen=True)
class MergeResult:
    summary: dict[str, Any] | None
    merged: Merged
    write_errors: WriteFailures | None
    scenarios_missing: list[str]
    input_errors: list[str] = field(default_factory=list)
    """Trajectory files of the inputs that could not be read or are malformed (one line each)."""


MAX_TRAJECTORY_BYTES = 256 << 20
"""Largest trajectory file merge reads (a run's own are a few hundred KB, capped by --max-message-chars)."""


def read_trajectory(directory: Path, relative: str) -> str:
    """The text of an input's trajectory file, validated as a trajectory; MergeError (one line naming the
    file) when it leads out of `directory`, cannot be read, or is not a trajectory."""
    from pytest_toolsandbox.world.trajectory import Trajectory

    path = inside(directory, relative)
    if path is None:
        raise MergeError(f"{directory / relative}: leads out of {directory} (`..` or a symlink); not copied")
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_TRAJECTORY_BYTES + 1)
        if len(data) > MAX_TRAJECTORY_BYTES:
            raise MergeError(f"{path}: larger than {MAX_TRAJECTORY_BYTES >> 20} MiB; not a trajectory this "
                             "plugin writes")
        text = data.decode()  # UTF-8, whatever the locale
        Trajectory.from_json(text)
    except OSError as error:
        raise MergeError(f"{path}: cannot read the trajectory: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise MergeError(f"{path}: not a trajectory: {error}") from None
    except ValidationError as error:
        first = error.errors()[0]
        name = ".".join(str(part) for part in first["loc"])
        raise MergeError(f"{path}: not a trajectory: field {name or '(top level)'}: {first['msg']}") from None
    return text


def write_merged(sources: Sequence[Source], out: Path, prefer_latest: bool, root: Path) -> MergeResult:
    """Merge `sources` into `out` (summary.json, records.jsonl, the site, trajectories and their pages);
    nothing is written when there are conflicts. A trajectory that cannot be copied leaves its record
    without one and is reported in `input_errors`."""
    from pytest_toolsandbox.report.writing.collector import RunCollector

    merged = merge_sources(sources, prefer_latest)
    if merged.conflicts:
        return MergeResult(None, merged, None, [])
    collector = RunCollector(out, _trials(sources))
    collector.start_journal({"fingerprint": merged_fingerprint(sources), "merged": True})
    entries = sorted(merged.entries.values(), key=lambda entry: (entry.record["id"], agent_key(entry.record)))
    every_id = [entry.record["id"] for entry in entries] + sorted(merged.unfinished)
    collector.expect(len(every_id) + merged.unknown_missing, every_id)
    contexts = _Contexts(root)
    input_errors = []
    for entry in entries:
        record, trajectory_json, slug = entry.record, None, None
        if entry.trajectory is not None:
            try:
                trajectory_json = read_trajectory(entry.source.directory, entry.trajectory)
                slug = trajectory_slug(record["path"], param_id(record["id"]))
            except MergeError as error:
                input_errors.append(str(error))
        # one phase that carries the record and ends the item (its journal line, its page once its neighbours are in)
        collector.add_phase(record["id"], "teardown", False, float(record.get("duration") or 0.0), record.get("worker"),
                            record, trajectory_json, slug, contexts(record["path"]))
    collector.crashed = list(merged.crashed)
    if (merged.unfinished or merged.unknown_missing) and merged.stop_reasons:
        collector.stop_reason = "; ".join(merged.stop_reasons)
    summary = collector.finish(merged_run(sources), interrupted=bool(merged.killed), baseline=_baseline(sources))
    return MergeResult(summary, merged, collector.write_errors, contexts.missing, input_errors)
