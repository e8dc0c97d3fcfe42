"""A run's fingerprint: what its results depend on, so that results of different runs are never mixed.

`--resume DIR` and `merge` read records other runs wrote. Records of `--agent reference` taken into a
run of `--agent unhelpful`, of another threshold, or of a scenario file edited since, would be reported
as this run's. The fingerprint is kept in the journal's first line and in `summary.json`
(`run.fingerprint`):

    {"agents": [...], "users": [...], "variants": [...], "trials": 4,
     "options": {"threshold": null, "max_messages": null, "tool_backend": "offline", "prompts": "ours",
                 "model": {...}},
     "scenarios": {"scenarios/x.yaml": "<sha256 of the file, 16 hex digits>", ...}}

`options` are the settings that change an item's result; the others (concurrency, report directory,
rate limits, budget caps, a shard) do not. `scenarios` are the scenario files the run selected.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

RESULT_OPTIONS = ("threshold", "max_messages", "tool_backend", "prompts", "rules")
"""Settings (as in summary.json's run.options) that change what an item's record says."""
OPTION_DEFAULTS = {"rules": "ours"}
"""What a fingerprint written before an option existed means by its absence."""
MODEL_OPTIONS = ("base_url", "base_urls", "temperature", "max_tokens")
"""Model request settings that change what a model answers."""
RUN_FIELDS = ("agents", "users", "variants", "trials", "options")
"""The parts a resumed run must share with the run it completes."""
DIGEST_CHARACTERS = 16
MAX_SCENARIO_DIGEST_BYTES = 1 << 20
"""A scenario file is hashed only up to this size (the loader refuses larger files anyway)."""


def scenario_digest(path: Path) -> str | None:
    """The file's sha256 (its first 16 hex digits); None when it cannot be read."""
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_SCENARIO_DIGEST_BYTES + 1)
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest()[:DIGEST_CHARACTERS]


def scenario_digests(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """`{path: digest}` of the scenario files at `root / path` that can be read, sorted by path."""
    digests = {path: scenario_digest(root / path) for path in sorted(set(paths))}
    return {path: digest for path, digest in digests.items() if digest is not None}


def run_fingerprint(options: Mapping[str, Any], scenarios: Mapping[str, str]) -> dict[str, Any]:
    """The fingerprint of a run with `options` (summary.json's run.options) that selected `scenarios`."""
    model = options.get("model_options") or {}
    return json.loads(json.dumps({  # as read back from a file (tuples become lists), to compare with one
        "agents": list(options.get("agents") or []),
        "users": [options.get("user")],
        "variants": list(options.get("augment") or []),
        "trials": options.get("trials", 1),
        "options": {**{name: options.get(name) for name in RESULT_OPTIONS},
                    "model": {name: model.get(name) for name in MODEL_OPTIONS} if model else None},
        "scenarios": dict(sorted(scenarios.items())),
    }))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def option_differences(earlier: Mapping[str, Any], now: Mapping[str, Any], fields: Iterable[str]) -> list[str]:
    """`agents: ['reference'] then, ['unhelpful'] now` for each of `fields` (options one by one) that differs."""
    differences = []
    for name in fields:
        if name == "options":
            before, after = earlier.get("options") or {}, now.get("options") or {}
            before, after = {**OPTION_DEFAULTS, **before}, {**OPTION_DEFAULTS, **after}
            differences += [f"options.{key}: {_shown(before.get(key))} then, {_shown(after.get(key))} now"
                            for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]
        elif earlier.get(name) != now.get(name):
            differences.append(f"{name}: {_shown(earlier.get(name))} then, {_shown(now.get(name))} now")
    return differences


def changed_scenarios(earlier: Mapping[str, str], root: Path) -> tuple[list[str], list[str]]:
    """(scenario files of `earlier` that differ now, those that no longer exist), each sorted."""
    changed, gone = [], []
    for path, digest in sorted(earlier.items()):
        now = scenario_digest(root / path)
        if now is None:
            gone.append(path)
        elif now != digest:
            changed.append(path)
    return changed, gone


def belongs(record: Mapping[str, Any], fingerprint: Mapping[str, Any]) -> bool:
    """Whether `record` can be a result of the fingerprinted run: its scenario was selected, and its agent,
    variant and trial are among the run's."""
    trial = record.get("trial", 1)
    agent = record.get("agent_spec") or record.get("agent")
    return (record.get("path") in (fingerprint.get("scenarios") or {})
            and agent in (fingerprint.get("agents") or [])
            and record.get("variant") in (fingerprint.get("variants") or [])
            and isinstance(trial, int) and not isinstance(trial, bool) and 1 <= trial <= fingerprint.get("trials", 1))


class _Fingerprint(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    agents: list[str]
    users: list[str | None]
    variants: list[str]
    trials: int = Field(ge=1)
    options: dict[str, Any]
    scenarios: dict[str, str]


class FingerprintError(ValueError):
    """A fingerprint read from a file that is missing or not shaped like one."""


def checked_fingerprint(data: Any, where: str) -> dict[str, Any]:
    """`data` when it is a fingerprint with the right types; else FingerprintError naming `where` and the field."""
    if data is None:
        raise FingerprintError(f"{where}: no run fingerprint (written by an older pytest-toolsandbox, or not by it); "
                               "its records cannot be told apart from another run's — start a new run")
    try:
        _Fingerprint.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise FingerprintError(f"{where}: field fingerprint{'.' + field if field else ''}: {first['msg']}; "
                               "this file was not written by pytest-toolsandbox or was edited") from None
    return data
