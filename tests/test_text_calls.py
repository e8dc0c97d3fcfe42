"""Calls written as text: the tolerant scanner, the parsing rules, and whole episodes through the real
openai SDK against the loopback server (a bare JSON call runs; malformed ones get a format error, are
diagnosed IFE and fire an `attempted_call` minefield)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.roles.lenient_json import UNREADABLE, scan
from pytest_toolsandbox.roles.llm_agent import LLMAgent
from pytest_toolsandbox.roles.model_client import ModelClient
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings
from pytest_toolsandbox.roles.scripted import ScriptedUser
from pytest_toolsandbox.roles.text_calls import parse_text_calls
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.world.messages import Role
from tests.llm_server import CHAT, ScriptedServer, openai_text
from tests.support import shipped_scenario

KNOWN = {"set_wifi_status", "search_contacts"}


# --- the scanner -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "problems"),
    [
        ('{"a": 1, "b": [true, null]}', {"a": 1, "b": [True, None]}, ()),
        ('{"on": True, "x": None, "y": False}', {"on": True, "x": None, "y": False}, ("python_literal",)),
        ("{'name': 'it\\'s \"quoted\"'}", {"name": 'it\'s "quoted"'}, ("single_quotes",)),
        ('{\n  "a": 1, // one\n  /* two */ "b": 2\n}', {"a": 1, "b": 2}, ("comment",)),
        ('{{"a": {"b": 1}}}', {"a": {"b": 1}}, ("doubled_braces",)),
        ('{{"a": {"b": 1}}', {"a": {"b": 1}}, ("doubled_braces",)),
        ('{{"a": 1}}}}', {"a": 1}, ("doubled_braces", "unbalanced")),
        ('{"a": 1, "b": "cut', {"a": 1, "b": "cut"}, ("truncated",)),
        ('{"a": [1, 2,], }', {"a": [1, 2]}, ("trailing_comma",)),
        ('{"t": 1680000000 + 86400, "u": 5}', {"u": 5}, ("expression",)),
        ('{"t": now(), "u": utilities_3({"y": 2024}), "v": 1}', {"v": 1}, ("expression",)),
        ('{"lat": <latitude>, "v": 1}', {"v": 1}, ("placeholder",)),
        ("{name: 1}", {"name": 1}, ("unquoted",)),
        ('{"t": 1 + 2 // a comment, with a comma }\n, "u": 3}', {"u": 3}, ("expression", "comment")),
    ],
)
def test_the_scanner_reads_what_it_can_and_names_every_problem(text: str, value: object, problems: tuple) -> None:
    read = scan(text)
    assert read.value == value and read.problems == problems


def test_the_scanner_evaluates_nothing_and_survives_hostile_input() -> None:
    """Python in a value is an unreadable expression, never code; deep nesting stops the scan, no RecursionError."""
    read = scan('{"x": __import__("os").system("echo pwned"), "y": eval("1+1")}')
    assert read.value == {} and read.problems == ("expression",)
    for hostile in ("[" * 100_000, "{" * 100_000, '{"a": ' * 100_000):
        assert "too_deep" in scan(hostile).problems
    assert scan("[" + "f(" * 50_000).problems == ("expression", "truncated")
    assert scan("").value is UNREADABLE and scan("").problems == ("truncated",)
    assert scan('{"n": 1' + "0" * 5000 + "}").value == {}  # no integer of thousands of digits


# --- the parsing rules ---------------------------------------------------------------------------------


def test_a_bare_json_object_or_list_naming_a_known_tool_is_a_call() -> None:
    single = parse_text_calls('  {"name": "set_wifi_status", "arguments": {"on": true}}\n', 4, KNOWN)
    assert [(call.id, call.name, json.loads(call.arguments), call.format_error) for call in single] == [
        ("text_call_4", "set_wifi_status", {"on": True}, None)
    ]
    listed = parse_text_calls(
        '[{"name": "search_contacts", "parameters": {"name": "Sam"}}, {"name": "set_wifi_status"}]', 1, KNOWN
    )
    assert [(call.name, call.arguments) for call in listed] == [
        ("search_contacts", '{"name": "Sam"}'),
        ("set_wifi_status", "{}"),
    ]
    trailing = parse_text_calls('{"name": "set_wifi_status", "arguments": {"on": false}}\nTurning wifi off.', 1, KNOWN)
    assert [call.arguments for call in trailing] == ['{"on": false}']


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "set_bluetooth_status", "arguments": {"on": true}}',  # no such tool
        'Here is the call: {"name": "set_wifi_status", "arguments": {"on": true}}',  # prose first: text
        '{"name": "Sam Whitaker", "phone_number": "+14155550123"}',  # data for the user
        '{"name": "set_wifi_status", "arguments": {}, "note": "x"}',  # more than a call envelope
        "[]",
    ],
)
def test_bare_json_that_is_not_a_known_call_stays_text(text: str) -> None:
    assert parse_text_calls(text, 1, KNOWN) == ()


@pytest.mark.parametrize(
    ("text", "arguments", "problem"),
    [
        ('```json\n{"name": "set_wifi_status", "arguments": {"on": true} // on\n}\n```', {"on": True}, "comments"),
        ('{{"name": "set_wifi_status", "arguments": {"on": true}}}', {"on": True}, "doubles the braces"),
        ('{"name": "set_wifi_status", "arguments": {"on": True}}', {"on": True}, "Python's True/False/None"),
        ("{'name': 'set_wifi_status', 'arguments': {'on': True}}", {"on": True}, "single quotes"),
        ('<tool_call>{"name": "set_wifi_status", "arguments": {"on": tr', {}, "cut off"),
        ('```json\n{"name": "set_wifi_status", "arguments": {"on": 1 > 0}}\n```', {}, "an expression"),
        ('```json\n{"name": "set_wifi_status", "arguments": {"on": @}}\n```', {}, "characters JSON does not allow"),
    ],
)
def test_call_like_text_that_is_not_json_is_a_malformed_call(text: str, arguments: dict, problem: str) -> None:
    (call,) = parse_text_calls(text, 1, KNOWN)
    assert call.name == "set_wifi_status" and json.loads(call.arguments) == arguments
    assert call.format_error is not None and problem in call.format_error
    assert '{"name": "set_wifi_status", "arguments": ' in call.format_error  # the expected form, to copy


def test_a_fenced_block_without_a_call_envelope_stays_text() -> None:
    assert parse_text_calls('```json\n{"not": "a call", // really\n}\n```', 1, KNOWN) == ()
    assert parse_text_calls("```python\nprint('name')\n```", 1, KNOWN) == ()
    assert parse_text_calls("Sure, I can do that. What should the message say?", 1, KNOWN) == ()


# --- whole episodes through the real openai SDK --------------------------------------------------------



@pytest.fixture(scope="module")
def withheld() -> Scenario:
    """Loaded when a test asks, not at import: loading builds a world with polars, and a test collection
    that has used polars' thread pool cannot be forked (mutmut forks each mutant from one)."""
    return shipped_scenario("scenarios/insufficient_information/settings_wifi_setter_withheld.yaml")
