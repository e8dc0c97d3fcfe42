"""The matcher's branch-and-bound search (`evaluation/search.py`) at its node budget: what a problem costs
decides whether the search answers or hands it to the elimination, so a search that wastes nodes gives
up on problems it must solve (found unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

from pytest_toolsandbox.evaluation.matcher import TIE_TOLERANCE
from pytest_toolsandbox.evaluation.search import NODE_BUDGET, SmallTerm, small_search


def lone(table: list[float]) -> tuple[int, ...] | None:
    """The search's answer for one milestone over len(table) run starts."""
    return small_search(len(table), [SmallTerm(table, (), [0] * len(table), ())], (), (0,), TIE_TOLERANCE)


def test_equal_similarities_everywhere_cost_one_node_each_and_fit_the_budget_exactly() -> None:
    # A tie's bound (its total plus the search's 1e-12 slack for rounding) is above the best, so the
    # maximisation visits every run start: root and first leaf of the guessing pass, then the
    # maximisation's root and its `width` leaves.
    width = NODE_BUDGET - 3
    for value in (0.0, 1.0):
        assert lone([value] * width) == (0,)
        assert lone([value] * (width + 1)) is None


def test_a_clear_best_costs_a_few_nodes_however_many_run_starts_there_are() -> None:
    # The guessing pass goes straight to the best and seeds the maximisation, which prunes the rest.
    width = 2 * NODE_BUDGET
    rising = [float(index) for index in range(1, width + 1)]
    assert lone(rising) == (width - 1,)
    assert lone(rising[::-1]) == (0,)


def test_a_run_start_whose_bound_only_equals_the_best_is_not_visited() -> None:
    # The best, 0.5 + 1e-12, comes first; every later run start's bound (0.5 plus the search's 1e-12
    # slack for rounding) equals it exactly, so none can improve on it and the maximisation skips them all.
    width = 2 * NODE_BUDGET
    assert lone([0.5 + 1e-12] + [0.5] * (width - 1)) == (0,)
