"""Work done once per process, looked up by the content it depends on.

Every item of a scenario (variants, trials) is scored against the same milestones, reference
dialogue and expected calls, and its world tables pass through many of the same versions (the
initial one always). Scoring computes the scenario's content key (its JSON) once per item and finds
those here, and likewise a world constraint's similarity per table content; keying by content
rather than by object keeps a scenario that was changed in place from reusing stale work.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

Value = TypeVar("Value")


class ContentCache(Generic[Value]):
    """Values by content key, at most `kept` of them (then it starts afresh). One dictionary
    lookup per use, so items scored from several threads at once at worst compute a value twice."""

    def __init__(self, kept: int = 1024) -> None:
        self.kept = kept
        self._values: dict[Hashable, Value] = {}

    def get(self, key: Hashable, compute: Callable[[], Value]) -> Value:
        value = self._values.get(key)
        if value is None:
            value = compute()
            if len(self._values) >= self.kept:
                self._values.clear()
            self._values[key] = value
        return value

    def clear(self) -> None:
        """Forget every value. Mutation testing calls this before each test: a value computed by an
        earlier test would hide from mutmut which tests reach the code that computes it."""
        self._values.clear()
