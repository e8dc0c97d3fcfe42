"""`--max-spend` and `--max-run-tokens` against a loopback OpenAI-compatible server that reports usage,
priced with a LiteLLM-format price table: no episode starts once the cap is reached, finished results
stay, the summary is partial with the reason, the exit status is 2, and `--resume` completes the run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fake_provider import Behaviour, FakeProvider
from tests.test_plugin_support import run, summary, write_suite

PRICES = {  # LiteLLM's layout: USD per token; other fields are ignored
    "fake": {"input_cost_per_token": 1e-4, "output_cost_per_token": 2e-4, "litellm_provider": "openai",
             "max_tokens": 4096, "mode": "chat"},
    "sample_spec": {"max_tokens": "set to max output tokens"},
}


@pytest.fixture
def provider(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    monkeypatch.delenv("CI", raising=False)
    write_suite(pytester)
    (pytester.path / "prices.json").write_text(json.dumps(PRICES))
    with FakeProvider(Behaviour(delay=0.0, max_concurrent=64)) as server:
        yield server


def model_run(pytester: pytest.Pytester, server: FakeProvider, *extra: str, name: str) -> pytest.RunResult:
    return run(pytester, "--agent", "openai:fake", "--model-base-url", server.url + "/v1", "--trials", "2",
               "--price-table", "prices.json", "--cassette-dir", f"cassettes-{name}", "--report-dir", f"report-{name}",
               *extra)


def spends(data: dict[str, Any]) -> list[float]:
    return [record["spend_usd"]["total"] for record in data["records"]]


def test_max_spend_stops_starting_episodes_at_the_cap(pytester: pytest.Pytester, provider: FakeProvider) -> None:
    model_run(pytester, provider, "--concurrency", "1", name="full")
    full = summary(pytester, "report-full")
    per_item = spends(full)
    assert len(per_item) == 8 and all(spend > 0 for spend in per_item)  # priced from the LiteLLM table
    cap = sum(per_item[:3]) - per_item[2] / 2  # reached by the third item

    result = model_run(pytester, provider, "--concurrency", "1", "--max-spend", f"{cap}", name="capped")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = summary(pytester, "report-capped")
    assert data["partial"] is True and data["counts"]["finished"] == 3 and len(data["unfinished"]) == 5
    assert data["stop_reason"].startswith(f"--max-spend ${cap:g} reached")
    assert sum(spends(data)[:2]) < cap <= sum(spends(data))  # no episode started after the cap was reached
    assert data["counts"]["error"] == 0
    assert "stopped starting episodes: --max-spend" in result.stdout.str()
    assert not (pytester.path / "report-capped" / ".toolsandbox-budget-reached").exists()
    assert "items finished (--max-spend $" in (pytester.path / "report-capped" / "index.html").read_text()

    resumed = model_run(pytester, provider, "--concurrency", "1", "--resume", "report-capped", name="capped")
    assert resumed.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    done = summary(pytester, "report-capped")
    assert done["partial"] is False and done["counts"]["finished"] == 8 and done["stop_reason"] is None


def test_running_episodes_finish_when_the_cap_is_reached(pytester: pytest.Pytester, provider: FakeProvider) -> None:
    # 16 items; two episodes at a time, eight handed to the scheduler ahead of their items (running/ahead.py)
    result = model_run(pytester, provider, "--trials", "4", "--concurrency", "2", "--max-run-tokens", "1",
                       name="concurrent")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = summary(pytester, "report-concurrent")
    assert data["partial"] is True and data["stop_reason"].startswith("--max-run-tokens 1 reached")
    assert 1 <= data["counts"]["finished"] <= 8 and data["counts"]["expected"] == 16
    assert data["counts"]["error"] == 0
    # the episodes playing when the cap was reached were not cut short: every request the server answered
    # belongs to a kept result (an item dropped while its episode played would leave requests unaccounted)
    assert provider.stats().served == sum(record["tokens"]["agent"]["requests"] for record in data["records"])


def test_the_cap_holds_across_xdist_workers(pytester: pytest.Pytester, provider: FakeProvider) -> None:
    result = model_run(pytester, provider, "-n", "2", "--concurrency", "1", "--max-run-tokens", "1", name="xdist")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = summary(pytester, "report-xdist")
    assert data["partial"] is True and data["stop_reason"].startswith("--max-run-tokens 1 reached")
    assert data["counts"]["finished"] < 8 and data["counts"]["error"] == 0


def test_a_price_table_that_is_not_json_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    (pytester.path / "prices.json").write_text("{not json")
    result = run(pytester, "--price-table", "prices.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "prices.json: not a JSON price table" in result.stderr.str()


def test_a_zero_spend_cap_means_no_spending_not_one_item(pytester: pytest.Pytester, provider: FakeProvider) -> None:
    model_run(pytester, provider, "--concurrency", "1", name="zero")
    replayed = model_run(pytester, provider, "--concurrency", "1", "--max-spend", "0", "--ts-record-mode", "none",
                         name="zero")
    assert replayed.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)  # spends nothing: runs to the end
    data = summary(pytester, "report-zero")
    assert data["partial"] is False and data["counts"]["finished"] == 8 and set(spends(data)) == {0.0}

    live = model_run(pytester, provider, "--concurrency", "1", "--max-spend", "0", name="zero-live")
    assert live.ret == pytest.ExitCode.INTERRUPTED
    data = summary(pytester, "report-zero-live")
    assert data["counts"]["finished"] == 1 and data["stop_reason"].startswith("--max-spend $0 reached")
