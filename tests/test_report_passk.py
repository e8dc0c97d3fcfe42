"""pass^k = mean over tasks of C(c, k) / C(n, k)."""

from __future__ import annotations

from math import comb

import pytest

from pytest_toolsandbox.report.results.passk import pass_hat_k, pass_hat_ks


def test_single_task_is_the_hypergeometric_ratio() -> None:
    trials = {"task": [True, True, False, True, False]}  # n=5, c=3
    assert pass_hat_k(trials, 1) == pytest.approx(3 / 5)
    assert pass_hat_k(trials, 2) == pytest.approx(comb(3, 2) / comb(5, 2))
    assert pass_hat_k(trials, 3) == pytest.approx(1 / 10)
    assert pass_hat_k(trials, 4) == 0.0


def test_mean_over_tasks_and_tasks_with_too_few_trials() -> None:
    trials = {"a": [True, True], "b": [True, False], "c": [True]}
    assert pass_hat_k(trials, 1) == pytest.approx((1 + 0.5 + 1) / 3)
    assert pass_hat_k(trials, 2) == pytest.approx((1 + 0) / 2)  # c: one pass, cannot be estimated for k=2
    assert pass_hat_k(trials, 3) == 0.0  # b already failed once in two trials: counts 0; a and c left out
    assert pass_hat_k({"a": [True]}, 2) is None
    assert pass_hat_ks(trials, [1, 2]) == {"1": pytest.approx(2.5 / 3), "2": pytest.approx(0.5)}


def test_a_task_that_lost_trials_to_errors_and_failed_is_not_dropped() -> None:
    """Trials 4: task a passed all, task b failed its 3 scored trials (the 4th was an infrastructure
    error). pass^4 must not rise above pass^3 by dropping b."""
    trials = {"a": [True] * 4, "b": [False] * 3}
    values = [pass_hat_k(trials, k) for k in range(1, 5)]
    assert values == [0.5, 0.5, 0.5, 0.5]


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        pass_hat_k({"a": [True]}, 0)
