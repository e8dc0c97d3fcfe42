"""How a run's baseline gate reads in the terminal, the HTML index and the Markdown summary.

One wording everywhere: the counts of changes, which agents the baseline gated (and with whose
results), and which ran ungated, so a run with several agents never reads as "0 regressions" for an
agent the baseline did not look at.
"""

from __future__ import annotations

from typing import Any

CHANGES = ("regression", "improvement", "known_failure")


def plural(count: int, noun: str) -> str:
    """`1 regression`, `0 regressions`, `2 known failures`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def change_counts(baseline: dict[str, Any]) -> str:
    """`0 regressions, 23 improvements, 147 known failures` from summary.json's `baseline`."""
    return ", ".join(plural(len(baseline.get(change) or []), change.replace("_", " ")) for change in CHANGES)


def gate_note(baseline: dict[str, Any]) -> str | None:
    """Which agents the baseline gated and which it did not, when that is not simply "the agent it was
    recorded for"; None for the plain case (the baseline's one agent, gating itself)."""
    gates: dict[str, str] = baseline.get("gates") or {}
    ungated: list[str] = baseline.get("ungated") or []
    recorded = ", ".join(baseline.get("recorded_for") or []) or "no agent"
    parts = [f"{agent} gated by the results of {source}" for agent, source in gates.items() if agent != source]
    if ungated:
        parts.append(f"{', '.join(ungated)} ran ungated (the baseline holds results of {recorded} only)")
    return "; ".join(parts) or None
