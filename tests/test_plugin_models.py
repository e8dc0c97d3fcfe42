"""Model agents in pytest runs: cassettes record and replay whole episodes, misses explain themselves,
API failures are errors apart from scores, and missing cassettes or keys stop the run at once."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

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
from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite, xzcat
from tests.test_plugin_xdist import stable

CASSETTE = Path("cassettes/scenarios/settings/wifi_off/openai_test-model--scripted/base-t1.yaml.xz")
SECRET = "sk-test-SECRET-0123456789"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # sent as Authorization; must never reach a cassette
    with ScriptedServer() as running:
        yield running


def wifi_script() -> list:
    return [openai_calls(("call_1", "set_wifi_status", {"on": False})), openai_text("Wifi is off now.")]


def model_args(server: ScriptedServer, *extra: str) -> tuple[str, ...]:
    return ("--agent", "openai:test-model", "--model-base-url", server.url + "/v1", "--llm-retry-delay", "0", *extra)


def trajectory_file(pytester: pytest.Pytester) -> str:
    return next((pytester.path / "toolsandbox-report" / "trajectories").rglob("*.json")).read_text()


def test_record_then_replay_offline_gives_the_same_episode(pytester: pytest.Pytester, server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, *wifi_script())
    run(pytester, *model_args(server)).assert_outcomes(passed=1)
    recorded, recorded_trajectory = summary(pytester), trajectory_file(pytester)
    cassette = xzcat(pytester.path / CASSETTE)
    assert cassette.count("uri: http://127.0.0.1") == 2
    assert recorded["records"][0]["tokens"]["agent"] == {"input_tokens": 200, "output_tokens": 40, "requests": 2,
                                                         "retries": 0, "unknown_usage": 0}
    server.stop()
    run(pytester, *model_args(server, "--ts-record-mode", "none")).assert_outcomes(passed=1)
    assert trajectory_file(pytester) == recorded_trajectory
    replayed = summary(pytester)["records"][0]
    assert replayed["score"] == recorded["records"][0]["score"] == 1.0
    assert replayed["tokens"] == recorded["records"][0]["tokens"]
    assert (recorded["records"][0]["replayed"], replayed["replayed"]) == (False, True)
    assert recorded["records"][0]["spend_usd"]["total"] is None  # test-model has no price
    assert replayed["spend_usd"] == {"agent": 0.0, "user": None, "total": 0.0}
    assert summary(pytester)["usage"]["replayed_items"] == 1
    assert not re.search(r"sk-|x-api-key: [^*]|authorization", cassette, re.IGNORECASE)
    assert SECRET not in cassette and "x-stainless" not in cassette


def test_a_changed_system_prompt_fails_with_a_diff(pytester: pytest.Pytester, server: ScriptedServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, *wifi_script())
    run(pytester, *model_args(server)).assert_outcomes(passed=1)
    monkeypatch.setattr("pytest_toolsandbox.scenario.world_builder.AGENT_SYSTEM_PROMPT", "You are a new prompt.")
    result = run(pytester, *model_args(server, "--ts-record-mode", "none"))
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert "request not in cassette" in output and "diff against the nearest recorded request" in output
    assert '+   "content": "You are a new prompt."' in output
    assert re.search(r'-   "content": "You are an assistant', output)
    assert len(server.bodies(CHAT)) == 2  # replay never reached the server


def test_an_api_failing_for_good_is_an_error_apart_from_scores(pytester: pytest.Pytester,
                                                               server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, error(500, forever=True))
    result = run(pytester, *model_args(server, "--llm-retries", "2"))
    result.assert_outcomes(errors=1)
    assert "openai:test-model: HTTP 500" in result.stdout.str() and "after 3 attempt(s)" in result.stdout.str()
    data = summary(pytester)
    assert data["records"][0]["outcome"] == "error" and data["records"][0]["score"] is None
    assert len(server.bodies(CHAT)) == 3
    assert not (pytester.path / CASSETTE).exists()  # a failed episode leaves no cassette to replay


def test_rate_limit_then_success_records_only_the_success(pytester: pytest.Pytester, server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, error(429, headers={"retry-after": "0"}), *wifi_script())
    run(pytester, *model_args(server)).assert_outcomes(passed=1)
    cassette = xzcat(pytester.path / CASSETTE)
    assert cassette.count("uri: http://127.0.0.1") == 2 and "code: 429" not in cassette


def test_anthropic_episode_records_and_replays(pytester: pytest.Pytester, server: ScriptedServer,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(MESSAGES, anthropic_calls(("toolu_1", "set_wifi_status", {"on": False})),
                anthropic_text("Wifi is off now."))
    arguments = ("--agent", "anthropic:test-model", "--model-base-url", server.url)
    run(pytester, *arguments).assert_outcomes(passed=1)
    server.stop()
    run(pytester, *arguments, "--ts-record-mode", "none").assert_outcomes(passed=1)
    text = "".join(xzcat(path) for path in (pytester.path / "cassettes").rglob("*.yaml.xz"))
    assert SECRET not in text and not re.search(r"sk-|x-api-key: [^*]|authorization", text, re.IGNORECASE)


def test_missing_cassettes_in_replay_mode_stop_the_run_with_one_message(pytester: pytest.Pytester,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    write_suite(pytester)
    result = run(pytester, "--agent", "gpt-4o", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert output.count("no cassettes for gpt-4o--scripted under cassettes/") == 1 and "$CI is set" in output
    assert re.search(r"\n  pytest .*--agent gpt-4o -n 2 .*--ts-record-mode=once", output)
    assert "created: 2/2 workers" not in output  # stopped before xdist started its workers
    assert not (pytester.path / "toolsandbox-report" / "summary.json").exists()


def test_some_missing_cassettes_stop_the_run_after_collection(pytester: pytest.Pytester, server: ScriptedServer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, *wifi_script())
    run(pytester, *model_args(server)).assert_outcomes(passed=1)
    write_suite(pytester, {"scenarios/settings/wifi_off_too.yaml": WIFI_OFF})
    monkeypatch.setenv("CI", "1")
    result = run(pytester, *model_args(server, "-n", "2"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert output.count("have no cassette") == 1 and "1 of 2 item(s)" in output
    assert "wifi_off_too/openai_test-model--scripted/base-t1.yaml" in output
    assert len(server.bodies(CHAT)) == 2  # nothing ran: only the first recording reached the server


def test_a_missing_key_stops_the_run_before_any_item(pytester: pytest.Pytester,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    write_suite(pytester)
    result = run(pytester, "--agent", "claude")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert output.count("ANTHROPIC_API_KEY is not set") == 1
    assert re.search(r"\n  ANTHROPIC_API_KEY=\.\.\. pytest .*--agent claude", output)


def test_a_missing_key_with_some_cassettes_stops_after_collection(pytester: pytest.Pytester,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    write_suite(pytester)
    recorded = pytester.path / "cassettes/scenarios/settings/wifi_off/claude--scripted/base-t1.yaml.xz"
    recorded.parent.mkdir(parents=True)
    recorded.write_text("interactions: []\nversion: 1\n")
    result = run(pytester, "--agent", "claude")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str()
    assert output.count("ANTHROPIC_API_KEY is not set") == 1 and "3 item(s) must be recorded" in output
    result.assert_outcomes()


def test_recorded_serially_replays_identically_under_xdist(pytester: pytest.Pytester,
                                                           server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF,
                           "scenarios/settings/wifi_off_again.yaml": WIFI_OFF})
    server.push(CHAT, *wifi_script(), *wifi_script())
    run(pytester, *model_args(server, "-n", "0", "--concurrency", "1")).assert_outcomes(passed=2)
    recorded = summary(pytester)
    server.stop()
    run(pytester, *model_args(server, "-n", "0", "--ts-record-mode", "none")).assert_outcomes(passed=2)
    serial = summary(pytester)
    run(pytester, *model_args(server, "-n", "2", "--ts-record-mode", "none")).assert_outcomes(passed=2)
    parallel = summary(pytester)
    assert json.dumps(stable(parallel), sort_keys=True) == json.dumps(stable(serial), sort_keys=True)
    assert serial["usage"]["replayed_items"] == 2 and recorded["usage"]["replayed_items"] == 0
    assert [r["score"] for r in recorded["records"]] == [r["score"] for r in parallel["records"]] == [1.0, 1.0]


def test_a_simulator_hanging_up_early_is_flagged(pytester: pytest.Pytester, server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, openai_text("Let me think about wifi."), openai_calls(("e", "end_conversation", {})))
    result = run(pytester, *model_args(server, "--user", "openai:test-model"))
    result.assert_outcomes(failed=1)
    assert "user_sim_suspect: ended_early" in result.stdout.str()
    record = summary(pytester)["records"][0]
    assert record["user_sim_suspect"][0].startswith("ended_early") and record["user"] == "openai:test-model"
    assert record["tokens"]["user"]["requests"] == 1
    flagged = summary(pytester)["aggregates"]["openai:test-model"]["all"]
    assert (flagged["user_sim_checked"], flagged["user_sim_suspect"]) == (1, 1)
    assert re.search(r"user suspect +errors", result.stdout.str())  # the terminal table's column
    assert "1 user-sim suspect" in (pytester.path / "toolsandbox-report/index.html").read_text(encoding="utf-8")
    assert (pytester.path / "cassettes/scenarios/settings/wifi_off/openai_test-model--openai_test-model"
            / "base-t1.yaml.xz").is_file()


def test_user_llm_takes_the_agents_model_and_needs_a_model_agent(pytester: pytest.Pytester,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    result = run(pytester, "--agent", "gpt-4o", "--user", "llm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "no cassettes for gpt-4o--gpt-4o" in result.stderr.str()
    result = run(pytester, "--user", "llm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--user llm: no --agent is a model" in result.stderr.str()


def test_a_missing_sdk_stops_the_run_with_one_install_message(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    # A conftest that makes the openai SDK and vcrpy look uninstalled, as after `pip install pytest-toolsandbox`.
    pytester.makeconftest("import sys\nsys.modules['openai'] = None\nsys.modules['vcr'] = None\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--agent", "openai:some-model",
                                           "--model-base-url", "http://127.0.0.1:9/v1")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert output.count("model agents and users need openai, vcrpy, which are not installed") == 1
    assert "pip install 'pytest-toolsandbox[openai,record]'" in output and "ModuleNotFoundError" not in output


def test_a_model_id_of_300_characters_records_and_replays(pytester: pytest.Pytester, server: ScriptedServer) -> None:
    """File names are bounded (cut, with a hash of the whole): no 'File name too long' after the episode."""
    model = "openai:" + "a-very-long-model-name/" * 13
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, *wifi_script())
    arguments = ("--agent", model, "--agent", "reference", "--model-base-url", server.url + "/v1",
                 "--llm-retry-delay", "0")
    run(pytester, *arguments).assert_outcomes(passed=2)
    [cassette] = (pytester.path / "cassettes").rglob("*.yaml.xz")
    assert all(len(part) <= 120 for part in cassette.relative_to(pytester.path).parts)
    server.stop()
    run(pytester, *arguments, "--ts-record-mode", "none").assert_outcomes(passed=2)
    names = [path.name for path in (pytester.path / "toolsandbox-report" / "trajectories").rglob("*.*")]
    assert len(names) == 4 and all(len(name) <= 125 for name in names)  # two items' JSON and page