FINAL = "Wifi is off, and I don't have a way to turn it on for you. You can switch it on in your phone's settings."


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


def _agent(server: ScriptedServer) -> LLMAgent:
    settings = ModelSettings("openai", "test-model", ModelOptions(base_url=server.url + "/v1", max_tokens=256))
    return LLMAgent(ModelClient(settings), name="openai:test-model")


def test_a_bare_json_call_runs(server: ScriptedServer, withheld: Scenario) -> None:
    server.push(CHAT, openai_text('{"name": "get_wifi_status", "arguments": {}}'), openai_text(FINAL))
    trajectory = run_episode(withheld, _agent(server), ScriptedUser(withheld))
    replies = [message for message in trajectory.messages if message.recipient is Role.AGENT]
    traces = [message.tool_trace for message in replies if message.tool_trace is not None]
    assert [(trace.tool, trace.result) for trace in traces] == [("get_wifi_status", False)]
    evaluation = evaluate(withheld, trajectory)
    assert evaluation.score == 1.0 and not evaluation.diagnosis


@pytest.mark.parametrize(
    "written",
    [
        '```json\n{\n  "name": "set_cellular_service_status",\n  "arguments": {"on": true} // try cellular\n}\n```',
        '{{"name": "set_cellular_service_status", "arguments": {"on": true}}}',
        '{"name": "set_cellular_service_status", "arguments": {"on": True}}',
    ],
    ids=["commented", "doubled-braces", "python-literal"],
)
def test_a_malformed_call_gets_a_format_error_and_fires_the_attempted_call_minefield(
    server: ScriptedServer, written: str, withheld: Scenario
) -> None:
    server.push(CHAT, openai_text(written), openai_text(FINAL))
    trajectory = run_episode(withheld, _agent(server), ScriptedUser(withheld))
    position = next(k for k, message in enumerate(trajectory.messages) if message.sender is Role.AGENT)
    call, reply = trajectory.messages[position], trajectory.messages[position + 1]
    assert call.recipient is Role.EXECUTION_ENVIRONMENT
    assert call.tool_call is not None and call.tool_call.name == "set_cellular_service_status"
    assert reply.error_code == "IFE" and reply.tool_trace is None  # answered, never run
    assert reply.exception is not None and reply.exception.startswith("InvalidFormatError: Your reply was read as")
    to_user = [message.content for message in trajectory.messages if message.recipient is Role.USER]
    assert not any("set_cellular" in text for text in to_user)
    sent_back = server.bodies(CHAT)[1]["messages"]  # the agent reads the error as its call's result
    assert sent_back[-1]["role"] == "tool" and sent_back[-1]["content"].startswith("InvalidFormatError")
    assert json.loads(sent_back[-2]["tool_calls"][0]["function"]["arguments"]) == {"on": True}
    evaluation = evaluate(withheld, trajectory)
    assert [(outcome.name, outcome.similarity) for outcome in evaluation.minefields] == [("cellular_instead", 1.0)]
    assert evaluation.score == 0.0
    assert [finding.code for finding in evaluation.diagnosis if finding.code in ("IFE", "MINEFIELD")] == [
        "IFE",
        "MINEFIELD",
    ]


