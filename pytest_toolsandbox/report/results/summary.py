"""summary.json, the run's source of truth: metadata, one record per item, aggregates.

Aggregates are computed per agent (per `--agent` spec; `names` lists the names its agents gave
themselves), for all items, per scenario category and per augmentation variant: mean similarity,
pass rate (score ≥ threshold), mean turn count, and pass^k when the run had several trials.
Infrastructure errors are counted, never scored as agent failures — except under the reference's rules
(evaluation/rules.py), where an errored item counts as similarity 0, a fail and its message cap in turns,
as the reference's runner records a crashed scenario. With a model user simulator,
`user_sim_checked` counts the episodes the simulator guard looked at and `user_sim_suspect` those it
flagged.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_toolsandbox.basics.jsondata import JsonDataError, loads, plain
from pytest_toolsandbox.basics.vocabulary import REFERENCE, SUMMARY_FILE
from pytest_toolsandbox.report.results.passk import pass_hat_ks
from pytest_toolsandbox.report.results.record import SCORED_OUTCOMES, Record, agent_key
from pytest_toolsandbox.report.results.usage import usage_totals
from pytest_toolsandbox.report.writing.files import write_atomic
from pytest_toolsandbox.scenario.models import CATEGORIES, DEFAULT_MAX_MESSAGES
from pytest_toolsandbox.tools.augment import VARIANTS

SUMMARY_FORMAT = 1
SUMMARY_NAME = SUMMARY_FILE


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def task_key(record: Record) -> str:
    """A task is one scenario in one variant; trials of it are repeated draws of the same task."""
    return f"{record['path']}::{record['variant']}"


def as_crashed(record: Record) -> Record:
    """An errored record as the reference's runner counts a crashed scenario: similarity 0, its message cap."""
    return {**record, "score": 0.0, "passed": False, "turn_count": record.get("max_messages") or DEFAULT_MAX_MESSAGES}


def group_stats(records: Sequence[Record], trials: int, rules: str = "ours") -> dict[str, Any]:
    """Mean similarity, pass rate, mean turns (and pass^k for k ≤ trials) of a group of records; under the
    reference's rules errored items count as crashed ones."""
    scored = [record for record in records if record["outcome"] in SCORED_OUTCOMES and record["score"] is not None]
    if rules == REFERENCE:
        scored += [as_crashed(record) for record in records if record["outcome"] == "error"]
    passes: dict[str, list[bool]] = {}
    for record in scored:
        passes.setdefault(task_key(record), []).append(bool(record["passed"]))
    stats: dict[str, Any] = {
        "items": len(records),
        "scored": len(scored),
        "errors": sum(record["outcome"] == "error" for record in records),
        "tasks": len({task_key(record) for record in records}),
        "mean_similarity": _mean([record["score"] for record in scored]),
        "pass_rate": _mean([float(bool(record["passed"])) for record in scored]),
        "mean_turns": _mean([record["turn_count"] for record in scored if record["turn_count"] is not None]),
        "usage": usage_totals(records),
        # the simulator guard runs for model user simulators only (they report a `model`)
        "user_sim_checked": sum(record.get("user_model") is not None for record in records),
        "user_sim_suspect": sum(bool(record.get("user_sim_suspect")) for record in records),
    }
    if trials > 1:
        stats["pass_k"] = pass_hat_ks(passes, range(1, trials + 1))
    return stats


def _ordered(names: Iterable[str], canonical: Sequence[str]) -> list[str]:
    present = set(names)
    return [name for name in canonical if name in present] + sorted(present - set(canonical))


def aggregate(records: Sequence[Record], trials: int, rules: str = "ours") -> dict[str, dict[str, Any]]:
    """Per agent spec: `names`, `all`, `categories` {category: stats} and `variants` {variant: stats}."""
    result: dict[str, dict[str, Any]] = {}
    for agent in sorted({agent_key(record) for record in records}):
        mine = [record for record in records if agent_key(record) == agent]
        categories = _ordered((c for record in mine for c in record["categories"]), CATEGORIES)
        variants = _ordered((record["variant"] for record in mine), list(VARIANTS))
        result[agent] = {
            "names": sorted({str(record["agent"]) for record in mine}),
            "all": group_stats(mine, trials, rules),
            "categories": {c: group_stats([r for r in mine if c in r["categories"]], trials, rules)
                           for c in categories},
            "variants": {v: group_stats([r for r in mine if r["variant"] == v], trials, rules) for v in variants},
        }
    return result


