"""The exact milestone matcher: which message index each milestone maps to.

Problem. Milestones 0..M-1 each take a position in 0..size-1 (a message index offset). Feasible:
position(u) ≤ position(v) for every DAG edge u → v, which is the same as "non-decreasing along some
topological order". Objective: Σ_m similarity_m, where similarity_m is the base table of milestone m
at (its position, the positions of its `refs`) times one 0/1 guard factor per milestone in `deps`
(the guard holds when the guard key at the dependency's position equals the key at m's position).
Ties: among all assignments whose total is within TIE_TOLERANCE of the optimum, the
lexicographically smallest one along `tie_order` (a topological order) wins — "earliest index".

Solution (see docs/scoring.md for the proof sketch):
1. Positions where nothing distinguishes p from p-1 (every table slice and guard key equal) are
   merged into runs; the lexicographically smallest optimum only ever uses run starts.
2. The objective becomes a sum of factors: one per milestone (its similarity), one per DAG edge
   (0 or -inf for the order), and, for a milestone that depends on several others, a binary
   "guards hold" variable z that splits its guard product into pairwise factors (exact because
   similarities are ≥ 0, so the maximum picks z = 1 exactly when every guard holds).
3. Max-sum variable elimination gives the optimum; a second sweep fixes milestones one by one in
   tie order to the earliest position whose best completion still reaches the optimum.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from pytest_toolsandbox.evaluation.factors import Factor, align_axes, clamp, maximise
from pytest_toolsandbox.evaluation.search import SmallTerm, small_search

TIE_TOLERANCE = 1e-9
"""Totals closer than this are ties (float rounding differs between elimination orders)."""

MAX_SIMILARITY = 2.0
"""The largest similarity a problem may hold (the scorer's are at most 1.5: a reached event's 1 plus its
bonus). The tie tolerance is absolute, so it must stay far above the rounding of the totals; similarities
of a million and more would round by more than it and the matcher would lose its optimum."""


@dataclass(frozen=True)
class Term:
    """Base similarity of one milestone: axis 0 is its own position, then one axis per ref."""

    table: np.ndarray
    refs: tuple[int, ...] = ()


@dataclass(frozen=True)
class Guard:
    """0/1 factor: the guard key at each dependency's position must equal the key at ours."""

    keys: np.ndarray
    deps: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Order:
    acyclic: bool
    tie_order: tuple[int, ...] = ()
    reduced: tuple[tuple[int, int], ...] = ()


@functools.lru_cache(maxsize=1024)
def _order(count: int, edges: tuple[tuple[int, int], ...]) -> _Order:
    """Acyclicity, tie order and transitive reduction of a milestone DAG. Every item of a scenario
    has the same DAG, and networkx spends far longer on these small graphs than the matcher itself."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(count))
    graph.add_edges_from(edges)
    if not nx.is_directed_acyclic_graph(graph):
        return _Order(False)
    return _Order(True, tuple(nx.lexicographical_topological_sort(graph)),
                  tuple(nx.transitive_reduction(graph).edges))


@dataclass(frozen=True)
class MatchProblem:
    size: int
    terms: tuple[Term, ...]
    guards: tuple[Guard, ...]
    edges: tuple[tuple[int, int], ...] = ()
    tie_order: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        count = len(self.terms)
        if self.size < 1:
            raise ValueError("a match problem needs at least one position")
        if len(self.guards) != count:
            raise ValueError("one guard per milestone is required (use Guard(keys) with no deps)")
        order = _order(count, tuple(map(tuple, self.edges)))
        if not order.acyclic:
            raise ValueError(f"milestone edges contain a cycle: {nx.find_cycle(self.graph())}")
        for m, (term, guard) in enumerate(zip(self.terms, self.guards, strict=True)):
            if term.table.shape != (self.size,) * (1 + len(term.refs)):
                raise ValueError(f"milestone {m}: table shape {term.table.shape} does not match its refs")
            if m in term.refs or m in guard.deps or len(set(term.refs)) != len(term.refs):
                raise ValueError(f"milestone {m}: refs must be distinct other milestones")
            if not (term.table.min() >= 0.0 and term.table.max() <= MAX_SIMILARITY):  # NaN fails both
                raise ValueError(f"milestone {m}: similarities must lie between 0 and {MAX_SIMILARITY:g}")
            if guard.keys.shape != (self.size,):
                raise ValueError(f"milestone {m}: one guard key per position is required")
        if not self.tie_order:
            object.__setattr__(self, "tie_order", order.tie_order)
        elif sorted(self.tie_order) != list(range(count)):
            raise ValueError("tie_order must list every milestone once")

    def graph(self) -> nx.DiGraph:
        graph = nx.DiGraph()
        graph.add_nodes_from(range(len(self.terms)))
        graph.add_edges_from(self.edges)
        return graph

    def similarities(self, positions: tuple[int, ...]) -> tuple[float, ...]:
        """Each milestone's similarity under a given assignment (no feasibility check)."""
        values = []
        for m, (term, guard) in enumerate(zip(self.terms, self.guards, strict=True)):
            base = float(term.table[(positions[m], *(positions[r] for r in term.refs))])
            held = all(guard.keys[positions[d]] == guard.keys[positions[m]] for d in guard.deps)
            values.append(base if held else 0.0)
        return tuple(values)

    def feasible(self, positions: tuple[int, ...]) -> bool:
        return all(positions[u] <= positions[v] for u, v in self.edges)


