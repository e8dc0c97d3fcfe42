"""The benchmark's problems are solved exactly, and its report runs (small sizes only)."""

from __future__ import annotations

import pytest

from benchmarks.bench_matcher import main, make_problem
from pytest_toolsandbox.evaluation.matcher import align, run_starts, solve_by_elimination, solve_by_search
from tests.benchmarks.exhaustive import exhaustive_align


@pytest.mark.parametrize("shape", ["chain", "wide"])
@pytest.mark.parametrize("near_ties", [False, True])
@pytest.mark.parametrize(("count", "size"), [(3, 12), (4, 8), (5, 5)])
def test_benchmark_problems_match_exhaustive_search(shape: str, near_ties: bool, count: int, size: int) -> None:
    for seed in range(3):
        problem = make_problem(shape, count, size, near_ties, seed)
        assert align(problem) == exhaustive_align(problem)


def test_wide_dag_of_twelve_milestones_over_two_hundred_messages_is_solved() -> None:
    """Too large for the exhaustive search: with near-ties every feasible mapping scores about 12, so the
    answer must be feasible and the one both exact methods agree on (to the last 1e-6 of the ties)."""
    problem = make_problem("wide", 12, 200, near_ties=True)
    result = align(problem)
    assert len(result.positions) == 12 and problem.feasible(result.positions)
    starts = run_starts(problem)
    assert result.positions == tuple(int(starts[c]) for c in solve_by_elimination(problem, starts))
    searched = solve_by_search(problem, starts)
    assert searched is None or result.positions == tuple(int(starts[c]) for c in searched)
    assert result.total == pytest.approx(sum(problem.similarities(result.positions)))


def test_quick_benchmark_reports_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "NO" not in out.split()
    assert "largest case" in out
