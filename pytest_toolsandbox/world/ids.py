"""Seeded identifiers: ids created during an episode are a function of the scenario, never uuid4."""

from __future__ import annotations

import hashlib
import uuid


def stable_uuid(*parts: str) -> str:
    """A UUID-shaped id derived (sha256) from `parts`; equal inputs give equal ids everywhere."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


class IdGenerator:
    """Produces a reproducible sequence of ids for one episode, seeded by the scenario id."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.counter = 0

    def next_id(self, kind: str = "id") -> str:
        self.counter += 1
        return stable_uuid(self.seed, kind, str(self.counter))

    def state(self) -> tuple[str, int]:
        return self.seed, self.counter

    def restore(self, state: tuple[str, int]) -> None:
        self.seed, self.counter = state
