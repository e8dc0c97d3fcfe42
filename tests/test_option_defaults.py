"""Each default is written once: what `--help` says an option defaults to is what a run gets without it,
and the settings, the model requests and the rate limiter start from the same constants."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.basics import gate_defaults, run_defaults
from pytest_toolsandbox.basics.limits import Limits
from pytest_toolsandbox.options import OPTIONS, Found, Option, OptionError, read_settings
from pytest_toolsandbox.recording.ratelimit import Limits as RateLimits
from pytest_toolsandbox.roles.retry import RetryPolicy


def _lookup(values: dict[str, Any]) -> Any:
    def lookup(option: Option) -> Found:
        return Found(values.get(option.flag, option.default), Path.cwd(), option.flag in values)
    return lookup


def _shown_default(option: Option) -> str | None:
    found = re.search(r"\(default: ([^);]+)\)?", option.help)
    return found[1] if found else None


@pytest.mark.parametrize("option", [option for option in OPTIONS if option.default not in ("", [])],
                         ids=lambda option: option.flag)
def test_the_help_names_the_default_the_option_has(option: Option) -> None:
    default = option.default if isinstance(option.default, str) else ",".join(option.default)

    assert _shown_default(option) == default


def test_a_run_without_options_gets_the_documented_defaults(tmp_path: Path) -> None:
    settings = read_settings(_lookup({"--report-dir": str(tmp_path / "report")}), tmp_path)
    model = settings.model_options
    assert model is not None

    assert settings.trials == run_defaults.DEFAULT_TRIALS
    assert settings.episode_timeout == run_defaults.DEFAULT_EPISODE_TIMEOUT
    assert settings.max_request_tokens == run_defaults.DEFAULT_MAX_REQUEST_TOKENS
    assert (model.max_tokens, model.timeout, model.retries, model.retry_delay) == (
        run_defaults.DEFAULT_MAX_TOKENS, run_defaults.DEFAULT_REQUEST_TIMEOUT, run_defaults.DEFAULT_RETRIES,
        run_defaults.DEFAULT_RETRY_DELAY)
    assert settings.limits == Limits()
    assert (settings.baseline_alpha, settings.baseline_min_effect) == (
        gate_defaults.DEFAULT_ALPHA, gate_defaults.DEFAULT_MIN_EFFECT)


def test_the_retry_policy_and_the_rate_limits_start_from_the_same_defaults() -> None:
    policy, limits = RetryPolicy(), RateLimits()

    assert (policy.retries, policy.base_delay) == (run_defaults.DEFAULT_RETRIES, run_defaults.DEFAULT_RETRY_DELAY)
    assert (limits.rpm, limits.tpm, limits.max_request_tokens) == (
        run_defaults.DEFAULT_RPM, run_defaults.DEFAULT_TPM, run_defaults.DEFAULT_MAX_REQUEST_TOKENS)


@pytest.mark.parametrize(("alpha", "refused"), [(0.0, True), (1.0, True), (-0.1, True), (1e-9, False),
                                                 (0.999, False), (0.05, False)])
def test_one_alpha_bound_for_the_plugin_and_compare(alpha: float, refused: bool, tmp_path: Path) -> None:
    problem = gate_defaults.alpha_problem(alpha)
    assert (problem is not None) == refused
    lookup = _lookup({"--report-dir": str(tmp_path / "report"), "--baseline-alpha": str(alpha)})
    if refused:
        with pytest.raises(OptionError) as error:
            read_settings(lookup, tmp_path)
        assert str(error.value) == f"--baseline-alpha / toolsandbox_baseline_alpha: {problem}"
    else:
        assert read_settings(lookup, tmp_path).baseline_alpha == alpha


@pytest.mark.parametrize(("min_effect", "refused"), [(-0.01, True), (1.01, True), (0.0, False), (1.0, False)])
def test_one_min_effect_bound_for_the_plugin_and_compare(min_effect: float, refused: bool, tmp_path: Path) -> None:
    problem = gate_defaults.min_effect_problem(min_effect)
    assert (problem is not None) == refused
    lookup = _lookup({"--report-dir": str(tmp_path / "report"), "--baseline-min-effect": str(min_effect)})
    if refused:
        with pytest.raises(OptionError) as error:
            read_settings(lookup, tmp_path)
        assert str(error.value) == f"--baseline-min-effect / toolsandbox_baseline_min_effect: {problem}"
    else:
        assert read_settings(lookup, tmp_path).baseline_min_effect == min_effect
