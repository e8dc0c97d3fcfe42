"""Constraint similarities at every position (and every reference position), computed once.

A constraint without a reference yields a vector over positions; one measured against an earlier
milestone yields a matrix (own position × reference position). World constraints are evaluated per
pair of table versions and message constraints for the whole log at once, so the matcher's tables
cost a few dozen comparisons instead of one per cell.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from pytest_toolsandbox.evaluation.columns import freeze_call
from pytest_toolsandbox.evaluation.constraints import INITIAL, Constraint
from pytest_toolsandbox.evaluation.snapshots import (
    addition_similarity,
    removal_similarity,
    row_similarities,
    snapshot_similarity,
    update_similarity,
)
from pytest_toolsandbox.evaluation.state import EpisodeState
from pytest_toolsandbox.world.tables import Table

_AGAINST_REFERENCE = {"addition": addition_similarity, "removal": removal_similarity, "update": update_similarity}


def extract(trace: dict[str, Any], path: str) -> Any:
    """The value at `result`, `result.<key>…` or `arguments.<name>` of a trace (KeyError if absent)."""
    head, *keys = path.split(".")
    value = trace["result"] if head == "result" else trace["arguments"]
    for key in keys:
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def filled_rows(constraint: Constraint, trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The constraint's target with the fill values taken from `trace` (one row per format)."""
    fill = constraint.fill
    assert fill is not None
    try:
        values = {name: extract(trace, path) for name, path in fill.values}
    except (KeyError, IndexError, ValueError, TypeError):
        return []
    row = constraint.rows[0]
    if "tool_trace" in row:
        alternatives = tuple(freeze_call(tool, {**dict(arguments), **values}) for tool, arguments in row["tool_trace"])
        return [{**row, "tool_trace": alternatives}]
    rows = []
    for fmt in fill.formats:
        try:
            text = row["content"].format(**{name: fmt.format(value) for name, value in values.items()})
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
        """(size,) without a milestone dependency, (size, size) = (own, reference) with one."""
        if constraint not in self._cache:
            compute = self._message if constraint.table is Table.SANDBOX else self._world
            self._cache[constraint] = compute(constraint)
        return self._cache[constraint]

    def _message(self, constraint: Constraint) -> np.ndarray:
        log = self.state.log
        if constraint.fill is None:
            values = np.zeros(self.state.size)  # stays 0 where the log is shorter (no reply yet)
            values[:log.height] = row_similarities(log, constraint.rows, constraint.measures)[0]
            return values
        out = np.zeros((self.state.size, self.state.size))
        for position, text in enumerate(log["tool_trace"].to_list()):
            if text is None:
                continue
            rows = filled_rows(constraint, json.loads(text))
            if rows:
                out[:, position] = row_similarities(log, rows, constraint.measures).max(axis=0)
        return out

    def _world(self, constraint: Constraint) -> np.ndarray:
        state, table = self.state, constraint.table
        frames, versions = state.frames[table], state.versions[table]
        if constraint.comparison == "snapshot":
            per_version = np.array([snapshot_similarity(frame, constraint.rows, constraint.measures)
                                    for frame in frames])
            return per_version[versions]
        compare = _AGAINST_REFERENCE[constraint.comparison]
        pairs: dict[tuple[int, int], float] = {}

        def pair(own: int, reference: int) -> float:
            if (own, reference) not in pairs:
                pairs[own, reference] = compare(frames[own], frames[reference], constraint.rows, constraint.measures)
            return pairs[own, reference]

        if constraint.reference == INITIAL:
            return np.array([pair(int(own), int(versions[0])) for own in versions])
        # The reference milestone precedes this one, so its version is never the later one.
        grid = np.array([[pair(own, reference) if reference <= own else 0.0 for reference in range(len(frames))]
                         for own in range(len(frames))])
        return grid[np.ix_(versions, versions)]
