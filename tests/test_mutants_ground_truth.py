"""Ground truth (`evaluation/ground_truth.py`): a read-only call counts as the reference's when it returns
what the reference's returned, however it was asked (found unpinned by mutation testing,
benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
from tests.test_scoring_support import call, play, seed_scenario, seed_turns


@pytest.mark.parametrize(("query", "matched"), [("Fredrik Thordendal", 3), ("Fredrik", 3), ("Nobody Here", 2)])
def test_a_search_matches_the_reference_search_by_its_result(query: str, matched: int) -> None:
    """The seed dialogue's three successful calls: the search, enabling cellular, the send. "Fredrik"
    finds the same contact as the reference's "Fredrik Thordendal"; a search finding no one is extra."""
    s = seed_scenario()
    turns = seed_turns()
    turns[0] = call("search_contacts", name=query)
    truth = evaluate(s, play(s, turns)).ground_truth
    assert truth is not None
    assert (truth.matched_calls, truth.predicted_calls, truth.reference_calls) == (matched, 4, 3)
    assert truth.recall == matched / 3 and truth.precision == matched / 4
