"""docs/agents.md: the documented HTTP agent and recording conftest, run as written against a
loopback chat server; then replayed from the cassettes with the server stopped."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from tests.test_plugin_support import WIFI_OFF, run, write_suite

DOCS = Path(__file__).resolve().parent.parent / "docs"
EXAMPLES = ("http_agent.py", "conftest.py")
SECRET = "sk-test-not-a-real-key"


class ChatServer(BaseHTTPRequestHandler):
    """A tiny OpenAI-compatible /chat/completions: turns wifi off, then says so."""

    requests: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if body["messages"][-1]["role"] == "tool":
            message = {"role": "assistant", "content": "Wifi is off now."}
        else:
            tool = next(t["function"]["name"] for t in body["tools"] if "wifi" in t["function"]["description"].lower())
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": '{"on": false}'}}]}
        answer = json.dumps({"choices": [{"message": message}], "usage": {"prompt_tokens": 50,
                                                                           "completion_tokens": 7}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        """Quiet: the test reads the requests list instead."""


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    ChatServer.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ChatServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def test_the_documented_examples_are_the_files_the_test_runs() -> None:
    page = (DOCS / "agents.md").read_text(encoding="utf-8")
    for name in EXAMPLES:
        assert (DOCS / "examples" / name).read_text(encoding="utf-8") in page, name


def test_documented_http_agent_passes_and_replays_offline(pytester: pytest.Pytester, server: ThreadingHTTPServer,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    for name in EXAMPLES:
        shutil.copy(DOCS / "examples" / name, pytester.path / name)
    monkeypatch.setenv("CHAT_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("CHAT_MODEL", "loopback-model")
    monkeypatch.setenv("CHAT_API_KEY", SECRET)

    run(pytester).assert_outcomes(passed=1)
    assert [request["path"] for request in ChatServer.requests] == ["/v1/chat/completions"] * 2
    first = ChatServer.requests[0]
    assert first["auth"] == f"Bearer {SECRET}" and first["body"]["model"] == "loopback-model"
    assert [m["role"] for m in first["body"]["messages"]] == ["system", "user"]
    second = ChatServer.requests[1]["body"]["messages"]
    assert [m["role"] for m in second][-2:] == ["assistant", "tool"] and second[-2]["tool_calls"][0]["id"] == "call_1"
    record = json.loads((pytester.path / "toolsandbox-report/summary.json").read_text())["records"][0]
    assert record["agent"] == "http-chat" and record["agent_model"] == "loopback-model"
    assert record["tokens"]["agent"] == {"prompt_tokens": 100, "completion_tokens": 14}

    cassette = pytester.path / "cassettes/scenarios/settings/wifi_off/base.yaml"
    assert cassette.is_file() and SECRET not in cassette.read_text(encoding="utf-8")

    server.shutdown()
    server.server_close()
    ChatServer.requests = []
    run(pytester).assert_outcomes(passed=1)  # replayed from the cassette
    assert ChatServer.requests == []


def documented_command() -> list[str]:
    """The pytest arguments of the line docs/agents.md gives for running the HTTP agent."""
    page = (DOCS / "agents.md").read_text(encoding="utf-8")
    line = next(line for line in page.splitlines() if line.startswith("CHAT_BASE_URL=") and " pytest " in line)
    return shlex.split(line.partition(" pytest ")[2])


def test_the_documented_command_runs_the_agent_from_the_repository_layout(
        pytester: pytest.Pytester, server: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """As written from the repository's root, where the file is docs/examples/http_agent.py (once failed with
    "No module named 'docs'" / "'http_agent'")."""
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    (pytester.path / "docs" / "examples").mkdir(parents=True)
    shutil.copy(DOCS / "examples" / "http_agent.py", pytester.path / "docs" / "examples" / "http_agent.py")
    monkeypatch.setenv("CHAT_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("CHAT_MODEL", "loopback-model")
    args = documented_command()
    assert args == ["-o", "pythonpath=docs/examples", "--agent", "http_agent:HttpChatAgent"]
    run(pytester, *args).assert_outcomes(passed=1)
    assert len(ChatServer.requests) == 2


def _inline_examples() -> list[str]:
    """The page's Python blocks that are not copies of an example file: they run on their own."""
    page = (DOCS / "agents.md").read_text(encoding="utf-8")
    files = [(DOCS / "examples" / name).read_text(encoding="utf-8") for name in EXAMPLES]
    return [block for block in re.findall(r"```python\n(.*?)```", page, re.S) if block not in files]


def test_every_inline_example_of_the_page_runs_as_written_from_a_clone() -> None:
    """Each block in a fresh interpreter at the repository root, as a reader would paste it."""
    blocks = _inline_examples()
    assert len(blocks) == 2
    outputs = [subprocess.run([sys.executable, "-c", block], cwd=DOCS.parent, capture_output=True, text=True,
                              check=True).stdout for block in blocks]
    assert outputs[1].splitlines()[0] == "wifi_off: passed=True similarity=1.00 in 3 turns"


def test_the_page_and_the_examples_import_only_the_public_surface() -> None:
    import pytest_toolsandbox

    sources = [(DOCS / "agents.md").read_text(encoding="utf-8"),
               *((DOCS / "examples" / name).read_text(encoding="utf-8") for name in EXAMPLES)]
    imports = [match for source in sources for match in re.findall(r"from (pytest_toolsandbox\S*) import (.+)", source)]
    assert imports and {module for module, _ in imports} == {"pytest_toolsandbox"}
    names = {name.strip() for _, listed in imports for name in listed.split(",")}
    assert names <= set(pytest_toolsandbox.__all__)