@dataclass(frozen=True)
class Alignment:
    """The chosen position per milestone, each milestone's similarity, and their sum."""

    positions: tuple[int, ...]
    similarities: tuple[float, ...]
    total: float


def run_starts(problem: MatchProblem) -> np.ndarray:
    """Positions that begin a run of mutually indistinguishable positions."""
    if problem.terms and all(term.table.ndim == 1 for term in problem.terms):  # the usual case: plain rows
        columns = [term.table.tolist() for term in problem.terms] + [guard.keys.tolist() for guard in problem.guards]
        rows = list(zip(*columns, strict=True))
        return np.array([0, *(p for p in range(1, problem.size) if rows[p] != rows[p - 1])])
    same = np.ones(problem.size - 1, dtype=bool)
    for term in problem.terms:
        if term.table.ndim == 1:  # the common case, without moveaxis' overhead
            same &= term.table[1:] == term.table[:-1]
            continue
        for axis in range(term.table.ndim):
            table = np.moveaxis(term.table, axis, 0).reshape(problem.size, -1)
            same &= np.all(table[1:] == table[:-1], axis=1)
    for guard in problem.guards:
        same &= guard.keys[1:] == guard.keys[:-1]
    return np.concatenate(([0], np.flatnonzero(~same) + 1))


def _factors(problem: MatchProblem, starts: np.ndarray) -> tuple[list[Factor], dict[int, int]]:
    count = len(problem.terms)
    width = len(starts)
    domains = {m: width for m in range(count)}
    factors: list[Factor] = []
    for m, (term, guard) in enumerate(zip(problem.terms, problem.guards, strict=True)):
        base = term.table[np.ix_(*([starts] * term.table.ndim))]
        keys = guard.keys[starts]
        others = sorted(set(term.refs) | set(guard.deps))
        if not guard.deps or len(others) <= 1:
            scope = (m, *others)
            table = align_axes(base, (m, *term.refs), scope)
            holds = keys[:, None] == keys[None, :]
            for d in guard.deps:
                table = table * align_axes(holds, (m, d), scope)
            factors.append(Factor(scope, np.broadcast_to(table, (width,) * len(scope)).copy()))
            continue
        z = count + m
        domains[z] = 2
        factors.append(Factor((m, z, *term.refs), np.stack([np.zeros_like(base), base], axis=1)))
        for d in guard.deps:
            allowed = np.where(keys[None, :, None] == keys[:, None, None], 0.0, -np.inf)
            allowed = np.concatenate([np.zeros((width, width, 1)), allowed], axis=2)
            factors.append(Factor((d, m, z), allowed))
    order = np.where(np.arange(width)[:, None] <= np.arange(width)[None, :], 0.0, -np.inf)
    for u, v in _order(count, tuple(map(tuple, problem.edges))).reduced:
        factors.append(Factor((u, v), order))
    return factors, domains


def solve_by_search(problem: MatchProblem, starts: np.ndarray) -> tuple[int, ...] | None:
    """The run-start index per milestone found by the plain-Python search, None if over its budget."""
    terms = []
    for term, guard in zip(problem.terms, problem.guards, strict=True):
        table = term.table[starts] if term.table.ndim == 1 else term.table[np.ix_(*([starts] * term.table.ndim))]
        terms.append(SmallTerm(table.tolist(), term.refs, guard.keys[starts].tolist(), guard.deps))
    reduced = _order(len(problem.terms), tuple(map(tuple, problem.edges))).reduced
    return small_search(len(starts), terms, reduced, problem.tie_order, TIE_TOLERANCE)


def solve_by_elimination(problem: MatchProblem, starts: np.ndarray) -> tuple[int, ...]:
    """The run-start index per milestone by max-sum elimination (any size)."""
    count = len(problem.terms)
    factors, domains = _factors(problem, starts)
    chosen: dict[int, int] = {}
    best = -np.inf
    for m in problem.tie_order:
        marginal = maximise(factors, domains, keep=m)
        if not chosen:
            best = float(marginal.max())  # the optimum: nothing is fixed yet
        choice = int(np.flatnonzero(marginal >= best - TIE_TOLERANCE)[0])
        chosen[m] = choice
        factors = clamp(factors, m, choice)
        domains = {**domains, m: 1}
    return tuple(chosen[m] for m in range(count))


def align(problem: MatchProblem) -> Alignment:
    """The exact best assignment (earliest among ties), with per-milestone similarities.

    Small problems (nearly all of them in practice) are solved by a plain-Python search
    (evaluation/search.py), the rest by elimination; both give the same assignment."""
    count = len(problem.terms)
    if count == 0:
        return Alignment((), (), 0.0)
    starts = run_starts(problem)
    chosen = solve_by_search(problem, starts)
    if chosen is None:
        chosen = solve_by_elimination(problem, starts)
    positions = tuple(int(starts[chosen[m]]) for m in range(count))
    similarities = problem.similarities(positions)
    return Alignment(positions, similarities, float(sum(similarities)))
