"""Snapshot similarities: how well a table (or the rows that changed in it) matches target rows.

A target row matches a table row with the geometric mean of its column similarities; target rows
are paired with table rows by the Hungarian method (scipy's `linear_sum_assignment` on −log
similarities) and the snapshot similarity is the geometric mean over the pairs. Row counts must
agree — extra or missing rows make the similarity 0, as in the reference.

Tables come as polars DataFrames or as `Cells`, the same table as Python lists: the scorer compares
many pairs of tiny table versions, and at that size a polars expression or filter costs tens of
microseconds where a loop over a dozen cells costs one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import polars as pl
from scipy.optimize import linear_sum_assignment

from pytest_toolsandbox.evaluation.columns import ColumnMeasure

TargetRow = Mapping[str, Any]


class Cells:
    """A small table as one Python list per column, with the polars dtype of each column."""

    __slots__ = ("_content", "_keys", "columns", "dtypes", "height")

    def __init__(self, dtypes: Mapping[str, pl.DataType], columns: Mapping[str, list[Any]], height: int) -> None:
        self.dtypes = dtypes
        self.columns = columns
        self.height = height
        self._keys: list[tuple[Any, ...]] | None = None
        self._content: tuple[tuple[Any, ...], ...] | None = None

    def content(self) -> tuple[tuple[Any, ...], ...]:
        """Every row exactly as held, hashable: equal only when every cell is the same value of the
        same spelling (floats by repr, so -0.0 and 0.0 or two NaNs never pass for each other)."""
        if self._content is None:
            self._content = tuple(tuple(repr(cell) if type(cell) is float else cell for cell in row)
                                  for row in self.rows())
        return self._content

    def keys(self) -> list[tuple[Any, ...]]:
        """`row_key` of every row, computed once (a table version is compared with several others)."""
        if self._keys is None:
            self._keys = [row_key(row) for row in self.rows()]
        return self._keys

    @classmethod
    def of(cls, table: pl.DataFrame | Cells) -> Cells:
        if isinstance(table, Cells):
            return table
        return cls(dict(table.schema), {name: table.get_column(name).to_list() for name in table.columns},
                   table.height)

    @classmethod
    def from_rows(cls, schema: Mapping[str, pl.DataType], rows: Sequence[Mapping[str, Any]]) -> Cells:
        """The cells polars would hold for `pl.DataFrame(rows, schema=schema)` of valid rows (numbers in
        a Float64 column become floats; a missing key is null)."""
        columns = {}
        for name, dtype in schema.items():
            values = [row.get(name) for row in rows]
            if dtype is pl.Float64 or isinstance(dtype, pl.Float64):  # as `dtype == pl.Float64`, cheaper
                values = [None if value is None else float(value) for value in values]
            columns[name] = values
        return cls(schema, columns, len(rows))

    def rows(self) -> list[tuple[Any, ...]]:
        return list(zip(*self.columns.values(), strict=True))  # every table has columns

    def take(self, positions: Sequence[int]) -> Cells:
        return Cells(self.dtypes, {name: [values[at] for at in positions] for name, values in self.columns.items()},
                     len(positions))

Frame = TypeVar("Frame", pl.DataFrame, Cells)

_NAN = float("nan")
"""One NaN object, so that rows holding NaN compare equal (tuples compare items by identity first)."""


def row_similarities(table: pl.DataFrame | Cells, rows: Sequence[TargetRow],
                     measures: Mapping[str, ColumnMeasure]) -> np.ndarray:
    """Similarity of every target row (axis 0) with every table row (axis 1).

    A row's similarity is exp(mean of log column similarities). Binary columns add log 1 = 0 or
    log 0 = -inf, so they only decide which table rows can score at all; the logs of the other
    (free-text) columns are then summed in column order for those rows only, which gives the same
    floats as summing every column over every row (adding 0.0 changes nothing) while sparing the
    text comparisons of rows already at 0."""
    table = Cells.of(table)
    out = np.zeros((len(rows), table.height))
    for position, row in enumerate(rows):
        alive = list(range(table.height))
        graded = []
        for column, value in row.items():
            measure = measures[column]
            if not measure.binary:
                graded.append((column, value))
                continue
            hits = measure.hits(table.columns[column], table.dtypes[column], value)
            alive = [at for at in alive if hits[at]]
        if not alive:
            continue
        if not graded:
            out[position, alive] = 1.0  # exp(0 / n) is exactly 1
            continue
        logs = np.zeros(len(alive))
        for column, value in graded:
            cells = table.columns[column]
            with np.errstate(divide="ignore"):
                logs += np.log(measures[column].score([cells[at] for at in alive], table.dtypes[column], value))
        out[position, alive] = np.exp(logs / max(len(row), 1))
    return out


def snapshot_similarity(table: pl.DataFrame | Cells, rows: Sequence[TargetRow],
                        measures: Mapping[str, ColumnMeasure]) -> float:
    """Best one-to-one pairing of target rows with table rows; 0 when the row counts differ."""
    if table.height != len(rows):
        return 0.0
    if not rows:
        return 1.0  # nothing required of an empty table
    with np.errstate(divide="ignore"):
        cost = -np.log(row_similarities(table, rows, measures))
    try:
        targets, matched = linear_sum_assignment(cost)
    except ValueError:  # every pairing contains a zero similarity
        return 0.0
    return float(np.exp(-cost[targets, matched].mean()))


def row_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A hashable row whose equality is value equality (null equals null, NaN equals NaN)."""
    return tuple(_NAN if isinstance(value, float) and value != value else value for value in row)


