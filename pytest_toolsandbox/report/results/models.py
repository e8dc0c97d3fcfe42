"""Which model each model spec of a run meant, as the summary, the terminal and the HTML report show it.

An alias (`claude`) names a model chosen from the installed SDK's data, an item replayed from a cassette
plays the model pinned in it (`recording/pins.py`), and the API answers with its own snapshot id (the
`model` field of each response): all three are kept, so a reader sees what really answered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_toolsandbox.roles.model_spec import ModelSettings

Record = Mapping[str, Any]


def models_summary(models: Mapping[str, ModelSettings], records: Sequence[Record], user: str) -> dict[str, Any]:
    """spec → {"model": what it names now, "played": models its items sent, "answered": snapshots that replied}."""
    summary = {}
    for spec, settings in models.items():
        played: set[str] = set()
        answered: set[str] = set()
        for record in records:
            for role in ("agent", "user"):
                if (record.get("agent_spec") if role == "agent" else user) != spec:
                    continue
                if isinstance(model := record.get(f"{role}_model"), str):
                    played.add(f"{settings.provider}:{model}")
                if isinstance(snapshot := record.get(f"{role}_answered_model"), str):
                    answered.add(snapshot)
        summary[spec] = {"model": settings.label, "played": sorted(played), "answered": sorted(answered)}
    return summary


def models_text(models: Mapping[str, Any] | None) -> str:
    """One line: `claude = anthropic:claude-sonnet-5-5 (answered by claude-sonnet-5-5-20261101)`."""
    return "; ".join(_one(spec, entry) for spec, entry in (models or {}).items() if isinstance(entry, Mapping))


def _one(spec: str, entry: Mapping[str, Any]) -> str:
    named = str(entry.get("model"))
    text = spec if spec == named else f"{spec} = {named}"
    others = [model for model in _strings(entry.get("played")) if model != named]
    if others:
        text += f" (cassettes pinned to {', '.join(others)})"
    answered = _strings(entry.get("answered"))
    if answered:
        text += f", answered by {', '.join(answered)}"
    return text


def _strings(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, Iterable) and not isinstance(value, str) else []
