"""Branch-and-bound search for the matcher's small problems, in plain Python.

Scoring one trajectory builds a matcher problem of a few milestones over a handful of run starts.
At that size the general elimination (evaluation/factors.py) spends its time in the overhead of
hundreds of tiny numpy operations, while a depth-first search over the assignments, pruned by an
upper bound (each unplaced milestone's best similarity anywhere), visits only dozens of nodes.

The search answers the same question as the elimination: the optimum total, then the assignment
that is lexicographically first along the tie order among those within `tolerance` of it. Passes
over the same search tree do that: a maximisation, then a first-in-order search with the threshold
`optimum - tolerance`. A node budget keeps the cost bounded: when a problem needs more
nodes (many milestones, wide domains, near-ties everywhere) the search gives up and the caller
uses the elimination, whose cost grows polynomially.
"""

from __future__ import annotations

from collections.abc import Sequence

NODE_BUDGET = 2048
"""Search nodes (partial assignments) over all passes before the search gives up: a few
milliseconds at most, where the suite's problems need about ten (at most a few hundred)."""

_SLACK = 1e-12
"""Bounds are float sums in another order than a leaf's total: prune only when clearly beyond."""


class _OverBudget(Exception):
    pass


class SmallTerm:
    """One milestone over run-start indices: its table as nested lists (own index first, then one
    level per ref), its guard keys per run start, and the milestones those refer to."""

    __slots__ = ("deps", "keys", "refs", "table")

    def __init__(self, table: list, refs: tuple[int, ...], keys: Sequence[object], deps: tuple[int, ...]) -> None:
        self.table = table
        self.refs = refs
        self.keys = keys
        self.deps = deps

    def value(self, at: Sequence[int], own: int) -> float:
        """Similarity with milestone positions `at`, `own` being this milestone's (guards as a 0/1 factor)."""
        cell = self.table[own]
        for ref in self.refs:
            cell = cell[at[ref]]
        key = self.keys[own]
        for dep in self.deps:
            if self.keys[at[dep]] != key:
                return 0.0
        return cell

    def best(self) -> float:
        """The largest similarity anywhere (an upper bound for the search)."""
        cells = self.table
        for _ in self.refs:
            cells = [cell for row in cells for cell in row]
        return max(cells)


class _Search:
    """The search tree: milestones placed one per level in tie order, each level's index bounded by
    the already placed ends of its DAG edges; a milestone's similarity is added on the level where
    it and everything it depends on are placed."""

    def __init__(self, width: int, terms: Sequence[SmallTerm], edges: Sequence[tuple[int, int]],
                 tie_order: Sequence[int]) -> None:
        self.width = width
        self.order = tuple(tie_order)
        rank = {m: r for r, m in enumerate(self.order)}
        self.before: list[list[int]] = [[] for _ in self.order]
        self.after: list[list[int]] = [[] for _ in self.order]
        for u, v in edges:
            if rank[u] < rank[v]:
                self.before[rank[v]].append(u)
            else:
                self.after[rank[u]].append(v)
        self.complete: list[list[tuple[int, SmallTerm]]] = [[] for _ in self.order]
        for m, term in enumerate(terms):
            self.complete[max(rank[other] for other in (m, *term.refs, *term.deps))].append((m, term))
        remaining = [0.0] * (len(self.order) + 1)
        for level in range(len(self.order) - 1, -1, -1):
            remaining[level] = remaining[level + 1] + sum(term.best() for _, term in self.complete[level])
        self.remaining = remaining  # an upper bound on what levels >= r can still add
        self.at = [0] * len(terms)
        self.nodes = 0
        self.best = float("-inf")

    def walk(self, level: int, partial: float, threshold: float | None) -> bool:
        """Visit the subtree in increasing indices. Without a threshold: raise `best` to the best
        total; with one: stop (True) at the first leaf reaching it, leaving it in `at`."""
        self.nodes += 1
        if self.nodes > NODE_BUDGET:
            raise _OverBudget
        if level == len(self.order):
            if threshold is not None and partial < threshold:
                return False
            self.best = max(self.best, partial)
            return threshold is not None
        at = self.at
        m = self.order[level]
        low = max([at[u] for u in self.before[level]], default=0)
        high = min([at[v] for v in self.after[level]], default=self.width - 1)
        rest = self.remaining[level + 1] + _SLACK
        complete = self.complete[level]
        for index in range(low, high + 1):
            at[m] = index
            total = partial
            for done, term in complete:
                total += term.value(at, at[done])
            if threshold is None:
                if total + rest <= self.best:
                    continue
            elif total + rest < threshold:
                continue
            if self.walk(level + 1, total, threshold):
                return True
        return False


def small_search(width: int, terms: Sequence[SmallTerm], edges: Sequence[tuple[int, int]],
                 tie_order: Sequence[int], tolerance: float) -> tuple[int, ...] | None:
    """Run-start index per milestone (the earliest along `tie_order` among assignments within
    `tolerance` of the optimum), or None when the problem is too large for this search.

    A first pass guesses that the bound is reached (true whenever every milestone can score its
    best at once, as with a good agent): its answer seeds the maximisation, which then prunes
    almost everything, and stands unless the optimum turns out lower.
    """
    search = _Search(width, terms, edges, tie_order)
    try:
        guess = search.remaining[0] - tolerance
        found = tuple(search.at) if search.walk(0, 0.0, guess) else None
        search.walk(0, 0.0, None)
        threshold = search.best - tolerance
        if found is not None and threshold == guess:
            return found
        return tuple(search.at) if search.walk(0, 0.0, threshold) else None
    except _OverBudget:
        return None
