"""World-table similarities (`evaluation/snapshots.py`, `evaluation/columns.py`): an addition scores only
when every earlier row is still there unchanged, and each measure a scenario can name compares as its
name says (found unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import json
import warnings

import polars as pl
import pytest

from pytest_toolsandbox.evaluation.columns import TraceMatch, canonical, freeze_call, measure_from_name
from pytest_toolsandbox.evaluation.rouge import rouge_l
from pytest_toolsandbox.evaluation.snapshots import (
    Cells,
    addition_similarity,
    removal_similarity,
    rows_not_in,
    snapshot_similarity,
)

MEASURES = {"name": measure_from_name("exact"), "note": measure_from_name("exact")}


def table(*rows: tuple[str, str]) -> pl.DataFrame:
    return pl.DataFrame([{"name": name, "note": note} for name, note in rows],
                        schema={"name": pl.String, "note": pl.String})


def test_an_addition_beside_a_changed_row_scores_nothing() -> None:
    """One row more and it is the target, but Ann's row changed: not "added Bob" (the count alone would say so)."""
    before = table(("ann", "friend"))
    target = [{"name": "bob", "note": "colleague"}]
    assert addition_similarity(table(("ann", "friend"), ("bob", "colleague")), before, target, MEASURES) == 1.0
    assert addition_similarity(table(("ann", "enemy"), ("bob", "colleague")), before, target, MEASURES) == 0.0
    assert removal_similarity(table(("ann", "enemy")), table(("ann", "friend"), ("bob", "colleague")), target,
                              MEASURES) == 0.0


@pytest.mark.parametrize(("name", "similarity"), [("exact", 0.0), ("contains", 1.0), ("any", 1.0)])
def test_each_named_measure_compares_as_its_name_says(name: str, similarity: float) -> None:
    """The note "old friend from school" against the target "friend": equal, contained, or not looked at."""
    measures = {"name": measure_from_name("exact"), "note": measure_from_name(name)}
    snapshot = table(("ann", "old friend from school"))
    assert snapshot_similarity(snapshot, [{"name": "ann", "note": "friend"}], measures) == similarity


def test_rouge_grades_the_words_in_common() -> None:
    measures = {"name": measure_from_name("exact"), "note": measure_from_name("rouge")}
    snapshot = table(("ann", "old friend from school"))
    assert 0.0 < snapshot_similarity(snapshot, [{"name": "ann", "note": "friend"}], measures) < 1.0
    assert snapshot_similarity(table(("ann", "blue")), [{"name": "ann", "note": "green"}], measures) == 0.0


def test_contains_reads_numbers_and_booleans_as_polars_writes_them() -> None:
    """Literal substrings of polars' spelling ("7.3" is no pattern: 7330.0 does not contain it); null never."""
    contains = measure_from_name("contains")
    assert contains.hits([37.3349, None, 7330.0], pl.Float64(), "37.33") == [True, False, False]
    assert contains.hits([7330.0, 17.3], pl.Float64(), "7.3") == [False, True]
    assert contains.hits([True, False, None], pl.Boolean(), "true") == [True, False, False]


def test_rows_equal_by_value_cancel_out_nan_included() -> None:
    """A row holding NaN cancels a row holding NaN; rows differing in one float do not cancel."""
    nan = float("nan")
    left = pl.DataFrame({"name": ["ann", "bob"], "lat": [nan, 1.5]})
    assert rows_not_in(left, pl.DataFrame({"name": ["ann", "bob"], "lat": [nan, 1.5]})).height == 0
    assert rows_not_in(left, pl.DataFrame({"name": ["ann", "bob"], "lat": [nan, 2.5]}))["name"].to_list() == ["bob"]
    assert rows_not_in(left, pl.DataFrame({"name": ["ann", "bob"], "lat": [0.0, 1.5]}))["name"].to_list() == ["ann"]


def test_rows_compare_by_column_name_whatever_the_column_order() -> None:
    left = Cells.of(pl.DataFrame({"name": ["ann", "bob"], "note": ["friend", "colleague"]}))
    right = Cells.of(pl.DataFrame({"note": ["colleague", "enemy"], "name": ["bob", "ann"]}))
    assert rows_not_in(left, right).rows() == [("ann", "friend")]
    assert rows_not_in(left, Cells.of(pl.DataFrame({"name": ["bob"], "note": ["colleague"]}))).rows() == [
        ("ann", "friend")]


def test_empty_tables_have_no_rows_left_over() -> None:
    empty = pl.DataFrame(schema={"name": pl.String})
    assert rows_not_in(empty, empty).height == 0


def test_a_row_that_cannot_match_scores_zero_without_a_warning() -> None:
    """log(0) is the expected "no match", not a numerical accident to print."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert snapshot_similarity(table(("ann", "friend")), [{"name": "bob", "note": "friend"}], {
            "name": measure_from_name("exact"), "note": measure_from_name("rouge")}) == 0.0
        assert snapshot_similarity(table(("ann", "friend")), [{"name": "ann", "note": "enemy"}], {
            "name": measure_from_name("exact"), "note": measure_from_name("rouge")}) == 0.0


def test_rouge_scores_every_text_cell_past_a_null_one() -> None:
    rouge = measure_from_name("rouge")
    assert rouge.score([None, "old friend", None, "old friend"], pl.String(), "old friend").tolist() == [
        0.0, 1.0, 0.0, 1.0]


def test_nested_call_arguments_compare_as_canonical_json() -> None:
    """Key order inside an argument does not matter; its values do."""
    assert canonical({"b": 1, "a": [2, {"d": 3, "c": 4}]}) == '{"a": [2, {"c": 4, "d": 3}], "b": 1}'
    assert canonical([1, 2]) == "[1, 2]" and canonical("x") == "x" and canonical(1.5) == 1.5
    trace = json.dumps({"tool": "t", "arguments": {"where": {"lon": 2, "lat": 1}}, "result": None})
    match = TraceMatch()
    assert match.score([trace], pl.String(), (freeze_call("t", {"where": {"lat": 1, "lon": 2}}),)).tolist() == [1.0]
    assert match.score([trace], pl.String(), (freeze_call("t", {"where": {"lat": 1, "lon": 3}}),)).tolist() == [0.0]


def test_a_call_argument_without_a_tolerance_must_be_equal() -> None:
    trace = json.dumps({"tool": "t", "arguments": {"n": 5.5}, "result": None})
    expected = (freeze_call("t", {"n": 5}),)
    assert TraceMatch().score([trace], pl.String(), expected).tolist() == [0.0]
    assert TraceMatch((("n", 0.5),)).score([trace], pl.String(), expected).tolist() == [1.0]


def test_a_rows_similarity_is_the_geometric_mean_of_its_columns() -> None:
    """One graded column is the row's similarity itself; beside an equal column it is its square root."""
    measures = {"name": measure_from_name("exact"), "note": measure_from_name("rouge")}
    snapshot = table(("ann", "old friend from school"))
    alone = snapshot_similarity(snapshot, [{"note": "friend"}], measures)
    assert alone == pytest.approx(rouge_l("friend", "old friend from school")) and 0.0 < alone < 1.0
    assert snapshot_similarity(snapshot, [{"name": "ann", "note": "friend"}], measures) == pytest.approx(alone ** 0.5)


def test_an_exact_nan_target_matches_only_nan_cells() -> None:
    exact = measure_from_name("exact")
    assert exact.hits([1.0, float("nan"), None, 2.5], pl.Float64, float("nan")) == [False, True, False, False]
