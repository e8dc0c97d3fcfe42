"""A lone surrogate (half of an emoji, JSON `"\\ud800"`) in a model's reply is text like any other
(issue 32, point 9): the real SDKs against the loopback server, the item scored, the replacement
character kept in every file the run writes. Before, the SDK's next request could not encode the
history and the item left the pass rate as an error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from pytest_toolsandbox.basics.surrogates import encodable, encodable_json
from tests.llm_server import (
    CHAT,
    MESSAGES,
    ScriptedServer,
    anthropic_calls,
    anthropic_text,
    openai_calls,
    openai_text,
)
from tests.test_plugin_support import run, summary, write_suite, xzcat

REMINDERS = """
categories: [multiple_tool_call]
user: {goal: Be reminded to buy milk., first_message: Remind me to buy milk tomorrow.}
tools: [add_reminder, search_reminder]
milestones:
  added: {tool_call: {add_reminder: {}}}
reference:
  - agent: Done.
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with ScriptedServer() as running:
        yield running


def _files(directory: Path) -> dict[str, str]:
    """Every file of the report as text; strict UTF-8, so a surrogate written by any means fails here."""
    return {str(path.relative_to(directory)): path.read_bytes().decode("utf-8")
            for path in sorted(directory.rglob("*")) if path.is_file()}


SAYS_OFF = """
categories: [single_user_turn]
user: {goal: Know whether wifi is on., first_message: "Is my wifi on?"}
tools: [get_wifi_status]
milestones:
  answered: {agent_says: Your wifi is switched off., facts: [off]}
reference:
  - get_wifi_status()
  - agent: Your wifi is switched off.
"""

# The agent asks before acting (the scripted user then says go ahead), so the reply holding the
# surrogate is sent back to the model in the next request; its last answer is wrong, so the verdict
# quotes it (with its surrogate) in every file.
ASK, WRONG = "Shall I look at your wifi? \ud800", "Your wifi is on. \ud800"

PROVIDERS = {
    "openai": ("openai:test-model", "/v1", CHAT,
               (openai_text(ASK), openai_calls(("c1", "get_wifi_status", {})), openai_text(WRONG))),
    "anthropic": ("anthropic:claude-test", "", MESSAGES,
                  (anthropic_text(ASK), anthropic_calls(("t1", "get_wifi_status", {})), anthropic_text(WRONG))),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_lone_surrogate_in_a_reply_is_scored_text_in_every_file(pytester: pytest.Pytester, server: ScriptedServer,
                                                                   provider: str) -> None:
    agent, path, endpoint, replies = PROVIDERS[provider]
    write_suite(pytester, {"scenarios/says_off.yaml": SAYS_OFF})
    server.push(endpoint, *replies)
    result = run(pytester, "--agent", agent, "--model-base-url", server.url + path, "--llm-retry-delay", "0",
                 "--junitxml", "junit.xml")
    result.assert_outcomes(failed=1)  # scored: a failure, not an item error
    (record,) = summary(pytester)["records"]
    assert record["error"] is None and 0 < record["score"] < 1
    assert record["verdict"]["milestones"][0]["closest"] == "Your wifi is on. \ufffd"
    assert len(server.bodies(endpoint)) == 3
    assert "Shall I look at your wifi? \ufffd" in json.dumps(server.bodies(endpoint)[1], ensure_ascii=False)
    written = {**_files(pytester.path / "toolsandbox-report"),
               "junit.xml": (pytester.path / "junit.xml").read_bytes().decode("utf-8")}
    for name in ("summary.json", "records.jsonl", record["trajectory"], record["page"], "junit.xml"):
        assert "is on. \ufffd" in written[name], name
    assert not [name for name, text in written.items() if "\\ud800" in text or "&#55296;" in text]
    (cassette,) = (pytester.path / "cassettes").rglob("*.yaml.xz")
    second = yaml.safe_load(xzcat(cassette))["interactions"][1]["request"]["body"]  # as it was sent
    assert "wifi? \ufffd" in second

    server.stop()  # the cassette alone plays the episode again, to the same record
    replayed = run(pytester, "--agent", agent, "--model-base-url", server.url + path, "--ts-record-mode", "none")
    replayed.assert_outcomes(failed=1)
    (again,) = summary(pytester)["records"]
    assert again["replayed"] and again["score"] == record["score"]
    assert _files(pytester.path / "toolsandbox-report")[again["trajectory"]] == written[record["trajectory"]]


def test_an_escaped_lone_surrogate_in_arguments_never_reaches_a_tool(pytester: pytest.Pytester,
                                                                      server: ScriptedServer) -> None:
    """The tool stores what it is given and a search returns it: the result goes back to the model."""
    write_suite(pytester, {"scenarios/reminders.yaml": REMINDERS})
    server.push(CHAT, openai_calls(("c1", "add_reminder",
                                    '{"content": "buy milk \\ud800", "reminder_timestamp": 1700000000}')),
                openai_calls(("c2", "search_reminder", {"content": "buy milk"})), openai_text("Done."))
    result = run(pytester, "--agent", "openai:test-model", "--model-base-url", server.url + "/v1",
                 "--llm-retry-delay", "0")
    result.assert_outcomes(passed=1)
    assert len(server.bodies(CHAT)) == 3
    found = server.bodies(CHAT)[2]["messages"][-1]
    assert found["role"] == "tool" and "buy milk \ufffd" in found["content"]


@pytest.mark.parametrize(("text", "expected"), [
    ("plain", "plain"),
    ("ok \ud800", "ok \ufffd"),
    ("\udfff\ud83d\ude00", "\ufffd\ufffd\ufffd"),  # in a str, a pair of halves is still two lone surrogates
    ("\U0001f600", "\U0001f600"),
])
def test_text_keeps_everything_but_lone_surrogates(text: str, expected: str) -> None:
    assert encodable(text) == expected


@pytest.mark.parametrize(("arguments", "expected"), [
    ('{"on":false}', '{"on":false}'),  # no surrogate: the same bytes
    ('{"t": "\\ud83d\\ude00"}', '{"t": "\\ud83d\\ude00"}'),  # an escaped pair is an emoji
    ('{"t":"a \\ud800"}', '{"t": "a \ufffd"}'),
    ('{"\\uDC00": 1}', '{"\ufffd": 1}'),  # keys too, upper-case hex too
    ('{"t": "\\\\ud800"}', '{"t": "\\\\ud800"}'),  # an escaped backslash then text: no surrogate
    ('{"t": "\\ud800', '{"t": "\\ud800'),  # not JSON: kept, never parsed into a value
    ('{"t": "\ud800"}', '{"t": "\ufffd"}'),
])
def test_arguments_keep_their_bytes_unless_they_hold_a_lone_surrogate(arguments: str, expected: str) -> None:
    assert encodable_json(arguments) == expected


def test_a_journal_line_replaces_a_surrogate_that_reached_it(tmp_path: Path) -> None:
    """The last line of defence (report files: test_report_summary.py): written as the records are."""
    from pytest_toolsandbox.report.results.journal import Journal, read_journal

    journal = Journal(tmp_path, append=False)
    journal.write({"id": "a", "text": "ok \ud800"})
    journal.close()
    assert read_journal(tmp_path).records == [{"id": "a", "text": "ok \ufffd"}]
