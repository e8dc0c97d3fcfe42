"""The exact milestone matcher (`evaluation/matcher.py`) at its edges: the messages that refuse a malformed
problem, which positions begin a run for every shape of table, ties exactly at the tolerance, and tie orders
that run against the DAG (found unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pytest_toolsandbox.evaluation.matcher import (
    TIE_TOLERANCE,
    Alignment,
    Guard,
    MatchProblem,
    Term,
    align,
    run_starts,
    solve_by_elimination,
    solve_by_search,
)
from tests.benchmarks.exhaustive import exhaustive_align


def unguarded(size: int, count: int) -> tuple[Guard, ...]:
    return tuple(Guard(np.zeros(size, int)) for _ in range(count))


def problem_of(*tables: list[float], edges: tuple[tuple[int, int], ...] = ()) -> MatchProblem:
    """Milestones scored by plain rows, no guards."""
    size = len(tables[0])
    return MatchProblem(size, tuple(Term(np.array(table, dtype=float)) for table in tables),
                        unguarded(size, len(tables)), edges)


def solutions(problem: MatchProblem) -> tuple[tuple[int, ...], tuple[int, ...] | None, tuple[int, ...]]:
    """The positions from align, the plain-Python search and the elimination (run starts mapped back)."""
    starts = run_starts(problem)
    searched = solve_by_search(problem, starts)
    return (align(problem).positions,
            None if searched is None else tuple(int(starts[i]) for i in searched),
            tuple(int(starts[i]) for i in solve_by_elimination(problem, starts)))


ZEROS = Term(np.zeros(2))
KEYS = Guard(np.zeros(2, int))

REFUSED = [
    ("no position", lambda: MatchProblem(0, (), ()), "a match problem needs at least one position"),
    ("a guard missing", lambda: MatchProblem(2, (ZEROS, ZEROS), (KEYS,)),
     "one guard per milestone is required (use Guard(keys) with no deps)"),
    ("its own reference", lambda: MatchProblem(2, (Term(np.zeros((2, 2)), (0,)),), (KEYS,)),
     "milestone 0: refs must be distinct other milestones"),
    ("its own guard", lambda: MatchProblem(2, (ZEROS,), (Guard(np.zeros(2, int), (0,)),)),
     "milestone 0: refs must be distinct other milestones"),
    ("a reference twice", lambda: MatchProblem(2, (Term(np.zeros((2, 2, 2)), (1, 1)), ZEROS), (KEYS, KEYS)),
     "milestone 0: refs must be distinct other milestones"),
    ("a negative similarity", lambda: MatchProblem(2, (Term(np.array([-0.5, 1.0])),), (KEYS,)),
     "milestone 0: similarities must lie between 0 and 2"),
    ("an infinite similarity", lambda: MatchProblem(2, (Term(np.array([np.inf, 1.0])),), (KEYS,)),
     "milestone 0: similarities must lie between 0 and 2"),
    ("a similarity above 2", lambda: MatchProblem(2, (Term(np.array([2.0 + 1e-9, 1.0])),), (KEYS,)),
     "milestone 0: similarities must lie between 0 and 2"),
    ("no number", lambda: MatchProblem(2, (Term(np.array([np.nan, 1.0])),), (KEYS,)),
     "milestone 0: similarities must lie between 0 and 2"),
    ("a guard key missing", lambda: MatchProblem(2, (ZEROS,), (Guard(np.zeros(3, int)),)),
     "milestone 0: one guard key per position is required"),
    ("a milestone twice in the tie order", lambda: MatchProblem(2, (ZEROS, ZEROS), (KEYS, KEYS), (), (0, 0)),
     "tie_order must list every milestone once"),
]


@pytest.mark.parametrize(("build", "message"), [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED])
def test_a_malformed_problem_is_refused_with_a_message_that_names_the_fault(build, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        build()


def test_similarities_from_zero_to_two_are_accepted_and_mapped() -> None:
    problem = MatchProblem(3, (Term(np.array([0.0, 2.0, 1.5])),), (Guard(np.zeros(3, int)),))
    assert align(problem) == Alignment((1,), (2.0,), 2.0)


def test_an_empty_problem_maps_nothing_and_totals_zero() -> None:
    empty = MatchProblem(3, (), ())
    assert align(empty) == Alignment((), (), 0.0)
    assert run_starts(empty).tolist() == [0]  # nothing tells the three positions apart


def test_a_run_begins_where_a_row_differs_from_the_previous_one_never_at_the_wrap_around() -> None:
    assert run_starts(problem_of([1.0, 0.0, 0.0])).tolist() == [0, 1]
    assert run_starts(problem_of([0.0, 1.0, 1.0], [0.0, 0.0, 0.5])).tolist() == [0, 1, 2]


def with_reference(row: list[float], ref_table: np.ndarray, keys: tuple[int, ...]) -> MatchProblem:
    """Milestone 0 scored by a plain row, milestone 1 by a table over its position and milestone 0's."""
    size = len(row)
    return MatchProblem(size, (Term(np.array(row)), Term(ref_table, (0,))),
                        (Guard(np.zeros(size, int)), Guard(np.array(keys))))


