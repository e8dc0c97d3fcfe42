"""Column similarities, edge cases included (nulls, tolerance boundaries, trace alternatives)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pytest_toolsandbox.evaluation.columns import (
    Always,
    Close,
    Contains,
    Exact,
    Rouge,
    TraceMatch,
    default_measure,
    freeze_call,
    values_close,
)
from pytest_toolsandbox.world.tables import Table


def series(*values: object, dtype: pl.DataType | None = None) -> pl.Series:
    return pl.Series("c", list(values), dtype=dtype)


def test_exact_match_and_the_null_deviation() -> None:
    cells = series("a", None, "b")
    assert Exact()(cells, "a").tolist() == [1.0, 0.0, 0.0]  # a null cell never matches a required value
    assert Exact()(cells, None).tolist() == [0.0, 1.0, 0.0]  # a null target requires a null cell
    assert Exact()(series(1.5, 2.0), 2).tolist() == [0.0, 1.0]
    assert Exact()(series(True, False, None), True).tolist() == [1.0, 0.0, 0.0]


def test_exact_match_never_casts_between_types() -> None:
    assert Exact()(series("1", "x"), 1).tolist() == [0.0, 0.0]
    assert Exact()(series(1.0, 0.0), True).tolist() == [0.0, 0.0]


def test_rouge_is_rouge_l_f_with_stemming() -> None:
    cells = series("the cats are running", None, "")
    values = Rouge()(cells, "the cat is running")
    assert values[0] == pytest.approx(0.75)  # stems: the cat (are/is differ) run → 3 of 4 tokens
    assert values[1:].tolist() == [0.0, 0.0]


def test_contains_is_a_case_sensitive_substring() -> None:
    assert Contains()(series("call search_lat_lon now", "SEARCH_LAT_LON", None), "search_lat_lon").tolist() == [
        1.0, 0.0, 0.0]


def test_a_null_target_requires_a_null_cell_for_every_measure() -> None:
    cells = series("None", None, "x")
    for measure in (Exact(), Rouge(), Contains()):
        assert measure(cells, None).tolist() == [0.0, 1.0, 0.0], measure
    assert Close(1.0)(series(None, 0.0), None).tolist() == [1.0, 0.0]


def test_close_includes_the_tolerance_boundary() -> None:
    assert Close(0.5)(series(1.0, 1.5, 1.50001, 0.5, None), 1.0).tolist() == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert Close(0.0)(series(2.0, 2.0000001), 2.0).tolist() == [1.0, 0.0]


def test_always_ignores_the_column() -> None:
    assert Always()(series(None, "x"), "anything").tolist() == [1.0, 1.0]


def test_values_close_keeps_booleans_apart_from_numbers() -> None:
    assert values_close(1, 1.0, 0.0)
    assert not values_close(True, 1, 0.0)
    assert values_close(10.0, 10.4, 0.5)
    assert not values_close("1", 1, 0.0)


def _trace(tool: str, **arguments: object) -> str:
    return json.dumps({"tool": tool, "arguments": arguments, "result": None}, sort_keys=True)


def test_trace_match_compares_only_the_listed_arguments_with_tolerances() -> None:
    cells = series(_trace("add_reminder", content="x", reminder_timestamp=100.0, latitude=None), None,
                   _trace("add_reminder", content="x", reminder_timestamp=102.0),
                   _trace("remove_reminder", reminder_id="r"))
    expected = (freeze_call("add_reminder", {"reminder_timestamp": 100}),)
    assert TraceMatch()(cells, expected).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert TraceMatch((("reminder_timestamp", 2.0),))(cells, expected).tolist() == [1.0, 0.0, 1.0, 0.0]


def test_trace_match_accepts_any_alternative_and_name_only_targets() -> None:
    cells = series(_trace("get_wifi_status"), _trace("search_contacts", name="Fredrik"))
    alternatives = (freeze_call("get_wifi_status", {}), freeze_call("search_contacts", {"name": "Fredrik"}))
    assert TraceMatch()(cells, alternatives).tolist() == [1.0, 1.0]


def test_trace_match_requires_the_argument_to_be_present() -> None:
    cells = series(_trace("search_holiday", holiday_name="Easter"))
    assert TraceMatch()(cells, (freeze_call("search_holiday", {"year": None}),)).tolist() == [0.0]


def test_defaults_follow_the_reference() -> None:
    assert isinstance(default_measure(Table.MESSAGING, "content"), Rouge)
    assert isinstance(default_measure(Table.CONTACTS, "relationship"), Rouge)
    assert isinstance(default_measure(Table.CONTACTS, "name"), Exact)
    assert isinstance(default_measure(Table.SETTINGS, "cellular"), Exact)
