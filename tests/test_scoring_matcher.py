"""The matcher equals exhaustive search: optimum, per-milestone similarities and tie-breaking."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_toolsandbox.evaluation import factors, search
from pytest_toolsandbox.evaluation.matcher import (
    Guard,
    MatchProblem,
    Term,
    align,
    run_starts,
    solve_by_elimination,
    solve_by_search,
)
from tests.benchmarks.exhaustive import exhaustive_align

DYADIC = (0.0, 0.125, 0.25, 0.5, 0.75, 1.0)


@st.composite
def problems(draw: st.DrawFn, dyadic: bool, larger: bool = False) -> MatchProblem:
    count = draw(st.integers(1, 6 if larger else 5))
    size = draw(st.integers(1, 8 if larger else 5 if count <= 4 else 4))
    rank = draw(st.permutations(range(count)))
    pairs = [(rank[i], rank[j]) for i in range(count) for j in range(i + 1, count)]
    edges = tuple(pair for pair in pairs if draw(st.booleans()))
    others = st.lists(st.integers(0, count - 1), max_size=3, unique=True)
    terms, guards = [], []
    for m in range(count):
        refs = tuple(r for r in draw(others) if r != m)[:2]
        deps = tuple(d for d in draw(others) if d != m)
        cells = size ** (1 + len(refs))
        values = st.sampled_from(DYADIC) if dyadic else st.floats(0, 1, allow_nan=False)
        table = np.array(draw(st.lists(values, min_size=cells, max_size=cells))).reshape((size,) * (1 + len(refs)))
        keys = np.array(draw(st.lists(st.integers(0, 2), min_size=size, max_size=size)))
        terms.append(Term(table, refs))
        guards.append(Guard(keys, deps))
    return MatchProblem(size, tuple(terms), tuple(guards), edges)


@settings(max_examples=400, deadline=None)
@given(problems(dyadic=True))
def test_matcher_equals_exhaustive_search_including_ties(problem: MatchProblem) -> None:
    # Dyadic similarities make every sum exact, so the tie-break must agree position for position.
    assert align(problem) == exhaustive_align(problem)


@settings(max_examples=150, deadline=None)
@given(problems(dyadic=True))
def test_the_sliced_elimination_for_large_tables_is_exact_too(problem: MatchProblem) -> None:
    # Small problems never reach the slice-by-slice path, nor the elimination at all; force both.
    with mock.patch.object(factors, "_CHUNK_CELLS", 1), mock.patch.object(search, "NODE_BUDGET", 0):
        assert align(problem) == exhaustive_align(problem)


@settings(max_examples=200, deadline=None)
@given(problems(dyadic=True))
def test_elimination_alone_equals_exhaustive_search_too(problem: MatchProblem) -> None:
    # Small problems are solved by the plain-Python search; without a node budget every problem
    # takes the elimination path, which must stay exact on its own.
    with mock.patch.object(search, "NODE_BUDGET", 0):
        assert align(problem) == exhaustive_align(problem)


@settings(max_examples=400, deadline=None)
@given(problems(dyadic=True, larger=True) | problems(dyadic=False, larger=True))
def test_search_picks_the_same_run_starts_as_elimination(problem: MatchProblem) -> None:
    starts = run_starts(problem)
    searched = solve_by_search(problem, starts)
    assume(searched is not None)  # a search that gave up proves nothing; hypothesis fails if most do
    assert searched == solve_by_elimination(problem, starts)


def test_search_gives_up_beyond_its_node_budget() -> None:
    # Along the chain, milestones alternately prefer the first and the last message: each one's best
    # is far from what the order lets it have, so the bound prunes little and the tree is wide.
    early, late = list(np.linspace(1.0, 0.5, 30)), list(np.linspace(0.5, 1.0, 30))
    problem = _chain([early, late, early, late, early, late])
    starts = run_starts(problem)
    assert solve_by_search(problem, starts) is None
    assert align(problem).positions == tuple(int(starts[c]) for c in solve_by_elimination(problem, starts))


@settings(max_examples=300, deadline=None)
@given(problems(dyadic=False))
def test_matcher_reaches_the_exhaustive_optimum_on_real_valued_tables(problem: MatchProblem) -> None:
    fast, slow = align(problem), exhaustive_align(problem)
    assert fast.total == pytest.approx(slow.total, abs=1e-9)
    assert problem.feasible(fast.positions)
    assert fast.similarities == problem.similarities(fast.positions)


def _chain(tables: list[list[float]], keys: list[int] | None = None, guarded: bool = False) -> MatchProblem:
    size = len(tables[0])
    key_array = np.array(keys if keys is not None else [0] * size)
    terms = tuple(Term(np.array(table)) for table in tables)
    guards = tuple(Guard(key_array, (m - 1,) if guarded and m else ()) for m in range(len(tables)))
    edges = tuple((m, m + 1) for m in range(len(tables) - 1))
    return MatchProblem(size, terms, guards, edges)


def test_two_milestones_may_share_a_message_and_ties_take_the_earliest() -> None:
    problem = _chain([[0, 1, 1, 0], [0, 1, 0, 1]])
    assert align(problem).positions == (1, 1)


def test_zero_similarity_milestones_sit_at_the_earliest_allowed_position() -> None:
    problem = _chain([[0, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    assert align(problem).positions == (2, 2, 3)


def test_order_constraint_can_force_a_lower_similarity() -> None:
    # Milestone 0 is best late, milestone 1 best early; the order makes milestone 0 settle for 0.5.
    problem = _chain([[0.5, 0.0, 1.0], [1.0, 0.25, 0.125]])
    result = align(problem)
    assert (result.positions, result.total) == ((0, 0), 1.5)


def test_equal_totals_tie_to_the_lexicographically_earliest_mapping() -> None:
    problem = _chain([[0.0, 0.0, 1.0], [1.0, 0.5, 0.0]])  # (0, 0) and (2, 2) both total 1
    assert align(problem).positions == (0, 0)


def test_guard_breaks_when_the_world_changed_in_between() -> None:
    # keys change at position 2: a guard on the predecessor fails if they straddle it.
    problem = _chain([[1, 0, 0, 0], [0, 0, 0, 1]], keys=[0, 0, 1, 1], guarded=True)
    result = align(problem)
    assert result.total == 1.0
    assert result.similarities in {(1.0, 0.0), (0.0, 1.0)}


def test_run_compression_keeps_only_distinguishable_positions() -> None:
    problem = _chain([[0, 0, 0, 1, 1, 0]], keys=[0, 0, 0, 0, 0, 0])
    assert run_starts(problem).tolist() == [0, 3, 5]


def test_reference_dependency_is_honoured() -> None:
    # Milestone 1 scores 1 only when measured against milestone 0 placed at position 1.
    base = np.zeros((3, 3))
    base[2, 1] = 1.0
    problem = MatchProblem(3, (Term(np.array([0.5, 0.4, 0.0])), Term(base, (0,))),
                           (Guard(np.zeros(3, int)), Guard(np.zeros(3, int))), ((0, 1),))
    result = align(problem)
    assert result.positions == (1, 2)
    assert result.total == pytest.approx(1.4)


def test_invalid_problems_are_rejected() -> None:
    table = Term(np.zeros(2))
    guard = Guard(np.zeros(2, int))
    with pytest.raises(ValueError, match="cycle"):
        MatchProblem(2, (table, table), (guard, guard), ((0, 1), (1, 0)))
    with pytest.raises(ValueError, match="shape"):
        MatchProblem(2, (Term(np.zeros(3)),), (guard,))
    with pytest.raises(ValueError, match="between 0 and 2"):
        MatchProblem(2, (Term(np.array([np.nan, 0])),), (guard,))


def test_empty_problem_scores_nothing() -> None:
    assert align(MatchProblem(1, (), ())).positions == ()
