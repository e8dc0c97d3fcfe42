"""World-table similarities (`evaluation/snapshots.py`, `evaluation/columns.py`): an addition scores only
when every earlier row is still there unchanged, and each measure a scenario can name compares as its
name says (found unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import polars as pl
import pytest

from pytest_toolsandbox.evaluation.columns import measure_from_name
from pytest_toolsandbox.evaluation.snapshots import addition_similarity, removal_similarity, snapshot_similarity

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
