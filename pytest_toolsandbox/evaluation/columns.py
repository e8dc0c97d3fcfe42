"""Column similarities: how well each cell of a column matches one target value, in [0, 1].

Every measure scores a whole column and returns a numpy array (one similarity per row), so a
constraint is scored against a snapshot — or against the entire message log — column by column
instead of cell by cell. A null cell never matches a required non-null value (the reference
implementation lets it pass in plain snapshot comparisons; see docs/scoring.md).

A measure is called with a polars Series (`measure(series, value)`) or, on the scorer's hot path,
with the column's cells as a Python list and its dtype (`measure.score(cells, dtype, value)`): world
tables hold a handful of rows, where one polars expression costs far more than a loop over the
cells. Both give the same results as the polars expressions they replace (null never equals a
value; NaN equals NaN, as in polars).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import polars as pl

from pytest_toolsandbox.evaluation.rouge import rouge_l
from pytest_toolsandbox.world.tables import Table


def _per_value(values: Sequence[Any], score: Callable[[Any], float]) -> np.ndarray:
    """Apply a Python scorer once per distinct value (null → 0) and spread the result over rows (table
    cells are scalars: text, numbers, booleans)."""
    cache: dict[Any, float] = {}
    out = np.zeros(len(values))
    for row, value in enumerate(values):
        if value is None:
            continue
        if value not in cache:
            cache[value] = score(value)
        out[row] = cache[value]
    return out


def canonical(value: Any) -> Any:
    """Nested values compare as canonical JSON; scalars as themselves."""
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value


def values_close(actual: Any, expected: Any, tolerance: float) -> bool:
    """Numbers within `tolerance`; booleans only equal booleans; anything else must be equal."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(actual, int | float) and isinstance(expected, int | float):
        return abs(actual - expected) <= tolerance
    return bool(actual == expected)


def compatible(dtype: pl.DataType, value: Any) -> bool:
    """Whether a target value has the column's type (no silent casts: "1" is not 1)."""
    if isinstance(value, bool):
        return dtype == pl.Boolean
    if isinstance(value, int | float):
        return dtype.is_numeric()
    if isinstance(value, str):
        return dtype == pl.String
    return False


def _flags(flags: Iterable[bool]) -> np.ndarray:
    return np.fromiter(flags, dtype=float)


def _nulls(cells: Sequence[Any]) -> list[bool]:
    return [cell is None for cell in cells]


class _Measure:
    """`measure(series, value)` for a polars Series; subclasses implement `score` on plain cells.

    Most measures are `binary`: a cell matches or not. They implement `hits` (one bool per cell),
    which lets a row comparison skip the numpy work for them and score free text only in the rows
    whose other columns match."""

    binary: ClassVar[bool] = True

    def __call__(self, series: pl.Series, value: Any) -> np.ndarray:
        return self.score(series.to_list(), series.dtype, value)

    def score(self, cells: Sequence[Any], dtype: pl.DataType, value: Any) -> np.ndarray:
        return _flags(self.hits(cells, dtype, value))

    def hits(self, cells: Sequence[Any], dtype: pl.DataType, value: Any) -> list[bool]:
        raise NotImplementedError


@dataclass(frozen=True)
class Exact(_Measure):
    """Equal value of the same type; a null target requires a null cell, a non-null one never matches null."""

    def hits(self, cells: Sequence[Any], dtype: pl.DataType, value: Any) -> list[bool]:
        if value is None:
            return _nulls(cells)
        if not compatible(dtype, value):
            return [False] * len(cells)
        if isinstance(value, float) and value != value:  # polars compares NaN equal to NaN
            return [isinstance(cell, float) and cell != cell for cell in cells]
        return [cell is not None and cell == value for cell in cells]


@dataclass(frozen=True)
class Rouge(_Measure):
    """ROUGE-L F with stemming, for free text."""

    binary: ClassVar[bool] = False

    def score(self, cells: Sequence[Any], dtype: pl.DataType, value: Any) -> np.ndarray:
        if value is None:
            return _flags(_nulls(cells))
        return _per_value(cells, lambda cell: rouge_l(str(value), str(cell)))