def test_with_a_reference_table_runs_still_split_at_each_change_of_any_table_or_guard_key() -> None:
    constant = np.zeros((3, 3))
    rows_change = np.array([[0.0] * 3, [1.0] * 3, [1.0] * 3])  # differs between positions 0 and 1 only
    assert run_starts(with_reference([0.0, 1.0, 1.0], constant, (0, 0, 0))).tolist() == [0, 1]
    assert run_starts(with_reference([0.0, 0.0, 0.0], constant, (0, 1, 1))).tolist() == [0, 1]
    assert run_starts(with_reference([0.0, 0.0, 0.0], rows_change, (0, 0, 0))).tolist() == [0, 1]
    assert run_starts(with_reference([0.0, 0.0, 0.0], rows_change.T.copy(), (0, 0, 0))).tolist() == [0, 1]


def test_a_difference_only_along_a_reference_axis_keeps_its_position_apart() -> None:
    # Milestone 0 scores 1 only when milestone 1 sits at position 1: nothing else tells 0 and 1 apart.
    only_ref = np.array([[0.0, 1.0], [0.0, 1.0]])
    mutual = MatchProblem(2, (Term(only_ref, (1,)), Term(np.zeros((2, 2)), (0,))), unguarded(2, 2))
    assert run_starts(mutual).tolist() == [0, 1]
    assert align(mutual) == Alignment((0, 1), (1.0, 0.0), 1.0)
    # The same with two references: milestone 0 scores 1 only when its second reference is at position 1.
    second_ref = np.zeros((2, 2, 2))
    second_ref[:, :, 1] = 1.0
    two_refs = MatchProblem(2, (Term(second_ref, (1, 2)), ZEROS, ZEROS), unguarded(2, 3))
    assert run_starts(two_refs).tolist() == [0, 1]
    assert align(two_refs) == Alignment((0, 0, 1), (1.0, 0.0, 0.0), 1.0)


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_a_total_exactly_the_tolerance_below_the_best_ties_and_the_earlier_wins(scale: float) -> None:
    # Both solvers and the exhaustive specification take "within TIE_TOLERANCE" inclusively.
    tie = problem_of([scale - TIE_TOLERANCE, scale])
    assert solutions(tie) == ((0,), (0,), (0,))
    assert exhaustive_align(tie).positions == (0,)


@pytest.mark.parametrize("short", [1e-13, 1e-10])
def test_a_total_just_beyond_the_tolerance_is_no_tie(short: float) -> None:
    beyond = problem_of([1.0 - TIE_TOLERANCE - short, 1.0])
    assert solutions(beyond) == ((1,), (1,), (1,))
    assert exhaustive_align(beyond).positions == (1,)


def test_the_tolerance_counts_from_the_optimum_not_from_the_unreachable_bound() -> None:
    # Each milestone scores 1 at its best, but the order forbids both at once: the optimum (1, 1) is
    # 0.5e-9 short of 2, and (0, 0), 1.2e-9 short of 2, is within the tolerance of the optimum.
    conflict = problem_of([1.0 - 1.2e-9, 1.0], [1.0, 1.0 - 0.5e-9], edges=((0, 1),))
    assert solutions(conflict) == ((0, 0), (0, 0), (0, 0))
    assert exhaustive_align(conflict).positions == (0, 0)


def test_a_tie_order_against_the_dag_decides_which_milestone_takes_the_earlier_message() -> None:
    # Milestone 1 (after milestone 0) scores 1 at the same message as milestone 0 when both are at
    # message 1, or two messages after it: the optima (0, 2) and (1, 1) tie.
    after_zero = np.zeros((3, 3))
    after_zero[1, 1] = after_zero[2, 0] = 1.0
    terms = (Term(np.zeros(3)), Term(after_zero, (0,)))
    for order, expected in [((0, 1), (0, 2)), ((1, 0), (1, 1))]:
        problem = MatchProblem(3, terms, unguarded(3, 2), ((0, 1),), order)
        assert problem.tie_order == order
        assert solutions(problem) == (expected, expected, expected)
        assert exhaustive_align(problem).positions == expected
