"""Per-scenario work done once per process, looked up by the scenario's content.

Every item of a scenario (variants, trials) is scored against the same milestones, reference
dialogue and expected calls. Scoring computes the scenario's content key (its JSON) once per item
and finds those here; keying by content rather than by object keeps a scenario that was changed in
place from reusing stale work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

Value = TypeVar("Value")


class ContentCache(Generic[Value]):
    """Values by content key, at most `kept` of them (then it starts afresh). One dictionary
    lookup per use, so items scored from several threads at once at worst compute a value twice."""

    def __init__(self, kept: int = 1024) -> None:
        self.kept = kept
        self._values: dict[str, Value] = {}

    def get(self, key: str, compute: Callable[[], Value]) -> Value:
        value = self._values.get(key)
        if value is None:
            value = compute()
            if len(self._values) >= self.kept:
                self._values.clear()
            self._values[key] = value
        return value