@dataclass(frozen=True)
class Contains(_Measure):
    """Case-sensitive substring."""

    def hits(self, cells: Sequence[Any], dtype: pl.DataType, value: Any) -> list[bool]:
        if value is None:
            return _nulls(cells)
        if dtype == pl.String:
            return [cell is not None and str(value) in cell for cell in cells]
        series = pl.Series(cells, dtype=dtype)  # polars' own spelling of numbers and booleans as text
        return series.cast(pl.String).str.contains(str(value), literal=True).fill_null(False).to_list()


@dataclass(frozen=True)
class Close(_Measure):
    """|cell − value| ≤ tolerance, for numeric columns (a scenario naming `close` for another column is
    refused when it loads)."""

    tolerance: float

    def hits(self, cells: Sequence[Any], dtype: pl.DataType, value: Any) -> list[bool]:
        if value is None:
            return _nulls(cells)
        target = float(value)
        return [cell is not None and abs(float(cell) - target) <= self.tolerance for cell in cells]


@dataclass(frozen=True)
class Always(_Measure):
    """Always 1: the column is ignored."""

    def hits(self, cells: Sequence[Any], dtype: pl.DataType, value: Any) -> list[bool]:
        return [True] * len(cells)


Alternatives = tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]


def freeze_call(tool: str, arguments: dict[str, Any]) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """A hashable (tool, sorted arguments) pair; nested values are kept as canonical JSON."""
    return tool, tuple(sorted((name, canonical(value)) for name, value in arguments.items()))


@lru_cache(maxsize=1 << 14)
def _trace(text: str) -> dict[str, Any]:
    return json.loads(text)


@dataclass(frozen=True)
class TraceMatch(_Measure):
    """A tool trace that calls one of the expected tools with the listed arguments.

    Only the listed arguments are compared (extra arguments are ignored; an empty list checks the
    tool name only); numbers may differ by the per-argument tolerance. The cells are the canonical
    JSON traces of the message log; the target value is a tuple of frozen alternatives.
    """

    tolerances: tuple[tuple[str, float], ...] = ()

    def matches(self, trace: dict[str, Any], alternatives: Alternatives) -> bool:
        tolerance = dict(self.tolerances)
        arguments = trace["arguments"]
        for tool, expected in alternatives:
            if trace["tool"] != tool:
                continue
            if all(name in arguments and values_close(canonical(arguments[name]), value, tolerance.get(name, 0.0))
                   for name, value in expected):
                return True
        return False

    def hits(self, cells: Sequence[Any], dtype: pl.DataType, value: Any) -> list[bool]:
        seen: dict[str, bool] = {}
        out = []
        for cell in cells:
            if cell is not None and cell not in seen:
                seen[cell] = self.matches(_trace(cell), value)
            out.append(cell is not None and seen[cell])
        return out


ColumnMeasure = Exact | Rouge | Contains | Close | Always | TraceMatch

_TEXT_COLUMNS: dict[Table, frozenset[str]] = {
    Table.SANDBOX: frozenset({"content"}),
    Table.CONTACTS: frozenset({"relationship"}),
    Table.MESSAGING: frozenset({"content"}),
    Table.REMINDERS: frozenset({"content"}),
}


def default_measure(table: Table, column: str) -> ColumnMeasure:
    """The reference's defaults: ROUGE-L for free text, exact otherwise (of the message log only `content`
    is measured by default: its tool traces get `TraceMatch` where call constraints are built, constraints.py)."""
    return Rouge() if column in _TEXT_COLUMNS.get(table, frozenset()) else Exact()


def measure_from_name(name: str) -> ColumnMeasure:
    """A measure named in a scenario file (`exact`, `rouge`, `contains`, `any`)."""
    measures: dict[str, ColumnMeasure] = {"exact": Exact(), "rouge": Rouge(), "contains": Contains(), "any": Always()}
    return measures[name]
