"""Exhaustive reference search for the matcher: every assignment, in lexicographic tie order.

Kept in the tests only: it is the specification the fast matcher is checked against, and its cost
(size ** milestones) is the growth the benchmark shows beside the matcher's.
"""

from __future__ import annotations

import itertools

from pytest_toolsandbox.evaluation.matcher import TIE_TOLERANCE, Alignment, MatchProblem


def exhaustive_align(problem: MatchProblem) -> Alignment:
    """The lexicographically first (along tie_order) assignment within tolerance of the optimum."""
    count = len(problem.terms)
    if count == 0:
        return Alignment((), (), 0.0)
    scored: list[tuple[tuple[int, ...], tuple[float, ...], float]] = []
    for combo in itertools.product(range(problem.size), repeat=count):
        positions = [0] * count
        for rank, m in enumerate(problem.tie_order):
            positions[m] = combo[rank]
        assignment = tuple(positions)
        if not problem.feasible(assignment):
            continue
        similarities = problem.similarities(assignment)
        scored.append((assignment, similarities, sum(similarities)))
    best = max(total for _, _, total in scored)
    assignment, similarities, total = next(entry for entry in scored if entry[2] >= best - TIE_TOLERANCE)
    return Alignment(assignment, similarities, total)
