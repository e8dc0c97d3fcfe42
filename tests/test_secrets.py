"""No secret reaches a file a run writes, nor the terminal: keys from the environment, credentials and
secret query values in the base URL, placeholders planted in a cassette, model objects holding a key."""

from __future__ import annotations

import lzma
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from pytest_toolsandbox.basics.jsondata import label
from pytest_toolsandbox.recording.secrets import is_secret_parameter, scrub_text, scrub_url, secret_values
from tests.llm_server import ScriptedServer, openai_calls, openai_text
from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite

OPENAI_KEY = "sk-XQ7ZK-openai-0a1b2c3d4e5f"
ANTHROPIC_KEY = "sk-ant-XQ7ZK-anthropic-6a7b8c9d"
MARKER = re.compile("xq7zk", re.IGNORECASE)
"""Every planted value contains this word; nothing else a run writes does."""

CONFTEST = """
import os

import pytest


@pytest.fixture
def toolsandbox_agent(toolsandbox_agent):
    toolsandbox_agent.model = {"name": "test-model", "api_key": os.environ["OPENAI_API_KEY"]}
    return toolsandbox_agent
"""


class ClientSettings(BaseModel):
    model: str
    api_key: str


def test_scrub_url_removes_credentials_and_secret_query_values() -> None:
    url = "https://user:pa%40ss@api.example.com:8443/v1/x?api-key=A&token=B&q=keep&access_token=C&Signature=D#f"
    assert scrub_url(url) == ("https://api.example.com:8443/v1/x?api-key=REDACTED&token=REDACTED&q=keep"
                              "&access_token=REDACTED&Signature=REDACTED#f")
    assert scrub_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert scrub_url("http://h/search?query=a%20b&keyword=x&monkey=y") == "http://h/search?query=a%20b&keyword=x&monkey=y"


@pytest.mark.parametrize("name", ["key", "api_key", "API-KEY", "apikey", "token", "access_token", "refresh_token",
                                  "client_secret", "password", "X-Amz-Signature", "sig", "subscription-key"])
def test_secret_looking_parameter_names(name: str) -> None:
    assert is_secret_parameter(name)


@pytest.mark.parametrize("name", ["query", "keyword", "q", "limit", "monkey", "lang", "address"])
def test_ordinary_parameter_names(name: str) -> None:
    assert not is_secret_parameter(name)


def test_scrub_text_replaces_environment_keys_and_urls_in_any_text() -> None:
    secrets = secret_values({"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": "short"})
    text = f'{{"key": "{OPENAI_KEY}", "url": "http://u:p@h/v1?token=t&amp;api_key=k"}} short'
    assert scrub_text(text, secrets) == ('{"key": "<OPENAI_API_KEY>", "url": "http://h/v1?token=REDACTED'
                                         '&amp;api_key=REDACTED"} short')  # a value shorter than 8 is no key


def test_a_model_that_is_not_text_is_recorded_as_its_type_name() -> None:
    assert label({"api_key": OPENAI_KEY}) == "<dict>"
    assert label(ClientSettings(model="gpt-4o", api_key=OPENAI_KEY)) == "<ClientSettings>"
    assert label([OPENAI_KEY]) == "<list>" and label(3) == "<int>"
    assert label("gpt-4o") == "gpt-4o"


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    with ScriptedServer() as server:
        yield server


def _written_text(root: Path) -> dict[Path, str]:
    """Every file under `root` the runs wrote (all but the scenarios and conftest.py the test wrote),
    cassettes decompressed, as text."""
    texts = {}
    for path in root.rglob("*"):
        if path.is_file() and path.parts[len(root.parts)] not in ("scenarios", "conftest.py"):
            data = path.read_bytes()
            if path.name.endswith(".xz"):
                data = lzma.decompress(data)
            texts[path] = data.decode("utf-8", "replace")
    return texts


def test_planted_secrets_reach_no_file_and_not_the_terminal(pytester: pytest.Pytester,
                                                            planted: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    pytester.makeconftest(CONFTEST)
    base_url = (f"http://xq7zk-user:XQ7ZK-pass@{planted.url.removeprefix('http://')}/v1"
                "?api-key=XQ7ZK-q1&token=XQ7ZK-q2&access_token=XQ7ZK-q3&ok=1")

    def arguments(run_name: str) -> tuple[str, ...]:
        return ("--agent", "openai:test-model", "--model-base-url", base_url, "--llm-retry-delay", "0", "-rA", "-v",
                "--report-dir", f"report-{run_name}", "--junitxml", f"junit-{run_name}.xml",
                "--html", f"pytest-html-{run_name}.html")

    # The OpenAI SDK appends the endpoint's path to the base URL's query; the server answers what it sends.
    endpoint = "/v1/?api-key=XQ7ZK-q1&token=XQ7ZK-q2&access_token=XQ7ZK-q3&ok=1chat/completions"
    planted.push(endpoint, openai_calls(("call_1", "set_wifi_status", {"on": False})), openai_text("Wifi is off now."))
    recorded = run(pytester, *arguments("record"))
    recorded.assert_outcomes(passed=1)
    assert [request.path for request in planted.received] == [endpoint] * 2
    data = summary(pytester, "report-record")
    assert data["records"][0]["agent_model"] == "<dict>"
    assert data["run"]["options"]["model_options"]["base_url"].endswith(
        "/v1?api-key=REDACTED&token=REDACTED&access_token=REDACTED&ok=1")

    cassette = next((pytester.path / "cassettes").rglob("*.yaml.xz"))
    text = lzma.decompress(cassette.read_bytes()).decode("utf-8")
    assert text.count('\\"on\\": false') == 1
    edited = text.replace('\\"on\\": false', '\\"on\\": \\"<OPENAI_API_KEY>\\"')
    cassette.write_bytes(lzma.compress(edited.encode("utf-8")))  # a cassette edited to pull the key into the report
    planted.stop()
    replayed = run(pytester, *arguments("replay"), "--ts-record-mode", "none")
    # The edited call's argument is no boolean: the tool's error makes the next request one the cassette
    # does not hold, and the miss is printed with a diff that shows the placeholder as it is.
    replayed.assert_outcomes(errors=1)
    assert '"arguments": "{\\"on\\": \\"<OPENAI_API_KEY>\\"}"' in replayed.stdout.str()
    trajectory = next((pytester.path / "report-replay" / "trajectories").rglob("*.json")).read_text()
    assert '{\\"on\\": \\"<OPENAI_API_KEY>\\"}' in trajectory

    written = _written_text(pytester.path)
    assert {"junit-record.xml", "junit-replay.xml", "pytest-html-replay.html", "summary.json",
            "base-t1.yaml.xz"} <= {path.name for path in written}
    found = {str(path.relative_to(pytester.path)): MARKER.findall(text) for path, text in written.items()
             if MARKER.search(text)}
    assert found == {}
    for result in (recorded, replayed):
        assert not MARKER.search(result.stdout.str() + result.stderr.str())


def test_the_resume_journal_holds_no_key_a_record_quotes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """records.jsonl is written line by line, apart from summary.json: it is scrubbed like every report file."""
    from pytest_toolsandbox.report.results.journal import Journal

    monkeypatch.setenv("OPENAI_API_KEY", "sk-XQ7ZK-journal-key-0123456789")
    journal = Journal(tmp_path, append=False)
    journal.write({"id": "x", "error": "401 for key sk-XQ7ZK-journal-key-0123456789"})
    journal.close()

    text = journal.path.read_text(encoding="utf-8")
    assert "XQ7ZK" not in text and "<OPENAI_API_KEY>" in text
