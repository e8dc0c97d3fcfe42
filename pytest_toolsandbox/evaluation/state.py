"""A trajectory seen from the scorer: candidate positions, the message log, and table versions.

Milestones may map to any message from the user's first message to the last one (the reference
never matches earlier). World tables change at a handful of messages only, so every similarity of
a world constraint is computed once per table *version* and spread over the positions; guardrails
compare versions by content (a change that was undone counts as no change, as in the reference).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from pytest_toolsandbox.evaluation.sandbox import SANDBOX_SCHEMA, sandbox_rows
from pytest_toolsandbox.evaluation.snapshots import Cells, row_key
from pytest_toolsandbox.scenario.world_builder import FIRST_USER_MESSAGE_INDEX
from pytest_toolsandbox.world.messages import Message
from pytest_toolsandbox.world.tables import SCHEMAS, WORLD_TABLES, Table
from pytest_toolsandbox.world.trajectory import Trajectory


class EpisodeState:
    """Positions 0..size-1 stand for message indices first..first+size-1."""

    def __init__(self, trajectory: Trajectory) -> None:
        self.messages: list[Message] = list(trajectory.messages)
        self.first = FIRST_USER_MESSAGE_INDEX
        self.size = max(1, len(self.messages) - self.first)
        self.indices = np.arange(self.first, self.first + self.size)
        rows = sandbox_rows(self.messages, {entry["name"]: entry["tool"] for entry in trajectory.tools})
        self.log = Cells.from_rows(SANDBOX_SCHEMA, rows[self.first:self.first + self.size])
        self.frames: dict[Table, list[Cells]] = {}
        self.versions: dict[Table, np.ndarray] = {}
        self.contents: dict[Table, np.ndarray] = {}
        self._guard_keys: dict[tuple[Table, ...], np.ndarray] = {}
        for table in WORLD_TABLES:  # the snapshots as the trajectory holds them (validated rows)
            snapshots = trajectory.snapshots[str(table)]
            starts = [snapshot.index for snapshot in snapshots]
            self.frames[table] = [Cells.from_rows(SCHEMAS[table], snapshot.rows) for snapshot in snapshots]
            self.versions[table] = np.array([bisect.bisect_right(starts, int(i)) - 1 for i in self.indices])
            self.contents[table] = np.array(_content_ids(self.frames[table]))

    def message_index(self, position: int) -> int:
        return int(self.indices[position])

    def version(self, table: Table, position: int) -> int:
        return int(self.versions[table][position])

    def world_at(self, index: int) -> tuple[int, ...]:
        """Content ids of every world table at message `index` (equal tuples ⇔ equal world)."""
        position = min(max(index - self.first, 0), self.size - 1)
        return tuple(int(self.contents[t][self.versions[t][position]]) for t in WORLD_TABLES)

    def guard_keys(self, tables: Sequence[Table]) -> np.ndarray:
        """One integer per position; equal keys ⇔ every table in `tables` has equal content.
        Computed once per set of tables (the matcher, the outcomes and the report ask again)."""
        key = tuple(tables)
        if key not in self._guard_keys:
            if not tables:
                keys = np.zeros(self.size, dtype=np.int64)
            else:
                columns = np.stack([self.contents[t][self.versions[t]] for t in tables], axis=1)
                keys = np.unique(columns, axis=0, return_inverse=True)[1].reshape(-1)
            keys.flags.writeable = False  # shared between callers
            self._guard_keys[key] = keys
        return self._guard_keys[key]


def _content_ids(frames: Sequence[Cells]) -> list[int]:
    """Versions with equal content share an id (equal as polars' `DataFrame.equals` has it: row by
    row, null equal to null and NaN to NaN)."""
    contents: dict[int, list[tuple[object, ...]]] = {}

    def content(position: int) -> list[tuple[object, ...]]:  # only for versions that need comparing
        if position not in contents:
            contents[position] = [row_key(row) for row in frames[position].rows()]
        return contents[position]

    ids: list[int] = []
    for position, frame in enumerate(frames):
        same = next((ids[earlier] for earlier in range(position)
                     if frames[earlier].height == frame.height and content(earlier) == content(position)), None)
        ids.append(position if same is None else same)
    return ids
