"""Token and cost figures of records, when the agent or user reported them.

A record's `tokens` is `{"agent": {...} | None, "user": {...} | None}` (whatever counts the roles
expose through `usage`), and a run with priced models may add `cost`. Reports show tokens and cost
columns only when some record knows them, so offline runs are not cluttered with zeros.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_toolsandbox.report.record import Record

_TOTAL_KEYS = ("total_tokens", "total")


def _role_tokens(counts: Any) -> int | None:
    """One role's tokens: its total when it reports one, else the sum of its counts."""
    if not isinstance(counts, Mapping) or not counts:
        return None
    for key in _TOTAL_KEYS:
        if isinstance(counts.get(key), int | float):
            return int(counts[key])
    numbers = [value for value in counts.values() if isinstance(value, int | float) and not isinstance(value, bool)]
    return int(sum(numbers)) if numbers else None


def record_tokens(record: Record) -> int | None:
    """Agent plus user tokens of one item; None when neither role reported any."""
    tokens = record.get("tokens")
    if not isinstance(tokens, Mapping):
        return None
    found = [count for count in (_role_tokens(value) for value in tokens.values()) if count is not None]
    return sum(found) if found else None


def record_cost(record: Record) -> float | None:
    """The item's cost in dollars (a number, or numbers per role); None when unknown."""
    cost = record.get("cost")
    if isinstance(cost, Mapping):
        numbers = [value for value in cost.values() if isinstance(value, int | float) and not isinstance(value, bool)]
        return float(sum(numbers)) if numbers else None
    return float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None


def usage_known(records: Iterable[Record]) -> tuple[bool, bool]:
    """(tokens known for some record, cost known for some record)."""
    records = list(records)
    return (any(record_tokens(r) is not None for r in records), any(record_cost(r) is not None for r in records))


def mean_tokens(records: Iterable[Record]) -> float | None:
    counts = [count for count in map(record_tokens, records) if count is not None]
    return sum(counts) / len(counts) if counts else None


def total_cost(records: Iterable[Record]) -> float | None:
    costs = [cost for cost in map(record_cost, records) if cost is not None]
    return sum(costs) if costs else None
