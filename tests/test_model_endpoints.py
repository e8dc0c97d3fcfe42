"""Each model spec has its own endpoint: the ini's local server never captures a hosted model, an
endpoint that does not answer stops a recording run before its first item with one line naming the
URL and what to do, and the messages about missing cassettes or keys say what this spec needs."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator

import pytest

from pytest_toolsandbox.roles.model_client import ModelClient, ModelError
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings, parse_model_spec
from tests.llm_server import CHAT, ScriptedServer, openai_calls, openai_text
from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite

LOCAL_INI = """
[pytest]
toolsandbox_agent = openai:local-model
toolsandbox_model_base_url = openai:local-model={url}
"""


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in ("CI", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch


def test_a_spec_without_url_uses_its_providers_api(clean_env: pytest.MonkeyPatch) -> None:
    options = ModelOptions(base_urls=(("openai:local-model", "http://127.0.0.1:8080/v1"),))
    local = parse_model_spec("openai:local-model").with_options(options.for_spec("openai:local-model"))
    hosted = {spec: parse_model_spec(spec).with_options(options.for_spec(spec))
              for spec in ("gpt-4o", "openai:gpt-4o-mini", "claude", "anthropic:claude-x")}
    assert local.endpoint == "http://127.0.0.1:8080/v1"
    assert {spec: model.endpoint for spec, model in hosted.items()} == {
        "gpt-4o": "https://api.openai.com/v1", "openai:gpt-4o-mini": "https://api.openai.com/v1",
        "claude": "https://api.anthropic.com", "anthropic:claude-x": "https://api.anthropic.com"}
    assert hosted["gpt-4o"].api_key() is None  # no placeholder key: a hosted model needs its real key
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")  # the SDK's own variable is honoured
    assert hosted["gpt-4o"].endpoint == "http://127.0.0.1:1/v1"
    run_wide = ModelOptions(base_url="http://proxy:1/v1", base_urls=options.base_urls)
    assert run_wide.for_spec("claude").base_url == "http://proxy:1/v1"
    assert run_wide.for_spec("openai:local-model").base_url == "http://127.0.0.1:8080/v1"


def test_the_ini_url_of_the_local_agent_does_not_reach_a_hosted_model(pytester: pytest.Pytester,
                                                                      clean_env: pytest.MonkeyPatch) -> None:
    """`--agent openai:hosted` records from the URL its SDK resolves (OPENAI_BASE_URL standing in for the
    hosted API), not from the local server the ini names for the default agent."""
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    pytester.makeini(LOCAL_INI.format(url=f"http://127.0.0.1:{closed_port()}/v1"))
    with ScriptedServer() as hosted:
        hosted.push(CHAT, openai_calls(("c1", "set_wifi_status", {"on": False})), openai_text("Wifi is off."))
        clean_env.setenv("OPENAI_API_KEY", "sk-test")
        clean_env.setenv("OPENAI_BASE_URL", hosted.url + "/v1")
        run(pytester, "--agent", "openai:hosted", "--llm-retry-delay", "0").assert_outcomes(passed=1)
        assert [body["model"] for body in hosted.bodies(CHAT)] == ["hosted", "hosted"]
    record = summary(pytester)["records"][0]
    assert record["agent_spec"] == "openai:hosted" and record["score"] == 1.0


def test_an_unreachable_endpoint_stops_a_recording_run_with_one_line(pytester: pytest.Pytester,
                                                                     clean_env: pytest.MonkeyPatch) -> None:
    write_suite(pytester)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    clean_env.setenv("OPENAI_BASE_URL", url)
    started = time.monotonic()
    result = run(pytester, "--agent=gpt-4o", "--ts-record-mode", "once")
    assert time.monotonic() - started < 20
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.lines if "toolsandbox:" in line]
    assert len(lines) == 1 and f"cannot reach {url} (openai:gpt-4o: nothing listens at 127.0.0.1:" in lines[0]
    assert "check the network or proxy, or replay recorded cassettes only with --ts-record-mode=none" in lines[0]
    assert not (pytester.path / "toolsandbox-report").exists()


def test_the_local_servers_endpoint_names_the_script_that_starts_it(pytester: pytest.Pytester,
                                                                    clean_env: pytest.MonkeyPatch) -> None:
    write_suite(pytester)
    pytester.makeini(LOCAL_INI.format(url=f"http://127.0.0.1:{closed_port()}/v1"))
    pytester.mkdir("scripts").joinpath("serve_local_model.py").write_text("")
    result = run(pytester, "--ts-record-mode", "once")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "start the local model: python scripts/serve_local_model.py" in result.stderr.str()
    clean_env.setenv("CI", "1")  # replay only: no probe, the missing cassettes are the problem
    result = run(pytester)
    output = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "no cassettes for openai_local-model--scripted" in output
    assert "Record them once, outside CI: start the local model: python scripts/serve_local_model.py" in output
    assert "API key" not in output


def test_missing_cassettes_of_a_hosted_model_name_its_key(pytester: pytest.Pytester,
                                                          clean_env: pytest.MonkeyPatch) -> None:
    write_suite(pytester)
    clean_env.setenv("CI", "1")
    result = run(pytester, "--agent", "claude")
    assert "Record them once, outside CI: set ANTHROPIC_API_KEY, then run:" in result.stderr.str()


def test_a_replay_makes_no_probe(pytester: pytest.Pytester, clean_env: pytest.MonkeyPatch) -> None:
    """With every cassette present, an unreachable endpoint is not looked at (replays stay offline)."""
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    with ScriptedServer() as server:
        pytester.makeini(LOCAL_INI.format(url=server.url + "/v1"))
        server.push(CHAT, openai_calls(("c1", "set_wifi_status", {"on": False})), openai_text("Wifi is off."))
        run(pytester, "--llm-retry-delay", "0").assert_outcomes(passed=1)
    run(pytester, "--ts-record-mode", "once").assert_outcomes(passed=1)  # the server is gone: replayed


@pytest.mark.parametrize(("ini_value", "message"), [
    ("http://127.0.0.1:8080/v1", "names no model spec, so it would also send hosted models"),
    ("openai:x=not-a-url", "is not [SPEC=]URL"),
    ("mypkg:Agent=http://127.0.0.1:1/v1", "'mypkg:Agent' is not a model spec"),
])
def test_ini_urls_must_name_a_model_spec(pytester: pytest.Pytester, ini_value: str, message: str) -> None:
    write_suite(pytester)
    pytester.makeini(f"[pytest]\ntoolsandbox_model_base_url = {ini_value}\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and message in result.stderr.str()


def test_the_old_ini_key_says_its_new_spelling(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    pytester.makeini("[pytest]\ntoolsandbox_base_url = http://127.0.0.1:8080/v1\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert ("toolsandbox_model_base_url = openai:MODEL=http://127.0.0.1:8080/v1" in result.stderr.str())


def test_a_connection_error_names_the_url(clean_env: pytest.MonkeyPatch) -> None:
    from pytest_toolsandbox.roles.conversation import Conversation
    from pytest_toolsandbox.roles.retry import RetryPolicy

    url = f"http://127.0.0.1:{closed_port()}/v1"
    client = ModelClient(ModelSettings("openai", "m", ModelOptions(base_url=url)), RetryPolicy(retries=0))
    with pytest.raises(ModelError, match=f"openai:m at {re.escape(url)}: "):
        client.complete(Conversation(system="", entries=()), ())


def test_the_old_base_url_option_still_works_with_a_warning(pytester: pytest.Pytester,
                                                            clean_env: pytest.MonkeyPatch) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    with ScriptedServer() as server:
        server.push(CHAT, openai_calls(("c1", "set_wifi_status", {"on": False})), openai_text("Wifi is off."))
        result = run(pytester, "-p", "no:base_url", "--agent", "openai:m", "--base-url", server.url + "/v1",
                     "--llm-retry-delay", "0")
    result.assert_outcomes(passed=1)
    assert "--base-url is deprecated, use --model-base-url" in result.stdout.str()


def test_pytest_base_url_installed_next_to_the_plugin_keeps_pytest_working(pytester: pytest.Pytester) -> None:
    """pytest-base-url (pulled in by pytest-playwright) owns --base-url: `pytest --help` and a run work."""
    pytest.importorskip("pytest_base_url")
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    result = pytester.runpytest_subprocess("--help")
    assert result.ret == pytest.ExitCode.OK
    help_text = result.stdout.str()
    assert "--model-base-url=[SPEC=]URL" in help_text and "base url for the application under test" in help_text
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
