"""Max-sum variable elimination over dense numpy tables (non-serial dynamic programming).

The matcher turns "choose a message index per milestone" into a sum of factors, each a table over a
few variables. Eliminating a variable replaces the factors that mention it by their sum maximised
over that variable, which is exact (max distributes over +) and costs the size of the table spanned
by the variable and its current neighbours. For milestone DAGs those neighbourhoods stay small, so
the cost grows polynomially with messages instead of exponentially with milestones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

# Above this many cells the combined table of one elimination is built slice by slice.
_CHUNK_CELLS = 1 << 21


@dataclass(frozen=True)
class Factor:
    """A table over `variables` (one axis each, in that order); -inf marks forbidden combinations."""

    variables: tuple[int, ...]
    table: np.ndarray


def clamp(factors: Iterable[Factor], variable: int, value: int) -> list[Factor]:
    """Fix `variable` to `value`: its axis keeps only that entry (the domain becomes one value)."""
    clamped = []
    for factor in factors:
        if variable in factor.variables:
            axis = factor.variables.index(variable)
            table = np.take(factor.table, [value], axis=axis)
            clamped.append(Factor(factor.variables, table))
        else:
            clamped.append(factor)
    return clamped


def align_axes(table: np.ndarray, axes: Sequence[int], scope: Sequence[int]) -> np.ndarray:
    """A table whose axes are the variables `axes`, permuted into `scope` order with size-1 axes for
    the variables it lacks, so that tables over different variables broadcast together."""
    present = [variable for variable in scope if variable in axes]
    moved = np.transpose(table, [list(axes).index(variable) for variable in present])
    return moved.reshape([moved.shape[present.index(variable)] if variable in axes else 1 for variable in scope])


def _aligned(factor: Factor, scope: Sequence[int]) -> np.ndarray:
    return align_axes(factor.table, factor.variables, scope)


def _sum_and_max(factors: Sequence[Factor], scope: tuple[int, ...], domains: Mapping[int, int]) -> np.ndarray:
    """Σ factors over `scope`, maximised over the last variable of `scope`."""
    tables = [_aligned(factor, scope) for factor in factors]
    cells = math.prod(domains[variable] for variable in scope)
    if cells <= _CHUNK_CELLS or len(scope) < 2:
        total = tables[0]
        for table in tables[1:]:
            total = total + table
        return np.broadcast_to(total, [domains[v] for v in scope]).max(axis=-1)
    # Large: build the combined table one slice of the first axis at a time (bounded memory).
    out = np.empty([domains[v] for v in scope[:-1]])
    for row in range(domains[scope[0]]):
        total = np.zeros([1] * (len(scope) - 1))
        for table in tables:
            total = total + (table[row] if table.shape[0] > 1 else table[0])
        out[row] = np.broadcast_to(total, [domains[v] for v in scope[1:]]).max(axis=-1)
    return out


def _elimination_cost(variable: int, factors: Sequence[Factor], domains: Mapping[int, int]) -> int:
    scope = {other for factor in factors if variable in factor.variables for other in factor.variables}
    return math.prod(domains[other] for other in scope)


def _absorb(factors: Sequence[Factor]) -> list[Factor]:
    """Add every factor into one whose scope contains it: fewer, larger tables to sum later."""
    merged: list[Factor] = []
    for factor in sorted(factors, key=lambda f: -len(f.variables)):
        host = next((i for i, big in enumerate(merged) if set(factor.variables) <= set(big.variables)), None)
        if host is None:
            merged.append(factor)
            continue
        big = merged[host]
        merged[host] = Factor(big.variables, big.table + _aligned(factor, big.variables))
    return merged


def maximise(factors: Sequence[Factor], domains: Mapping[int, int], keep: int | None = None) -> np.ndarray:
    """max over every variable except `keep` of Σ factors.

    Returns an array over `keep`'s domain, or a 0-d array when `keep` is None. Variables are
    eliminated greedily by the size of the table they span (ties: smallest id), a deterministic
    order that keeps tables small for the tree-like graphs milestone DAGs produce.
    """
    factors = _absorb(factors)
    pending = sorted(set(domains) - {keep})
    while pending:
        variable = min(pending, key=lambda v: (_elimination_cost(v, factors, domains), v))
        pending.remove(variable)
        involved = [factor for factor in factors if variable in factor.variables]
        if not involved:
            continue
        factors = [factor for factor in factors if variable not in factor.variables]
        others = sorted({other for factor in involved for other in factor.variables} - {variable})
        scope = (*others, variable)
        factors.append(Factor(tuple(others), _sum_and_max(involved, scope, domains)))
    final_scope: tuple[int, ...] = (keep,) if keep is not None else ()
    result = np.zeros([domains[v] for v in final_scope])
    for factor in factors:
        result = result + _aligned(factor, final_scope)
    return np.asarray(result)