def test_a_malformed_call_survives_the_trajectory_file(server: ScriptedServer, withheld: Scenario) -> None:
    from pytest_toolsandbox.world.trajectory import Trajectory

    server.push(
        CHAT, openai_text('{"name": "set_cellular_service_status", "arguments": {"on": True}}'), openai_text(FINAL)
    )
    trajectory = run_episode(withheld, _agent(server), ScriptedUser(withheld))
    again = Trajectory.from_json(trajectory.to_json())
    (call,) = [message.tool_call for message in again.messages if message.sender is Role.AGENT and message.tool_call]
    assert call.format_error is not None and call in [message.tool_call for message in trajectory.messages]
    assert evaluate(withheld, again).score == evaluate(withheld, trajectory).score == 0.0
    user_end = next(m.tool_call for m in again.messages if m.sender is Role.USER and m.tool_call)
    assert "format_error" not in user_end.model_dump()  # well-formed calls keep their JSON form


def test_the_documented_format_error_is_the_one_sent() -> None:
    page = Path("docs/agents.md").read_text(encoding="utf-8")
    documented = page.split("comes back as\n\n```\n", 1)[1].split("```", 1)[0]
    (call,) = parse_text_calls('{"name": "set_wifi_status", "arguments": {"on": True}}', 1, KNOWN)
    assert " ".join(documented.split()) == "InvalidFormatError: " + call.format_error


def test_the_call_message_says_the_call_was_malformed_text() -> None:
    from pytest_toolsandbox.roles.base import render_call

    (call,) = parse_text_calls('{{"name": "set_wifi_status", "arguments": {"on": true}}}', 1, KNOWN)
    assert render_call(call) == "set_wifi_status(on=true) [malformed text, not run]"


JSONISH = st.text(alphabet="{}[]()<>\"',:/*#+-.0123456789 \n`_abcnrTFNxyz", max_size=200)


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        JSONISH,
        JSONISH.map(lambda text: '{"name": "set_wifi_status", "arguments": ' + text),
        JSONISH.map(lambda text: "```json\n{'name': 'x', 'arguments': {" + text),
    )
)
def test_any_text_parses_without_raising(text: str) -> None:
    """Whatever a model writes, parsing ends, and a malformed call always records a JSON object (what the
    attempt and the next request to the model carry); well-formed calls keep their arguments as written."""
    for call in parse_text_calls(text, 1, KNOWN):
        if call.format_error is not None:
            assert isinstance(json.loads(call.arguments), dict)
