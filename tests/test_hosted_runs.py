"""Hosted-model runs end to end against loopback servers that enforce the APIs' rules: a reasoning model
plays every item, an Anthropic whitespace turn is scored, usage of items that error is counted and seen by
the caps, usage a server does not report is said to defeat the caps, retries show in the summary."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fake_provider import Behaviour, FakeProvider
from tests.llm_server import (
    CHAT,
    MESSAGES,
    ScriptedServer,
    anthropic_calls,
    anthropic_text,
    error,
    openai_calls,
    openai_text,
)
from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.delenv("CI", raising=False)
    with ScriptedServer() as running:
        yield running


def test_a_reasoning_model_plays_every_item(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    write_suite(pytester)
    with FakeProvider(Behaviour(delay=0.0)) as fake:
        result = run(pytester, "--agent", "openai:o4-mini", "--model-base-url", fake.url + "/v1",
                     "--reasoning-effort", "low")
        stats = fake.stats()
    data = summary(pytester)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert data["counts"]["error"] == 0 and all(record["score"] is not None for record in data["records"])
    assert stats.rejected == 0 and stats.served == data["usage"]["tokens"]["agent"]["requests"] > 4


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--reasoning-effort", "extreme", "'extreme' is not an effort; use one of minimal, low, medium, high"),
    ("--param-style", "openai:x=fast", "'openai:x=fast' is not [SPEC=]STYLE"),
])
def test_bad_model_parameters_are_one_line_usage_errors(pytester: pytest.Pytester, option: str, value: str,
                                                        message: str) -> None:
    write_suite(pytester)
    result = run(pytester, option, value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and message in result.stderr.str()


def test_a_whitespace_turn_does_not_break_the_next_anthropic_request(pytester: pytest.Pytester,
                                                                     server: ScriptedServer,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(MESSAGES, anthropic_text("\n\n"), anthropic_calls(("toolu_9", "end_conversation", {})))
    run(pytester, "--agent", "anthropic:claude-test", "--user", "llm", "--model-base-url", server.url,
        "--llm-retry-delay", "0")
    record = summary(pytester)["records"][0]
    assert record["outcome"] == "failed" and record["score"] is not None  # scored, not an infrastructure error
    assert server.rejected == [] and len(server.bodies(MESSAGES)) == 2


def test_an_item_that_errors_keeps_its_usage_and_the_cap_counts_it(pytester: pytest.Pytester,
                                                                   server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, openai_calls(("c1", "set_wifi_status", {"on": False})),
                openai_calls(("c2", "set_wifi_status", {"on": False})), error(500, forever=True))
    result = run(pytester, "--agent", "openai:test-model", "--model-base-url", server.url + "/v1", "--trials", "2",
                 "--llm-retries", "1", "--llm-retry-delay", "0", "--concurrency", "1", "--max-run-tokens", "200")
    data = summary(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED and data["stop_reason"].startswith("--max-run-tokens 200")
    (record,) = data["records"]
    assert record["outcome"] == "error"
    assert record["tokens"]["agent"] == {"input_tokens": 200, "output_tokens": 40, "requests": 2, "retries": 1,
                                         "unknown_usage": 0}
    assert data["usage"]["tokens"]["agent"]["requests"] + 2 == len(server.received)  # + the two 500s


def test_usage_a_server_does_not_report_is_unknown_and_the_cap_says_so_once(pytester: pytest.Pytester,
                                                                            server: ScriptedServer) -> None:
    write_suite(pytester)
    reply = openai_text("Done.")
    reply.body["usage"] = {"prompt_tokens": float("nan"), "completion_tokens": "12abc"}
    reply.forever = True
    server.push(CHAT, reply)
    result = run(pytester, "--agent", "openai:test-model", "--model-base-url", server.url + "/v1",
                 "--max-run-tokens", "50")
    data = summary(pytester)
    assert data["counts"]["error"] == 0 and data["counts"]["finished"] == 4 and data["stop_reason"] is None
    assert data["usage"]["tokens"]["agent"]["unknown_usage"] == 4 == data["usage"]["tokens"]["agent"]["requests"]
    output = result.stdout.str()
    assert output.count("reported no valid token usage") == 1 and "--max-run-tokens cannot count them" in output
    assert "4 requests, 4 without valid usage, not counted" in output


def test_retries_are_counted_per_item_and_shown(pytester: pytest.Pytester, server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, error(429, headers={"retry-after": "0"}), openai_calls(("c1", "set_wifi_status", {"on": False})),
                error(500), openai_text("Wifi is off now."))
    result = run(pytester, "--agent", "openai:test-model", "--model-base-url", server.url + "/v1",
                 "--llm-retry-delay", "0")
    result.assert_outcomes(passed=1)
    assert summary(pytester)["records"][0]["tokens"]["agent"]["retries"] == 2
    assert summary(pytester)["usage"]["tokens"]["agent"]["retries"] == 2
    assert "(2 requests, 2 retried)" in result.stdout.str()


SLOW_START_MARGIN = 8
"""Seconds of --episode-timeout: the first exchange must fit in it on a loaded machine (2 s did not always),
and it stays under the 10 s that --rpm 6 holds a second request."""


def test_a_request_on_its_way_at_the_episode_timeout_is_counted(pytester: pytest.Pytester,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The server answers the first request and holds the second: the episode times out while it waits.
    The provider bills that request, so the item counts it (of unknown usage: its answer is never read)."""
    monkeypatch.delenv("CI", raising=False)
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    with FakeProvider(Behaviour(delay=0.0, answer_at_most=1)) as fake:
        result = run(pytester, "--agent", "openai:test-model", "--model-base-url", fake.url + "/v1",
                     "--episode-timeout", str(SLOW_START_MARGIN), "--llm-retries", "0")
        arrived = fake.stats().arrived
    result.assert_outcomes(errors=1)
    (record,) = summary(pytester)["records"]
    assert "--episode-timeout" in record["error"] and arrived == 2
    agent = record["tokens"]["agent"]
    assert (agent["requests"], agent["unknown_usage"]) == (2, 1) and agent["input_tokens"] > 0


def test_a_request_held_by_the_rate_limit_at_the_episode_timeout_is_not_counted(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """--rpm 6 holds the second request for 10 s: the episode times out (at 8 s) before it is sent, so it
    costs nothing."""
    from pytest_toolsandbox.recording.ratelimit import configure_limits

    monkeypatch.delenv("CI", raising=False)
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    with FakeProvider(Behaviour(delay=0.0)) as fake:
        try:
            result = run(pytester, "--agent", "openai:test-model", "--model-base-url", fake.url + "/v1",
                         "--episode-timeout", str(SLOW_START_MARGIN), "--rpm", "6")
        finally:
            configure_limits(None, None)
        arrived = fake.stats().arrived
    result.assert_outcomes(errors=1)
    agent = summary(pytester)["records"][0]["tokens"]["agent"]
    assert arrived == 1 and (agent["requests"], agent["unknown_usage"]) == (1, 0)
