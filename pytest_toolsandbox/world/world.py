"""The world an agent acts on: polars tables with a snapshot per message index, and the message log.

Snapshot rule (as in the reference): a change made while the last message has index i is stored as
the snapshot with index i + 1, the index the reply will get. `snapshot(table, k)` returns the most
recent snapshot with index ≤ k, so any past state can be read back for scoring.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

import polars as pl

from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.ids import IdGenerator
from pytest_toolsandbox.world.messages import Message, Role
from pytest_toolsandbox.world.tables import WORLD_TABLES, Table


class World:
    """Execution context of one episode. Frames are immutable, so copies share them cheaply."""

    def __init__(self, tables: dict[Table, pl.DataFrame], clock: FrozenClock, ids: IdGenerator) -> None:
        self.clock = clock
        self.ids = ids
        self.messages: list[Message] = []
        self.active = True
        self._history: dict[Table, list[tuple[int, pl.DataFrame]]] = {
            table: [(0, tables[table])] for table in WORLD_TABLES
        }

    # -- tables ---------------------------------------------------------------------------------
    def table(self, table: Table) -> pl.DataFrame:
        """The current state of a table."""
        return self._history[table][-1][1]

    def write(self, table: Table, frame: pl.DataFrame) -> None:
        """Replace a table's current state; stored at the index the next message will get."""
        index = len(self.messages)
        history = self._history[table]
        if history[-1][0] == index:
            history[-1] = (index, frame)
        else:
            history.append((index, frame))

    def snapshot(self, table: Table, index: int) -> pl.DataFrame:
        """The state of `table` as it was at message `index` (latest snapshot with index ≤ it)."""
        history = self._history[table]
        position = bisect.bisect_right([entry[0] for entry in history], index) - 1
        return history[max(position, 0)][1]

    def history(self, table: Table) -> list[tuple[int, pl.DataFrame]]:
        """All stored snapshots of a table as (message index, frame), oldest first."""
        return list(self._history[table])

    def restore_history(self, table: Table, history: Iterable[tuple[int, pl.DataFrame]]) -> None:
        """Install a snapshot history (used when loading a trajectory back)."""
        self._history[table] = list(history)

    # -- messages -------------------------------------------------------------------------------
    def post(self, **fields: Any) -> Message:
        """Append a message to the log; index and `conversation_active` are assigned here."""
        fields.setdefault("conversation_active", self.active)
        message = Message(index=len(self.messages), **fields)
        self.messages.append(message)
        return message

    def end_conversation(self) -> None:
        """Mark the conversation over; the next message posted carries `conversation_active=False`."""
        if not self.active:
            raise ValueError("Conversation already ended")
        self.active = False

    def visible_messages(self, role: Role) -> list[Message]:
        """What `role` is allowed to read."""
        return [message for message in self.messages if message.visible_for(role)]

    # -- copies ---------------------------------------------------------------------------------
    def fork(self) -> World:
        """An independent copy for trial executions (parallel-call ordering checks)."""
        twin = World.__new__(World)
        twin.clock = self.clock
        twin.ids = IdGenerator(self.ids.seed)
        twin.ids.restore(self.ids.state())
        twin.messages = list(self.messages)
        twin.active = self.active
        twin._history = {table: list(history) for table, history in self._history.items()}
        return twin
