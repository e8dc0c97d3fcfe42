"""Row-level operations on world tables shared by the contact, messaging and reminder tools."""

from __future__ import annotations

from typing import Any

import polars as pl
from rapidfuzz import fuzz, process, utils

from pytest_toolsandbox.tools.checks import check_timestamp
from pytest_toolsandbox.tools.errors import DuplicateError, NoDataError
from pytest_toolsandbox.tools.spec import NotGiven
from pytest_toolsandbox.world.tables import PRIMARY_KEYS, Table, frame
from pytest_toolsandbox.world.world import World

FUZZY_LIMIT = 5


def given(**values: Any) -> dict[str, Any]:
    """The arguments the caller actually supplied."""
    return {name: value for name, value in values.items() if not isinstance(value, NotGiven)}


def append_row(world: World, table: Table, row: dict[str, Any]) -> None:
    world.write(table, pl.concat([world.table(table), frame(table, [row])], how="vertical"))


def find_one(world: World, table: Table, key: str) -> dict[str, Any]:
    """The unique row whose primary key is `key`."""
    column = PRIMARY_KEYS[table]
    rows = world.table(table).filter(pl.col(column) == key)
    if rows.height == 0:
        raise NoDataError(f"No {table} entry with {column}={key!r} found")
    if rows.height > 1:
        raise DuplicateError(f"More than one {table} entry with {column}={key!r} found")
    return rows.row(0, named=True)


def remove_row(world: World, table: Table, key: str) -> dict[str, Any]:
    row = find_one(world, table, key)
    world.write(table, world.table(table).filter(pl.col(PRIMARY_KEYS[table]) != key))
    return row


def replace_row(world: World, table: Table, key: str, changes: dict[str, Any]) -> None:
    """Modify a row; like the reference, the modified row moves to the end of the table."""
    row = remove_row(world, table, key)
    append_row(world, table, {**row, **changes})


def fuzzy_filter(rows: pl.DataFrame, column: str, query: str, cutoff: float) -> pl.DataFrame:
    """Rows whose `column` matches `query` (WRatio ≥ cutoff), best first, at most FUZZY_LIMIT."""
    choices = [value if value is not None else "" for value in rows[column].to_list()]
    matches = process.extract(query, choices, scorer=fuzz.WRatio, processor=utils.default_process,
                              score_cutoff=cutoff, limit=FUZZY_LIMIT)
    order = [position for _, _, position in sorted(matches, key=lambda match: (-match[1], match[2]))]
    return rows[order] if order else rows.clear()


def check_timestamp_bounds(arguments: dict[str, Any]) -> None:
    """Range-check every supplied `*_lowerbound` / `*_upperbound` search argument (timestamps)."""
    for name, value in given(**arguments).items():
        if name.endswith(("_lowerbound", "_upperbound")):
            check_timestamp(name, value)


def search_rows(rows: pl.DataFrame, arguments: dict[str, Any], fuzzy: dict[str, float]) -> list[dict[str, Any]]:
    """The rows matching every supplied criterion, applied in argument order.

    `fuzzy` maps approximately-matched columns to their WRatio cutoff; `<column>_lowerbound` and
    `<column>_upperbound` are inclusive bounds; every other criterion is an exact match.
    """
    criteria = given(**arguments)
    if not criteria:
        raise ValueError("No search criteria are given. At least one search criteria should be provided "
                         f"among {tuple(arguments)}")
    for name, value in criteria.items():
        if name in fuzzy:
            rows = fuzzy_filter(rows, name, value, fuzzy[name])
        elif name.endswith("_lowerbound"):
            rows = rows.filter(pl.col(name.removesuffix("_lowerbound")) >= value)
        elif name.endswith("_upperbound"):
            rows = rows.filter(pl.col(name.removesuffix("_upperbound")) <= value)
        elif value is None:
            rows = rows.filter(pl.col(name).is_null())
        else:
            rows = rows.filter(pl.col(name) == value)
    return rows.to_dicts()
