"""A finished episode as data: messages, tool traces and every world snapshot, to JSON and back.

The JSON is canonical (sorted keys, no insignificant whitespace), so two runs of the same scenario
with the same agent can be compared byte for byte. It is compact because every item of a run writes
one: without indentation `json` uses its C encoder (several times faster), and files are smaller; the
snapshots of unchanged tables, the bulk of most files, are serialised once per frame, not per item.
"""

from __future__ import annotations

import functools
import json
import weakref
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.ids import IdGenerator
from pytest_toolsandbox.world.messages import Message
from pytest_toolsandbox.world.tables import WORLD_TABLES, Table, frame
from pytest_toolsandbox.world.world import World

EndReason = Literal["user", "max_messages", "error", "crash"]
"""`crash`: under the reference's rules, a call its agent could not have made ended the episode
(evaluation/rules.py); `error`: a role raised."""

_TRUSTED_KEY = "toolsandbox_trusted"
TRUSTED = {_TRUSTED_KEY: True}
"""Validation context for trajectories whose snapshot rows come from real tables (see `_well_formed`)."""

MAX_TRAJECTORY_MESSAGES = 2500
"""Longest trajectory accepted (a live episode is capped at 1000 messages plus one turn's calls)."""


_ROWS: dict[int, tuple[weakref.ref[pl.DataFrame], list[dict[str, Any]]]] = {}


def _forget(cache: dict[int, Any], key: int, _: object) -> None:
    """A weak reference's callback: the object is gone, and so is what was cached for it."""
    cache.pop(key, None)


def _rows(data: pl.DataFrame) -> list[dict[str, Any]]:
    """`data.to_dicts()`, kept while the frame lives: every item of a scenario starts from the same
    shared initial frames, and most tables never change during an episode. Callers must not mutate
    the result (TableSnapshot validation copies it)."""
    key = id(data)
    entry = _ROWS.get(key)
    if entry is None or entry[0]() is not data:
        entry = (weakref.ref(data, functools.partial(_forget, _ROWS, key)), data.to_dicts())
        _ROWS[key] = entry
    return entry[1]


class TableSnapshot(BaseModel):
    model_config = ConfigDict(frozen=True)
    index: int
    rows: list[dict[str, Any]]


def _dumps(value: Any) -> str:
    """Canonical JSON (sorted keys, no insignificant whitespace), by json's C encoder."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


_FRAME_JSON: dict[int, tuple[weakref.ref[pl.DataFrame], str]] = {}
_SNAPSHOT_JSON: dict[int, tuple[weakref.ref[TableSnapshot], str]] = {}


def _frame_json(index: int, data: pl.DataFrame) -> str:
    """`_dumps` of a snapshot of `data`, kept while the frame lives: most snapshots of an episode are
    the shared initial frames of its scenario, the same for every item."""
    key = id(data)
    entry = _FRAME_JSON.get(key)
    if entry is None or entry[0]() is not data:
        text = _dumps(TableSnapshot.model_construct(index=0, rows=_rows(data)).model_dump(mode="json")["rows"])
        entry = (weakref.ref(data, functools.partial(_forget, _FRAME_JSON, key)), text)
        _FRAME_JSON[key] = entry
    return f'{{"index":{index},"rows":{entry[1]}}}'


def _remember_json(snapshot: TableSnapshot, text: str) -> TableSnapshot:
    """Note `snapshot`'s canonical JSON for `Trajectory.to_json` (for as long as the snapshot lives)."""
    key = id(snapshot)
    _SNAPSHOT_JSON[key] = (weakref.ref(snapshot, functools.partial(_forget, _SNAPSHOT_JSON, key)), text)
    return snapshot


def _snapshot_json(snapshot: TableSnapshot) -> str:
    entry = _SNAPSHOT_JSON.get(id(snapshot))
    if entry is not None and entry[0]() is snapshot:
        return entry[1]
    return _dumps(snapshot.model_dump(mode="json"))


