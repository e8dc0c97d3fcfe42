"""Usage and spend accounting from the price table."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.report.results.usage import cost, price, usage_fields, usage_line, usage_totals
from pytest_toolsandbox.roles.model_spec import FIXED_ALIASES


def test_every_fixed_alias_has_a_price_and_snapshots_match_by_prefix() -> None:
    """(The Claude aliases follow the SDK to models the bundled table may not list yet: docs/plugin.md, Models.)"""
    assert all(price(model) is not None for _, model in FIXED_ALIASES.values())
    assert price("claude-sonnet-4-5-20250929") == price("claude-sonnet-4-5")
    assert price("gpt-4o-mini-2024-07-18") == price("gpt-4o-mini") != price("gpt-4o")
    assert price("qwen2.5-coder") is None


def test_cost_is_list_price_and_zero_when_replayed() -> None:
    tokens = {"input_tokens": 1_000_000, "output_tokens": 100_000, "requests": 3}
    assert cost("gpt-4o", tokens) == pytest.approx(2.5 + 1.0)
    live = usage_fields({"agent": tokens, "user": tokens}, {"agent": "gpt-4o", "user": "gpt-4o-mini"}, False)
    assert live["spend_usd"]["total"] == pytest.approx(3.5 + 0.15 + 0.06)
    replayed = usage_fields({"agent": tokens, "user": None}, {"agent": "gpt-4o"}, True)
    assert replayed == {"spend_usd": {"agent": 0.0, "user": None, "total": 0.0}, "replayed": True}
    unpriced = usage_fields({"agent": tokens, "user": None}, {"agent": "local-model"}, False)
    assert unpriced["spend_usd"]["total"] is None


def test_totals_and_terminal_line() -> None:
    tokens = {"input_tokens": 10, "output_tokens": 2, "requests": 1}
    records = [{"tokens": {"agent": tokens, "user": None}, **usage_fields({"agent": tokens}, {"agent": "gpt-4o"}, r)}
               for r in (False, True)]
    totals = usage_totals(records)
    assert totals["tokens"]["agent"] == {"input_tokens": 20, "output_tokens": 4, "requests": 2, "retries": 0,
                                         "unknown_usage": 0}
    assert totals["spend_usd"] == pytest.approx((10 * 2.5 + 2 * 10) / 1e6) and totals["replayed_items"] == 1
    assert usage_line(totals).startswith("usage: agent 20 in / 4 out tokens (2 requests); spend $0.0000; 1 item")
    assert usage_line(usage_totals([{"tokens": {"agent": None, "user": None}}])) is None
