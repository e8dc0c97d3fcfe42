"""The baseline file: what the gate needs of a run, and nothing that changes when the agent did not.

A baseline is committed and reviewed, so its diff must show changed verdicts only: it holds the scoring
rules of its run (`--rules`, which change verdicts: a gate against results of other rules says so), and per
scored trial the agent, the task (scenario path and variant), the trial number, the categories, whether it passed
and its similarity (rounded, so float noise cannot show up), without timings, workers, pages, versions or
dates. Items are sorted and written one per line, so refreshing with nothing changed writes the same bytes
and one flipped verdict is a one-line diff.

`load_baseline_data` also reads a whole summary.json (the old baseline format, and any report's summary
given as `--baseline`); anything else fails with one line naming the file and the command that refreshes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_toolsandbox.basics.jsondata import JsonDataError, loads
from pytest_toolsandbox.report.results.record import SCORED_OUTCOMES, Record, agent_key
from pytest_toolsandbox.report.results.summary import SummaryError, load_summary

BASELINE_KIND = "pytest-toolsandbox baseline"
BASELINE_VERSION = 2
SIMILARITY_DIGITS = 6
ITEM_FIELDS = ("agent", "path", "variant", "trial", "categories", "passed", "similarity")
DEFAULT_RULES = "ours"
"""The rules of a baseline or summary that names none (written before `--rules` existed)."""


def refresh_command(path: str) -> str:
    """The one command that rewrites the baseline `path` from a run of the agents it holds."""
    return f"python -m pytest --update-baseline {path}"


def baseline_items(records: Sequence[Record]) -> list[dict[str, Any]]:
    """The scored trials as baseline items (errors and skips are no evidence about the agent), sorted."""
    items = [{"agent": agent_key(record), "path": record["path"], "variant": record["variant"],
              "trial": int(record.get("trial") or 1), "categories": sorted(record.get("categories") or []),
              "passed": bool(record["passed"]), "similarity": round(float(record["score"]), SIMILARITY_DIGITS)}
             for record in records if record.get("outcome") in SCORED_OUTCOMES and record.get("score") is not None]
    return sorted(items, key=lambda item: (item["agent"], item["path"], item["variant"], item["trial"]))


def summary_rules(summary: dict[str, Any]) -> str:
    """The `--rules` a summary's run was scored by."""
    rules = ((summary.get("run") or {}).get("options") or {}).get("rules")
    return rules if isinstance(rules, str) else DEFAULT_RULES


def dump_baseline(records: Sequence[Record], path: str, rules: str) -> str:
    """The baseline file's text: a short header (with the run's `--rules`), then one item per line."""
    items = baseline_items(records)
    header = {"format": BASELINE_KIND, "version": BASELINE_VERSION, "refresh": refresh_command(path),
              "rules": rules, "agents": sorted({item["agent"] for item in items})}
    head = ",\n".join(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in header.items())
    lines = ",\n".join(f"  {json.dumps(item, ensure_ascii=False)}" for item in items)
    return "{\n" + head + ',\n "items": [\n' + lines + ("\n" if items else "") + " ]\n}\n"


def _item_record(item: dict[str, Any]) -> Record:
    """A baseline item in the shape of a summary record, for the code that judges records."""
    return {"id": f"{item['path']}::{item['variant']}::t{item['trial']}", "agent": item["agent"],
            "agent_spec": item["agent"], "path": item["path"], "scenario": item["path"],
            "variant": item["variant"], "trial": item["trial"], "categories": list(item["categories"]),
            "outcome": "passed" if item["passed"] else "failed", "passed": item["passed"],
            "score": item["similarity"]}


def _checked_items(path: Path, data: dict[str, Any]) -> list[Record]:
    how = f"rewrite it with `{refresh_command(str(path))}`"
    if data.get("version") != BASELINE_VERSION or not isinstance(data.get("items"), list):
        raise SummaryError(f"{path}: baseline version {data.get('version')!r} is not {BASELINE_VERSION}; {how}")
    records = []
    for position, item in enumerate(data["items"]):
        if not isinstance(item, dict) or not set(ITEM_FIELDS) <= set(item) \
                or not isinstance(item["similarity"], int | float) or not isinstance(item["categories"], list):
            raise SummaryError(f"{path}: items[{position}] is not a baseline item (needs {', '.join(ITEM_FIELDS)}); "
                               f"{how}")
        records.append(_item_record(item))
    return records


def load_baseline_data(path: str | Path) -> dict[str, Any]:
    """`{"records": [...], "rules": …}` of a baseline file, or a whole summary.json with its `rules` added
    (raises SummaryError, one line)."""
    path = Path(path)
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except (OSError, JsonDataError, UnicodeDecodeError):
        data = None  # the summary's reader says what is wrong with the file
    if isinstance(data, dict) and data.get("format") == BASELINE_KIND:
        rules = data.get("rules", DEFAULT_RULES)
        if not isinstance(rules, str):
            raise SummaryError(f"{path}: field rules is not a text; rewrite it with `{refresh_command(str(path))}`")
        return {"records": _checked_items(path, data), "rules": rules}
    summary = load_summary(path)
    return {**summary, "rules": summary_rules(summary)}