class Trajectory(BaseModel):
    """Everything needed to score an episode offline, or to replay its agent."""

    model_config = ConfigDict(frozen=True)

    format: int = 1
    scenario: str
    scenario_path: str = ""
    variant: str = "base"
    agent: str
    user: str
    now: str
    timezone: str
    tools: list[dict[str, str]] = Field(default_factory=list)
    messages: list[Message]
    snapshots: dict[str, list[TableSnapshot]]
    ended_by: EndReason
    error: str | None = None

    @model_validator(mode="after")
    def _well_formed(self, info: ValidationInfo) -> Trajectory:
        """Scoring reads messages by index and tables by snapshot: reject layouts it would misread.

        With the validation context `TRUSTED` (a trajectory captured from a live world, or read back
        from the file this process wrote) the snapshot rows are not rebuilt as tables to prove they
        fit: they came from such tables, and rebuilding them is most of the cost of a trajectory."""
        for position, message in enumerate(self.messages):
            if message.index != position:
                raise ValueError(f"messages[{position}] has index {message.index}; indices must be 0, 1, 2, … "
                                 "in order")
        unknown = sorted(set(self.snapshots) - {str(table) for table in WORLD_TABLES})
        if unknown:
            raise ValueError(f"snapshots has unknown table(s) {unknown}; allowed: {[str(t) for t in WORLD_TABLES]}")
        missing = [str(table) for table in WORLD_TABLES if not self.snapshots.get(str(table))]
        if missing:
            raise ValueError(f"snapshots lacks the table(s) {missing}; every world table needs at least its "
                             "initial snapshot (index 0)")
        for name, snaps in self.snapshots.items():
            indices = [snap.index for snap in snaps]
            if indices[0] != 0 or any(later <= earlier for earlier, later in pairwise(indices)):
                raise ValueError(f"snapshots.{name} has indices {indices}; they must start at 0 and increase")
        if len(self.messages) > MAX_TRAJECTORY_MESSAGES:
            raise ValueError(f"messages has {len(self.messages)} entries; at most {MAX_TRAJECTORY_MESSAGES} can be "
                             "scored (scoring compares messages pairwise)")
        try:
            FrozenClock.at(self.now, self.timezone)
        except Exception as error:  # unknown zone (a KeyError), impossible date
            raise ValueError(f"now / timezone: {self.now!r} in {self.timezone!r} is not a valid local time "
                             f"({type(error).__name__}: {error}); use an ISO time and an IANA zone such as "
                             "'America/Los_Angeles'") from None
        if info.context is not None and info.context.get(_TRUSTED_KEY):
            return self
        for name, snaps in self.snapshots.items():
            for position, snap in enumerate(snaps):
                try:
                    frame(Table(name), snap.rows)
                except Exception as error:  # polars' own errors: the rows do not fit the table's columns
                    raise ValueError(f"snapshots.{name}[{position}].rows do not fit the {name} table "
                                     f"({type(error).__name__}: {str(error).splitlines()[0]})") from None
        return self

    @classmethod
    def capture(cls, world: World, **fields: Any) -> Trajectory:
        # Built without validation: an int index and the rows of a real frame (copied, the cache is shared)
        # are what validation would produce, at a fraction of the cost.
        snapshots = {str(table): [_remember_json(TableSnapshot.model_construct(index=index,
                                                                               rows=[dict(row) for row in _rows(data)]),
                                                 _frame_json(index, data))
                                  for index, data in world.history(table)] for table in WORLD_TABLES}
        now = world.clock.now.replace(tzinfo=None).isoformat()
        return cls.model_validate({"messages": list(world.messages), "snapshots": snapshots, "now": now,
                                   "timezone": world.clock.zone.key, **fields}, context=TRUSTED)

    def to_json(self) -> str:
        """Canonical JSON: the same bytes as `json.dumps(self.model_dump(mode="json"), sort_keys=True,
        separators=(",", ":"), ensure_ascii=False)`, assembled from parts so that snapshots captured
        from a live world reuse the text of their (shared, immutable) frames instead of being dumped
        again for every item: they are most of a trajectory. Snapshot rows must not be changed after
        capture (the model is frozen; its lists are not)."""
        parts = {key: _dumps(value) for key, value in self.model_dump(mode="json", exclude={"snapshots"}).items()}
        parts["snapshots"] = "{" + ",".join(f"{_dumps(name)}:[{','.join(map(_snapshot_json, snaps))}]"
                                            for name, snaps in sorted(self.snapshots.items())) + "}"
        return "{" + ",".join(f"{_dumps(key)}:{parts[key]}" for key in sorted(parts)) + "}\n"

    @classmethod
    def from_json(cls, text: str, trusted: bool = False) -> Trajectory:
        """`trusted`: the text is `to_json` of a trajectory this process validated (see `_well_formed`)."""
        return cls.model_validate_json(text, context=TRUSTED if trusted else None)

    @classmethod
    def load(cls, path: str | Path, trusted: bool = False) -> Trajectory:
        return cls.from_json(Path(path).read_text(encoding="utf-8"), trusted)

    def world(self) -> World:
        """The world as the episode left it, with its whole snapshot history."""
        clock = FrozenClock.at(self.now, self.timezone)
        history = {Table(name): [(snap.index, frame(Table(name), snap.rows)) for snap in snaps]
                   for name, snaps in self.snapshots.items()}
        world = World({table: history[table][0][1] for table in WORLD_TABLES}, clock, IdGenerator(self.scenario))
        for table in WORLD_TABLES:
            world.restore_history(table, history[table])
        world.messages = list(self.messages)
        world.active = self.messages[-1].conversation_active if self.messages else True
        return world