def outcome_counts(records: Iterable[Record]) -> dict[str, int]:
    counts = {name: 0 for name in ("passed", "failed", "error", "xfailed", "xpassed", "skipped")}
    for record in records:
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    return counts


def build_summary(
    run: dict[str, Any],
    records: Sequence[Record],
    trials: int,
    expected: int,
    partial: bool,
    baseline: dict[str, Any] | None,
) -> dict[str, Any]:
    """The whole summary document; records sorted by id so it does not depend on scheduling."""
    ordered = sorted(records, key=lambda record: record["id"])
    return {
        "format": SUMMARY_FORMAT,
        "partial": partial,
        "run": run,
        "counts": {"expected": expected, "finished": len(ordered), **outcome_counts(ordered)},
        "baseline": baseline,
        "aggregates": aggregate(ordered, trials, run.get("options", {}).get("rules", "ours")),
        "usage": usage_totals(ordered),
        "records": ordered,
    }


def _record_line(record: Record) -> str:
    """One record as one line of JSON, by the C encoder (records are plain data when built; the
    conversion runs only for one that is not)."""
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return json.dumps(plain(record), ensure_ascii=False, allow_nan=False)


def dump_summary(summary: dict[str, Any]) -> str:
    """The summary as JSON text: the small top-level parts indented, each record on a line of its own.

    One line per record keeps the file readable and diffable (a record's changes are one line) while
    the records, nearly all of the file, are written by json's C encoder: indenting them forces its
    pure-Python encoder, which cost more per item than writing the item's trajectory."""
    parts = []
    for key, value in summary.items():
        if key == "records" and isinstance(value, list):
            text = "[\n  " + ",\n  ".join(map(_record_line, value)) + "\n ]" if value else "[]"
        else:  # JSON text holds no raw newline, so each one starts a line to indent one level deeper
            text = json.dumps(plain(value), indent=1, ensure_ascii=False, allow_nan=False).replace("\n", "\n ")
        parts.append(f" {json.dumps(str(key), ensure_ascii=False)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_summary(directory: Path, summary: dict[str, Any]) -> Path:
    path = directory / SUMMARY_NAME
    write_atomic(path, dump_summary(summary))
    return path


class SummaryError(ValueError):
    """A summary file that cannot be read (used by --baseline and compare)."""


class _RecordFields(BaseModel):
    """The record fields --baseline and compare read, with the types they need (others pass through)."""

    model_config = ConfigDict(extra="allow", strict=True)

    id: str
    path: str
    variant: str
    outcome: str
    agent: str | None = None
    agent_spec: str | None = None
    categories: list[str] = Field(default_factory=list)
    trial: int = 1
    score: Annotated[float, Field(allow_inf_nan=False)] | None = None
    passed: bool | None = None
    turn_count: int | None = None


class _RunFields(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    options: dict[str, Any] = Field(default_factory=dict)


def _checked(path: Path, data: Any) -> dict[str, Any]:
    """The summary when every field --baseline and compare read has the right type; else SummaryError
    naming the first bad field."""
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise SummaryError(f"{path}: not a pytest-toolsandbox summary (no 'records' list); "
                           "pass the summary.json written in the report directory")
    checks: list[tuple[str, type[BaseModel], Any]] = [
        ("run", _RunFields, data.get("run", {})),
        *((f"records[{k}]", _RecordFields, r) for k, r in enumerate(data["records"]))]
    for where, model, value in checks:
        try:
            model.model_validate(value)
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(part) for part in (where, *first["loc"]))
            raise SummaryError(f"{path}: field {field}: {first['msg']}; this file was not written by "
                               "pytest-toolsandbox or was edited — regenerate it with a pytest run") from None
    trials = data.get("run", {}).get("options", {}).get("trials", 1)
    if not isinstance(trials, int) or isinstance(trials, bool) or trials < 1:
        raise SummaryError(f"{path}: field run.options.trials: {trials!r} is not a positive integer; "
                           "regenerate the file with a pytest run")
    return data


def checked_summary(path: Path, data: Any) -> dict[str, Any]:
    """`data` (read from `path`: a summary, or records rebuilt from a journal) when every field a
    reader relies on has the right type; else SummaryError naming the file and the field."""
    return _checked(path, data)


def load_summary(path: str | Path) -> dict[str, Any]:
    """Read a summary.json, with an error that says which file, which field and why."""
    path = Path(path)
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SummaryError(f"{path}: cannot read the summary: {error.strerror}") from None
    except (JsonDataError, UnicodeDecodeError) as error:
        raise SummaryError(f"{path}: not a JSON summary: {error}") from None
    return _checked(path, data)
