"""pass^k: the chance that k independent trials of a task all pass, averaged over tasks.

For a task run n times with c passes, C(c, k) / C(n, k) is the unbiased estimate of that chance
(tau-bench's definition). A task with fewer than k scored trials (its other trials were
infrastructure errors, or the run stopped early) cannot be estimated that way: when one of its n
trials failed, its estimate of "n passes in a row" is already 0 and k > n passes in a row can only
be rarer, so it counts 0; when all n passed, it is left out. Dropping failed tasks instead would
let pass^k rise with k and show an errored task as perfect.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from math import comb
from typing import TypeVar

Task = TypeVar("Task")
"""Whatever identifies a task (its trials are pooled under it)."""


def _estimate(passes: Sequence[bool], k: int) -> float | None:
    n, c = len(passes), sum(passes)
    if n >= k:
        return comb(c, k) / comb(n, k)
    return 0.0 if c < n else None


def pass_hat_k(trials: Mapping[Task, Sequence[bool]], k: int) -> float | None:
    """Mean over tasks of C(c, k) / C(n, k); None when no task can be estimated."""
    if k < 1:
        raise ValueError("k must be at least 1")
    estimates = [value for passes in trials.values() if (value := _estimate(passes, k)) is not None]
    return sum(estimates) / len(estimates) if estimates else None


def pass_hat_ks(trials: Mapping[Task, Sequence[bool]], ks: Iterable[int]) -> dict[str, float | None]:
    """pass^k for several k, keyed by str(k) so the mapping survives JSON unchanged."""
    return {str(k): pass_hat_k(trials, k) for k in ks}
