"""Snapshot similarities: Hungarian pairing, geometric means, row-count rules and multiset changes."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolsandbox.evaluation.columns import Always, Close, Contains, Exact, Rouge
from pytest_toolsandbox.evaluation.snapshots import (
    Cells,
    addition_similarity,
    removal_similarity,
    row_similarities,
    rows_not_in,
    snapshot_similarity,
    update_similarity,
)

MEASURES = {"name": Exact(), "note": Rouge(), "n": Exact()}


def table(*rows: tuple[str | None, str | None, int | None]) -> pl.DataFrame:
    return pl.DataFrame([{"name": a, "note": b, "n": c} for a, b, c in rows],
                        schema={"name": pl.String, "note": pl.String, "n": pl.Int64})


def test_geometric_mean_over_columns() -> None:
    snapshot = table(("ann", "the cats are running", 1))
    target = [{"name": "ann", "note": "the cat is running", "n": 1}]
    assert snapshot_similarity(snapshot, target, MEASURES) == pytest.approx(0.75 ** (1 / 3))


def test_rows_are_paired_to_maximise_the_geometric_mean() -> None:
    snapshot = table(("bob", "x", 2), ("ann", "y", 1))
    target = [{"name": "ann", "n": 1}, {"name": "bob", "n": 2}]
    assert snapshot_similarity(snapshot, target, MEASURES) == 1.0
    assert row_similarities(snapshot, target, MEASURES).tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_geometric_mean_over_assigned_rows() -> None:
    snapshot = table(("ann", "a b c d", 1), ("bob", "a b", 2))
    target = [{"name": "ann", "note": "a b c d"}, {"name": "bob", "note": "a b c d"}]
    second = (1.0 * (2 * 1 * 0.5 / 1.5)) ** 0.5  # name 1, ROUGE-L F of "a b" vs "a b c d" = 2/3
    assert snapshot_similarity(snapshot, target, MEASURES) == pytest.approx((1.0 * second) ** 0.5)


def test_row_count_mismatch_scores_zero() -> None:
    snapshot = table(("ann", None, 1), ("bob", None, 2))
    assert snapshot_similarity(snapshot, [{"name": "ann"}], MEASURES) == 0.0


def test_empty_tables() -> None:
    empty = table()
    assert snapshot_similarity(empty, [], MEASURES) == 1.0
    assert snapshot_similarity(empty, [{"name": "ann"}], MEASURES) == 0.0


def test_a_zero_column_zeroes_the_pairing() -> None:
    snapshot = table(("ann", None, 1))
    assert snapshot_similarity(snapshot, [{"name": "ann", "note": "hello"}], MEASURES) == 0.0


def test_multiset_difference_counts_duplicates() -> None:
    before = table(("ann", None, 1))
    after = table(("ann", None, 1), ("ann", None, 1), ("bob", None, None))
    assert rows_not_in(after, before).rows() == [("ann", None, 1), ("bob", None, None)]
    assert rows_not_in(before, after).height == 0


def test_addition_compares_only_the_added_rows() -> None:
    before = table(("ann", None, 1))
    after = table(("ann", None, 1), ("bob", "new friend", 2))
    assert addition_similarity(after, before, [{"name": "bob", "n": 2}], MEASURES) == 1.0
    assert addition_similarity(after, before, [{"name": "bob"}, {"name": "cid"}], MEASURES) == 0.0
    assert addition_similarity(before, before, [], MEASURES) == 1.0


def test_addition_fails_when_a_reference_row_disappeared() -> None:
    before = table(("ann", None, 1), ("cid", None, 3))
    after = table(("ann", None, 1), ("bob", None, 2))
    assert addition_similarity(after, before, [{"name": "bob"}], MEASURES) == 0.0


def test_removal_compares_the_removed_rows() -> None:
    before = table(("ann", None, 1), ("bob", None, 2))
    after = table(("ann", None, 1))
    assert removal_similarity(after, before, [{"name": "bob"}], MEASURES) == 1.0
    assert removal_similarity(before, before, [{"name": "bob"}], MEASURES) == 0.0


def test_update_compares_the_changed_rows_in_their_new_form() -> None:
    before = table(("ann", None, 1), ("bob", None, 2))
    after = table(("bob", None, 2), ("ann", None, 5))  # modified row moved to the end, like the tools do
    assert update_similarity(after, before, [{"name": "ann", "n": 5}], MEASURES) == 1.0
    assert update_similarity(after, before, [{"name": "ann", "n": 1}], MEASURES) == 0.0
    assert update_similarity(table(("ann", None, 1)), before, [{"name": "ann"}], MEASURES) == 0.0


def _every_column_everywhere(snapshot: pl.DataFrame, rows: list[dict[str, object]],
                             measures: dict[str, object]) -> np.ndarray:
    """The definition: exp(mean over columns of log similarity), every column scored on every row."""
    out = np.ones((len(rows), snapshot.height))
    for position, row in enumerate(rows):
        logs = np.zeros(snapshot.height)
        for column, value in row.items():
            with np.errstate(divide="ignore"):
                logs += np.log(measures[column](snapshot.get_column(column), value))
        out[position] = np.exp(logs / max(len(row), 1))
    return out


WORDS = st.sampled_from(["the", "cat", "cats", "is", "running", "ran", "ann", "bob", "5", "é"])
TEXTS = st.none() | st.lists(WORDS, max_size=5).map(" ".join)
NAMES = st.none() | st.sampled_from(["ann", "bob", "cat"])
COUNTS = st.none() | st.integers(0, 3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(NAMES, TEXTS, COUNTS), max_size=6),
       st.lists(st.dictionaries(st.sampled_from(["name", "note", "n", "tag"]), NAMES, min_size=1), max_size=3),
       st.lists(st.sampled_from([Exact(), Rouge(), Contains(), Always()]), min_size=3, max_size=3),
       st.sampled_from([Exact(), Close(1.0), Always()]))
def test_row_similarities_equal_scoring_every_column_on_every_row(
        rows: list[tuple[str | None, str | None, int | None]], targets: list[dict[str, object]],
        text_measures: list[object], number_measure: object) -> None:
    # Free text is scored only where the binary columns match; the floats must not change.
    snapshot = table(*rows).with_columns(tag=pl.col("note"))
    measures = {"name": text_measures[0], "note": text_measures[1], "tag": text_measures[2], "n": number_measure}
    targets = [{column: (len(value) % 3 if column == "n" and value is not None else value)
                for column, value in target.items()} for target in targets]
    expected = _every_column_everywhere(snapshot, targets, measures)
    assert row_similarities(snapshot, targets, measures).tolist() == expected.tolist()


def test_content_keys_tell_apart_what_row_keys_call_equal() -> None:
    # Row keys compare values (0.0 equals -0.0; NaN equals NaN), which is right for multiset
    # differences; the content key that caches similarities must also keep spellings apart.
    schema = {"x": pl.Float64, "y": pl.Int64}
    zero, minus_zero = Cells.from_rows(schema, [{"x": 0.0, "y": 1}]), Cells.from_rows(schema, [{"x": -0.0, "y": 1}])
    assert zero.keys() == minus_zero.keys()
    assert zero.content() != minus_zero.content()
    def content(row: dict[str, object]) -> object:
        return Cells.from_rows(schema, [row]).content()

    assert content({"x": 1, "y": 1}) == content({"x": 1.0, "y": 1})  # a Float64 column holds floats
    assert content({"y": 1}) == content({"x": None, "y": 1})  # a missing key is null
