"""A trajectory seen from the scorer: candidate positions, the message log, and table versions.

Milestones may map to any message from the user's first message to the last one (the reference
never matches earlier). World tables change at a handful of messages only, so every similarity of
a world constraint is computed once per table *version* and spread over the positions; guardrails
compare versions by content (a change that was undone counts as no change, as in the reference).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pytest_toolsandbox.evaluation.sandbox import SANDBOX_SCHEMA, sandbox_columns
from pytest_toolsandbox.evaluation.snapshots import Cells, row_key
from pytest_toolsandbox.scenario.world_builder import FIRST_USER_MESSAGE_INDEX
from pytest_toolsandbox.world.messages import Message
from pytest_toolsandbox.world.tables import SCHEMAS, WORLD_TABLES, Table
from pytest_toolsandbox.world.trajectory import TableSnapshot, Trajectory


class EpisodeState:
    """Positions 0..size-1 stand for message indices first..first+size-1.

    Table versions are turned into Cells only when a world constraint reads them (`frames`): most
    items constrain one table or none, while guardrails and the diagnosis only compare contents.
    """

    def __init__(self, trajectory: Trajectory) -> None:
        self.messages: list[Message] = list(trajectory.messages)
        self.first = FIRST_USER_MESSAGE_INDEX
        self.size = max(1, len(self.messages) - self.first)
        self.indices = np.arange(self.first, self.first + self.size)
        logged = self.messages[self.first:self.first + self.size]
        offered = {entry["name"]: entry["tool"] for entry in trajectory.tools}
        self.log = Cells(SANDBOX_SCHEMA, sandbox_columns(logged, offered), len(logged))
        self._snapshots = trajectory.snapshots
        self._frames: dict[Table, list[Cells]] = {}
        self.versions: dict[Table, np.ndarray] = {}
        self.contents: dict[Table, list[int]] = {}
        self._guard_keys: dict[tuple[Table, ...], np.ndarray] = {}
        for table in WORLD_TABLES:  # the snapshots as the trajectory holds them (validated rows)
            snapshots = trajectory.snapshots[str(table)]
            starts = [snapshot.index for snapshot in snapshots]
            self.versions[table] = np.searchsorted(starts, self.indices, side="right") - 1
            self.contents[table] = _content_ids(table, snapshots)

    def frames(self, table: Table) -> list[Cells]:
        """Every version of `table` as Cells, in order."""
        if table not in self._frames:
            self._frames[table] = [Cells.from_rows(SCHEMAS[table], snapshot.rows)
                                   for snapshot in self._snapshots[str(table)]]
        return self._frames[table]

    def message_index(self, position: int) -> int:
        return int(self.indices[position])

    def world_at(self, index: int) -> tuple[int, ...]:
        """Content ids of every world table at message `index`, one of the trajectory's from the user's
        first message on (equal tuples ⇔ equal world)."""
        position = index - self.first
        return tuple(self.contents[t][self.versions[t][position]] for t in WORLD_TABLES)

    def guard_keys(self, tables: Sequence[Table]) -> np.ndarray:
        """One integer per position; equal keys ⇔ every table in `tables` has equal content.
        Computed once per set of tables (the matcher, the outcomes and the report ask again)."""
        key = tuple(tables)
        if key not in self._guard_keys:
            worlds = zip(*([self.contents[t][v] for v in self.versions[t].tolist()] for t in tables), strict=True)
            seen: dict[tuple[int, ...], int] = {}
            keys = (np.array([seen.setdefault(world, len(seen)) for world in worlds], dtype=np.int64) if tables
                    else np.zeros(self.size, dtype=np.int64))
            keys.flags.writeable = False  # shared between callers
            self._guard_keys[key] = keys
        return self._guard_keys[key]


def _content_ids(table: Table, snapshots: Sequence[TableSnapshot]) -> list[int]:
    """Versions with equal content share an id (equal as polars' `DataFrame.equals` has it: row by
    row, null equal to null and NaN to NaN; a missing key is null, numbers compare by value)."""
    columns = list(SCHEMAS[table])
    contents: dict[int, list[tuple[object, ...]]] = {}

    def content(position: int) -> list[tuple[object, ...]]:  # only for versions that need comparing
        if position not in contents:
            contents[position] = [row_key(tuple(row.get(name) for name in columns))
                                  for row in snapshots[position].rows]
        return contents[position]

    ids: list[int] = []
    for position, snapshot in enumerate(snapshots):
        height = len(snapshot.rows)
        same = next((ids[earlier] for earlier in range(position)
                     if len(snapshots[earlier].rows) == height and content(earlier) == content(position)), None)
        ids.append(position if same is None else same)
    return ids
