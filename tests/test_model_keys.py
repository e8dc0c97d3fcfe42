"""Hosted models as they are today (issue 34): replays need no key, aliases follow the installed SDK and are
pinned per cassette, a deprecated model is named once, a retired or unknown model and an exhausted quota stop
the run with one line, and no credential of a URL or an echoed header reaches any output (issue 32)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from pytest_toolsandbox.basics.limits import truncated
from pytest_toolsandbox.recording.cassettes import _scrub_response, cassette_path, pair_folder, role_slug
from pytest_toolsandbox.recording.pins import pins_path
from pytest_toolsandbox.recording.secrets import is_secret_parameter, scrub_text
from pytest_toolsandbox.roles.model_catalog import deprecated_models, known_models, resolve_family
from pytest_toolsandbox.roles.model_spec import parse_model_spec
from tests.llm_server import CHAT, MESSAGES, Reply, ScriptedServer, anthropic_calls, anthropic_text
from tests.test_plugin_support import HALF, WIFI_OFF, run, summary, write_suite

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-ant-test-KEY-0123456789"
CLAUDE = parse_model_spec("claude")
assert CLAUDE is not None
CASSETTE = Path("cassettes/scenarios/settings/wifi_off/claude--scripted/base-t1.yaml.xz")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedServer() as running:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", running.url)  # the SDK's own variable: no --model-base-url
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        yield running


def wifi_script() -> list[Reply]:
    return [anthropic_calls(("toolu_1", "set_wifi_status", {"on": False})), anthropic_text("Wifi is off now.")]


def test_claude_is_the_newest_sonnet_the_sdk_does_not_flag() -> None:
    assert CLAUDE.model in known_models("anthropic")
    assert CLAUDE.model not in deprecated_models("anthropic")
    assert CLAUDE.model != "claude-sonnet-4-5-20250929"  # end-of-life 2026-11-30 per anthropic 2.14.0
    sonnets = [model for model in known_models("anthropic") if model.startswith("claude-sonnet-")
               and model not in deprecated_models("anthropic")]
    def version(model: str) -> tuple[int, ...]:
        return tuple(int(number) for number in re.findall(r"\d+", model))

    assert CLAUDE.model in sonnets and all(version(other) <= version(CLAUDE.model) for other in sonnets)


def test_replay_needs_no_key_and_keeps_the_model_the_cassette_pinned(
        pytester: pytest.Pytester, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(MESSAGES, *wifi_script())
    run(pytester, "--agent=claude", "--llm-retry-delay=0").assert_outcomes(passed=1)
    assert server.bodies(MESSAGES)[0]["model"] == CLAUDE.model
    assert json.loads(pins_path(pytester.path / CASSETTE).read_text()) == {"models": {"claude": CLAUDE.model}}
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("CI", "1")
    result = run(pytester, "--agent=claude")
    result.assert_outcomes(passed=1)
    assert "is not set" not in result.stdout.str()
    data = summary(pytester)
    assert data["usage"]["replayed_items"] == 1
    assert data["run"]["models"]["claude"] == {"model": f"anthropic:{CLAUDE.model}",
                                               "played": [f"anthropic:{CLAUDE.model}"], "answered": ["test-model"]}
    assert f"models: claude = anthropic:{CLAUDE.model}, answered by test-model" in result.stdout.str()
    assert f"claude = anthropic:{CLAUDE.model}" in (pytester.path / "toolsandbox-report" / "index.html").read_text()
    assert len(server.received) == 2  # the replay sent nothing


def test_a_cassette_recorded_before_pins_replays_with_the_model_its_requests_name(
        pytester: pytest.Pytester, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    pins_path(pytester.path / CASSETTE).parent.mkdir(parents=True)
    old = "claude-sonnet-4-5-20250929"  # what `claude` meant before anthropic 2.14.0 flagged it
    pins_path(pytester.path / CASSETTE).write_text(json.dumps({"models": {"claude": old}}))
    server.push(MESSAGES, *wifi_script())
    run(pytester, "--agent=claude").assert_outcomes(passed=1)
    assert {body["model"] for body in server.bodies(MESSAGES)} == {old}  # the pin wins
    pins_path(pytester.path / CASSETTE).unlink()  # as a cassette of an older version, before the alias moved
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = run(pytester, "--agent=claude", "--ts-record-mode=none")
    result.assert_outcomes(passed=1)
    output = result.stdout.str()
    assert f"models: claude = anthropic:{CLAUDE.model} (cassettes pinned to anthropic:{old})" in output
    assert len(re.findall(rf"cassettes pinned a model that is going away: anthropic:{old} is (deprecated|retired) "
                          rf"\(end-of-life 2026-11-30, per the anthropic SDK\); "
                          rf"use anthropic:{CLAUDE.model} \(--agent claude\)",
                          output)) == 1
    assert "DeprecationWarning" not in output


def test_the_header_names_the_model_behind_each_spec_and_a_likely_typo(pytester: pytest.Pytester,
                                                                        server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(MESSAGES, Reply(anthropic_text("Done.").body, forever=True))
    typo = CLAUDE.model.replace("sonnet", "sonet")
    output = run(pytester, "--agent=claude", f"--agent=anthropic:{typo}").stdout.str()
    header = output[:output.index("collected")]
    sdk = f"anthropic {metadata.version('anthropic')}"
    assert header.count(f"toolsandbox: claude = anthropic:{CLAUDE.model} (the newest current Sonnet in {sdk}") == 1
    assert (f"toolsandbox: anthropic:{typo} is not in the {sdk} model list; did you mean "
            f"anthropic:{CLAUDE.model}?") in header


def test_a_request_missing_from_the_cassette_is_not_sent_without_a_key(
        pytester: pytest.Pytester, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(MESSAGES, *wifi_script())
    run(pytester, "--agent=claude").assert_outcomes(passed=1)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    (pytester.path / "scenarios/settings/wifi_off.yaml").write_text(WIFI_OFF.replace("Please turn off", "Turn off"))
    result = run(pytester, "--agent=claude", "--ts-record-mode=new_episodes")
    result.assert_outcomes(errors=1)
    assert "ANTHROPIC_API_KEY is not set, and this request is not in the cassette" in result.stdout.str()
    assert len(server.received) == 2


def test_a_deprecated_model_is_named_once_and_the_sdk_warning_is_silenced(
        pytester: pytest.Pytester, server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF, "scenarios/settings/half.yaml": HALF})
    server.push(MESSAGES, Reply(anthropic_text("Done.").body, forever=True))
    result = run(pytester, "--agent=anthropic:claude-opus-4-5", "-p", "no:randomly")
    output = result.stdout.str()
    assert output.count("anthropic:claude-opus-4-5 is deprecated (end-of-life 2027-01-22") == 1
    assert f"use anthropic:{resolve_family('anthropic', 'opus')} (--agent claude-opus)" in output
    assert "DeprecationWarning" not in output
    assert len(server.received) >= 2
    quiet = run(pytester, "--agent=anthropic:claude-opus-4-5", "-q").stdout.str()  # no header: said at the end
    assert quiet.count("anthropic:claude-opus-4-5 is deprecated (end-of-life 2027-01-22") == 1


def test_a_retired_model_stops_the_run_before_its_first_item(pytester: pytest.Pytester,
                                                             server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF, "scenarios/settings/half.yaml": HALF})
    result = run(pytester, "--agent=anthropic:claude-mythos-preview")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.str().splitlines() if "claude-mythos-preview" in line]
    assert lines == ["ERROR: toolsandbox: anthropic:claude-mythos-preview was retired on 2026-06-30 (per the "
                     "anthropic SDK), so its requests would fail; choose a current model, or replay its cassettes "
                     "with --ts-record-mode=none"]
    assert server.received == []


def test_a_404_from_the_api_stops_the_run_at_the_first_request(pytester: pytest.Pytester,
                                                               server: ScriptedServer) -> None:
    files = {f"scenarios/settings/s{index}.yaml": WIFI_OFF for index in range(4)}
    write_suite(pytester, files)
    server.push(MESSAGES, Reply({"type": "error", "error": {"type": "not_found_error",
                                                            "message": "model: claude-sonnet-4-5-20250929"}},
                                status=404, forever=True))
    result = run(pytester, "--agent=anthropic:claude-sonnet-4-5-20250929", "--concurrency=1")  # 1 episode at a time
    assert result.ret == pytest.ExitCode.INTERRUPTED
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) <= 1 and "passed" not in outcomes and "failed" not in outcomes
    assert len(server.received) == 1
    data = summary(pytester)
    assert data["partial"] and ("anthropic:claude-sonnet-4-5-20250929 is not available (HTTP 404: model: "
                                "claude-sonnet-4-5-20250929)") in data["stop_reason"]  # the API's message
    assert f"use anthropic:{CLAUDE.model} (--agent claude)" in data["stop_reason"]


def test_an_exhausted_openai_quota_is_not_retried_and_stops_the_run(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-quota-0123456789")
    write_suite(pytester, {f"scenarios/settings/s{index}.yaml": WIFI_OFF for index in range(3)})
    with ScriptedServer() as openai:
        openai.push(CHAT, Reply({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                                           "code": "insufficient_quota"}}, status=429, forever=True))
        result = run(pytester, "--agent=openai:gpt-4o", f"--model-base-url=openai:gpt-4o={openai.url}/v1",
                     "--llm-retry-delay=0", "--concurrency=1")
        assert len(openai.received) == 1  # a rate-limit 429 would be tried 5 times per item
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "the account's quota is used up (HTTP 429 insufficient_quota)" in summary(pytester)["stop_reason"]


def test_request_timeout_is_an_option_and_an_ini_key(pytester: pytest.Pytester, server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(MESSAGES, *wifi_script())
    run(pytester, "--agent=claude", "--request-timeout=7.5").assert_outcomes(passed=1)
    assert summary(pytester)["run"]["options"]["model_options"]["timeout"] == 7.5
    pytester.makeini("[pytest]\ntoolsandbox_request_timeout = 0\n")
    assert "--request-timeout / toolsandbox_request_timeout: '0' must be between" in run(
        pytester, "--agent=claude").stderr.str()


def test_specs_that_differ_get_different_cassette_folders() -> None:
    assert role_slug("openai:org/m1") != role_slug("openai:org_m1")
    assert role_slug("openai:a:b") != role_slug("openai:a_b")
    shipped = pair_folder("openai:qwen2.5-coder-1.5b-instruct", "scripted")
    assert shipped == "openai_qwen2.5-coder-1.5b-instruct--scripted"
    assert any((REPO / "cassettes").rglob(shipped))


def test_an_unreachable_endpoint_is_named_without_its_credentials(pytester: pytest.Pytester,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    result = run(pytester, "--agent=openai:m", "--model-base-url=http://bob:hunter2pw@127.0.0.1:9/v1?token=tok42secret")
    output = result.stdout.str() + result.stderr.str()
    assert "cannot reach http://127.0.0.1:9/v1 " in output
    assert "hunter2pw" not in output and "tok42secret" not in output and "bob" not in output


def test_userinfo_is_not_sent_and_an_echoed_credential_reaches_no_output(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    quoted = "Authorization: Bearer sk-live-0123456789abcdef, x-api-key: zz9secretzz9"
    with ScriptedServer() as echo:
        echo.push(CHAT, Reply({"error": {"message": f"unauthorized; you sent {quoted}", "type": "auth"}},
                              status=401, forever=True))
        url = echo.url.replace("http://", "http://alice:pa55word@") + "/v1"
        result = run(pytester, "--agent=openai:m", f"--model-base-url={url}", "--junitxml=junit.xml",
                     "--ts-markdown=summary.md", "--html=report.html")
        headers = echo.received[0].headers
    assert "basic" not in headers.get("authorization", "").lower()
    output = result.stdout.str() + result.stderr.str()
    assert output.count("the user:password@ part of --model-base-url is not sent") == 1
    written = [path for path in pytester.path.rglob("*") if path.is_file() and path.suffix in (".json", ".jsonl",
                                                                                              ".xml", ".md", ".html")]
    assert written
    for text in [output, *(path.read_text(errors="replace") for path in written)]:
        assert "sk-live-0123456789abcdef" not in text and "zz9secretzz9" not in text and "pa55word" not in text


def test_secrets_are_scrubbed_before_a_text_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-" + "A1b2C3d4" * 8)
    cut = truncated("x" * 150 + "sk-proj-" + "A1b2C3d4" * 8 + " tail", 160)
    assert "sk-proj" not in cut and cut.startswith("x" * 150 + "<OPENAI_AP")


def test_secret_looking_query_names_and_echoed_auth_headers() -> None:
    for name in ("pass", "jwt", "bearer", "token", "secret", "key", "sig", "db.pass", "accessToken", "X-Amz-Signature"):
        assert is_secret_parameter(name), name
    for name in ("page", "q", "author", "compass", "city"):
        assert not is_secret_parameter(name), name
    assert scrub_text("sent Authorization: Basic dXNlcjpwYXNz") == "sent Authorization: Basic REDACTED"
    assert scrub_text("a bearer instrument") == "a bearer instrument"


def test_cassette_response_bodies_lose_secret_query_values() -> None:
    response = {"status": {"code": 200}, "headers": {},
                "body": {"string": b'{"url": "https://maps.example/api?key=AIzaSyREALKEY123&q=paris"}'}}
    scrubbed = _scrub_response(response, [])
    assert scrubbed is not None
    assert scrubbed["body"]["string"] == b'{"url": "https://maps.example/api?key=REDACTED&q=paris"}'


def test_an_unknown_agent_offers_close_model_names(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--agent=gpt4o")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    message = result.stderr.str()
    assert "did you mean gpt-4o" in message and "claude" in message and "openai:MODEL_ID" in message


def test_a_404_under_xdist_stops_every_worker_and_the_summary_says_why(pytester: pytest.Pytester,
                                                                       server: ScriptedServer) -> None:
    write_suite(pytester, {f"scenarios/settings/s{index}.yaml": WIFI_OFF for index in range(6)})
    server.push(MESSAGES, Reply({"type": "error", "error": {"type": "not_found_error", "message": "model: x"}},
                                status=404, forever=True))
    result = run(pytester, "--agent=anthropic:claude-sonnet-4-5-20250929", "--concurrency=1", "-n", "2")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert result.parseoutcomes().get("errors", 0) <= 2  # at most the first item of each worker
    data = summary(pytester)
    assert data["counts"]["finished"] <= 2 and "is not available (HTTP 404" in data["stop_reason"]
    assert "toolsandbox: stopped starting episodes: anthropic:claude-sonnet-4-5-20250929 is not available" in (
        result.stdout.str())


def test_the_shipped_variant_cassettes_keep_their_names() -> None:
    agent, scenario = "openai:qwen2.5-coder-1.5b-instruct", "scenarios/reminders/add_reminder_day_after_christmas.yaml"
    for variant in ("base", "3_distraction_tools", "tool_name_scrambled"):
        path = cassette_path(REPO / "cassettes", scenario, agent, "scripted", variant, 1)
        assert path.is_file(), path


def test_an_sdk_deprecation_list_of_another_shape_means_none_known(monkeypatch: pytest.MonkeyPatch) -> None:
    import anthropic._data

    from pytest_toolsandbox.roles import model_catalog

    monkeypatch.setattr(anthropic._data, "DEPRECATED_MODELS", 42)
    model_catalog.deprecated_models.cache_clear()
    try:
        assert model_catalog.deprecated_models("anthropic") == {}
    finally:
        model_catalog.deprecated_models.cache_clear()
