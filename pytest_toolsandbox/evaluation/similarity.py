"""Constraint similarities at every position (and every reference position), computed once.

A constraint without a reference yields a vector over positions; one measured against earlier
milestones yields one more axis per milestone (own position × reference position, or × the position
of each `fill_from` source). World constraints are evaluated per
pair of table versions and message constraints for the whole log at once, so the matcher's tables
cost a few dozen comparisons instead of one per cell.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from pytest_toolsandbox.evaluation.columns import freeze_call
from pytest_toolsandbox.evaluation.constraints import INITIAL, Constraint
from pytest_toolsandbox.evaluation.memo import ContentCache
from pytest_toolsandbox.evaluation.snapshots import (
    addition_similarity,
    removal_similarity,
    row_similarities,
    snapshot_similarity,
    update_similarity,
)
from pytest_toolsandbox.evaluation.state import EpisodeState
from pytest_toolsandbox.world.tables import Table

_BY_CONTENT: ContentCache[float] = ContentCache(kept=1 << 13)
"""World constraint similarities by (constraint, table content[, reference table content])."""

_AGAINST_REFERENCE = {"addition": addition_similarity, "removal": removal_similarity, "update": update_similarity}


def extract(trace: dict[str, Any], path: str) -> Any:
    """The value at `result`, `result.<key>…` or `arguments.<name>` of a trace (KeyError if absent)."""
    head, *keys = path.split(".")
    value = trace["result"] if head == "result" else trace["arguments"]
    for key in keys:
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def filled_rows(constraint: Constraint, traces: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The constraint's target with the fill values taken from one trace per source (one row per
    combination of formats); empty when a trace lacks a value."""
    try:
        values = [{name: extract(trace, path) for name, path in fill.values}
                  for fill, trace in zip(constraint.fills, traces, strict=True)]
    except (KeyError, IndexError, ValueError, TypeError):
        return []
    row = constraint.rows[0]
    column = constraint.call_column
    if column is not None:
        merged = {name: value for source in values for name, value in source.items()}
        alternatives = tuple(freeze_call(tool, {**dict(arguments), **merged}) for tool, arguments in row[column])
        return [{**row, column: alternatives}]
    rows = []
    for formats in itertools.product(*(fill.formats for fill in constraint.fills)):
        try:
            text = row["content"].format(**{name: fmt.format(value) for fmt, source in zip(formats, values, strict=True)
                                            for name, value in source.items()})
        except (KeyError, IndexError, ValueError, TypeError):
            continue  # this trace does not provide what the format needs
        rows.append({**row, "content": text})
    return rows


class ConstraintScorer:
    """Similarity tables of constraints on one trajectory, cached per constraint."""

    def __init__(self, state: EpisodeState) -> None:
        self.state = state
        self._cache: dict[Constraint, np.ndarray] = {}

    def values(self, constraint: Constraint) -> np.ndarray:
        """(size,) without a milestone dependency, else one more axis of `size` per milestone in
        `constraint.depends_on`: (own, reference) or (own, source 1, source 2, …)."""
        if constraint not in self._cache:
            compute = self._message if constraint.table is Table.SANDBOX else self._world
            self._cache[constraint] = compute(constraint)
        return self._cache[constraint]

    def _message(self, constraint: Constraint) -> np.ndarray:
        log = self.state.log
        if not constraint.fills:
            values = np.zeros(self.state.size)  # stays 0 where the log is shorter (no reply yet)
            values[:log.height] = row_similarities(log, constraint.rows, constraint.measures)[0]
            return values
        out = np.zeros((self.state.size,) * (1 + len(constraint.fills)))
        traces = [(position, json.loads(text)) for position, text in enumerate(log.columns["tool_trace"])
                  if text is not None]
        for combination in itertools.product(traces, repeat=len(constraint.fills)):
            rows = filled_rows(constraint, [trace for _, trace in combination])
            if rows:
                at: tuple[Any, ...] = (slice(None), *(position for position, _ in combination))
                out[at] = row_similarities(log, rows, constraint.measures).max(axis=0)
        return out

    def _world(self, constraint: Constraint) -> np.ndarray:
        """Per position; each similarity is computed once per process for a given constraint and
        table content (every item of a scenario starts from the same world, and items of one
        scenario pass through many of the same versions)."""
        state, table = self.state, constraint.table
        frames, versions = state.frames(table), state.versions[table]
        if constraint.comparison == "snapshot":
            per_version = np.array([
                _BY_CONTENT.get((constraint, frame.content()),
                                functools.partial(snapshot_similarity, frame, constraint.rows, constraint.measures))
                for frame in frames])
            return per_version[versions]
        compare = _AGAINST_REFERENCE[constraint.comparison]

        def pair(own: int, reference: int) -> float:
            mine, theirs = frames[own], frames[reference]
            return _BY_CONTENT.get((constraint, mine.content(), theirs.content()),
                                   lambda: compare(mine, theirs, constraint.rows, constraint.measures))

        if constraint.reference == INITIAL:
            return np.array([pair(int(own), int(versions[0])) for own in versions])
        # The reference milestone precedes this one, so its version is never the later one.
        grid = np.array([[pair(own, reference) if reference <= own else 0.0 for reference in range(len(frames))]
                         for own in range(len(frames))])
        return grid[np.ix_(versions, versions)]