def rows_not_in(left: Frame, right: Frame) -> Frame:
    """Multiset difference: rows of `left` left over after cancelling each equal row of `right` once
    (a DataFrame for DataFrames, Cells for Cells).

    World tables hold a handful of rows and scoring compares many pairs of table versions; counting
    row tuples is several times cheaper than a polars anti-join at that size.
    """
    if isinstance(left, pl.DataFrame):
        right_keys = [row_key(row) for row in right.select(left.columns).rows()]
        left_keys = [row_key(row) for row in left.rows()]
    else:
        right_cells = Cells.of(right)
        left_keys = left.keys()
        right_keys = (right_cells.keys() if list(right_cells.columns) == list(left.columns) else
                      [row_key(row) for row in zip(*(right_cells.columns[name] for name in left.columns), strict=True)])
    unmatched = Counter(right_keys)
    keep = []
    for key in left_keys:
        keep.append(unmatched[key] == 0)
        if unmatched[key]:
            unmatched[key] -= 1
    if isinstance(left, pl.DataFrame):
        return left.filter(pl.Series(keep, dtype=pl.Boolean))
    return left.take([position for position, kept in enumerate(keep) if kept])


def addition_similarity(table: Frame, reference: Frame, rows: Sequence[TargetRow],
                        measures: Mapping[str, ColumnMeasure]) -> float:
    """The rows added since `reference` match the target (0 if any reference row disappeared)."""
    if table.height - reference.height != len(rows):
        return 0.0  # either a reference row disappeared or the number of added rows is wrong
    if rows_not_in(reference, table).height:
        return 0.0
    return snapshot_similarity(rows_not_in(table, reference), rows, measures)


def removal_similarity(table: Frame, reference: Frame, rows: Sequence[TargetRow],
                       measures: Mapping[str, ColumnMeasure]) -> float:
    """The rows removed since `reference` match the target (0 if any row was added)."""
    return addition_similarity(reference, table, rows, measures)


def update_similarity(table: Frame, reference: Frame, rows: Sequence[TargetRow],
                      measures: Mapping[str, ColumnMeasure]) -> float:
    """The rows changed since `reference` (same row count) match the target, in their new form."""
    if table.height != reference.height:
        return 0.0
    return snapshot_similarity(rows_not_in(table, reference), rows, measures)
