"""Max-sum elimination (`evaluation/factors.py`) against the whole joint table it avoids building: every
variable kept in turn or none, a variable no factor mentions, and the slice-by-slice path for tables above
the chunk size (found unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

from pytest_toolsandbox.evaluation import factors
from pytest_toolsandbox.evaluation.factors import Factor, align_axes, maximise

DOMAINS = {0: 2, 1: 3, 2: 4, 3: 2, 4: 3}
"""Variable 4 is in no factor: it ranges over its domain without changing any sum."""


def some_factors() -> list[Factor]:
    """A three-variable table, factors sharing some of its variables, and one over a variable of its own."""
    rng = np.random.default_rng(33)

    def table(*variables: int) -> np.ndarray:
        return rng.integers(0, 16, [DOMAINS[v] for v in variables]) / 8.0  # dyadic: every sum is exact

    return [Factor((0, 1, 2), table(0, 1, 2)), Factor((2, 3), table(2, 3)), Factor((1,), table(1)),
            Factor((3, 0), table(3, 0)), Factor((0, 1, 2), table(0, 1, 2))]


def joint_maximum(factors_: list[Factor], keep: int | None) -> np.ndarray:
    """The specification: add every factor over all variables at once, then maximise all but `keep`."""
    scope = tuple(DOMAINS)
    total = np.zeros([DOMAINS[v] for v in scope])
    for factor in factors_:
        total = total + align_axes(factor.table, factor.variables, scope)
    others = tuple(axis for axis, variable in enumerate(scope) if variable != keep)
    return total.max(axis=others)


@pytest.mark.parametrize("keep", [None, 0, 1, 2, 3, 4])
@pytest.mark.parametrize("chunk_cells", [factors._CHUNK_CELLS, 1], ids=["whole tables", "slice by slice"])
def test_elimination_equals_the_maximum_of_the_joint_table(keep: int | None, chunk_cells: int) -> None:
    with mock.patch.object(factors, "_CHUNK_CELLS", chunk_cells):
        result = maximise(some_factors(), DOMAINS, keep)
    expected = joint_maximum(some_factors(), keep)
    assert result.shape == expected.shape == (() if keep is None else (DOMAINS[keep],))
    assert result.tolist() == expected.tolist()


def test_a_single_variable_over_more_cells_than_a_chunk_is_maximised_at_once() -> None:
    # Slicing needs a second axis to slice along; a lone variable's table is small enough anyway.
    size = factors._CHUNK_CELLS + 1
    values = np.zeros(size)
    values[size // 2] = 1.0
    assert maximise([Factor((0,), values)], {0: size}).tolist() == 1.0
