"""pass^k: the chance that k independent trials of a task all pass, averaged over tasks.

For a task run n times with c passes, C(c, k) / C(n, k) is the unbiased estimate of that chance
(tau-bench's definition); tasks with fewer than k finished trials cannot be estimated and are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from math import comb


def pass_hat_k(trials: Mapping[object, Sequence[bool]], k: int) -> float | None:
    """Mean over tasks of C(c, k) / C(n, k); None when no task has k trials."""
    if k < 1:
        raise ValueError("k must be at least 1")
    estimates = [comb(sum(passes), k) / comb(len(passes), k) for passes in trials.values() if len(passes) >= k]
    return sum(estimates) / len(estimates) if estimates else None


def pass_hat_ks(trials: Mapping[object, Sequence[bool]], ks: Iterable[int]) -> dict[str, float | None]:
    """pass^k for several k, keyed by str(k) so the mapping survives JSON unchanged."""
    return {str(k): pass_hat_k(trials, k) for k in ks}
