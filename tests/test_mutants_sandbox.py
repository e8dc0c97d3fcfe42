"""Attempted calls as the scorer reads them (`evaluation/sandbox.py`): named by the tool behind the
offered name, or by the name the agent wrote for a tool it was not offered; arguments that are not a
JSON object count as none (found unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import sys

import pytest

from pytest_toolsandbox.evaluation import evaluate, sandbox
from pytest_toolsandbox.world.messages import ToolCall
from tests.test_scoring_support import call, play, say, scenario

TRIED = """
categories: [single_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [%s]
milestones:
  tried: {attempted_call: {set_wifi_status: %s}}
"""


def tried(tools: str, target: str, arguments: str) -> float:
    s = scenario(TRIED % (tools, target))
    [outcome] = evaluate(s, play(s, [call("set_wifi_status", arguments=arguments), say("Done.")])).milestones
    return outcome.similarity


def test_a_call_to_a_tool_not_offered_is_attempted_under_the_name_written() -> None:
    assert tried("get_wifi_status", "{}", '{"on": false}') == 1.0


@pytest.mark.parametrize(("arguments", "similarity"), [('{"on": false}', 1.0), ('["on"]', 0.0), ("", 0.0),
                                                       ("not json", 0.0), ('{"on": true}', 0.0)])
def test_arguments_that_are_no_json_object_count_as_none(arguments: str, similarity: float) -> None:
    assert tried("set_wifi_status", "{on: false}", arguments) == similarity
    assert tried("set_wifi_status", "{}", arguments) == 1.0  # the tool alone is attempted whatever the arguments


def test_arguments_nested_past_what_json_can_write_back_are_an_attempt_without_arguments() -> None:
    """Arguments nested so deep that json parses them but cannot write them back inside the attempt's own
    level: the attempt keeps its tool and counts as without arguments, and never raises. Python 3.12 and
    later count C recursion apart from Python frames, and then one nesting depth does exactly that; on
    3.11 parsing gives up at the same depth as writing, and the arguments already count as none."""
    call_written = ToolCall(id="call-1", name="switch", arguments="")
    without_arguments = '{"arguments": {}, "tool": "set_wifi_status"}'
    kept = []
    for depth in range(1, 12_000):
        arguments = '{"a": ' + "[" * depth + "]" * depth + "}"
        attempt = sandbox.attempt_json(call_written.model_copy(update={"arguments": arguments}),
                                       {"switch": "set_wifi_status"})
        if attempt == without_arguments:
            break
        assert attempt == '{"arguments": ' + arguments + ', "tool": "set_wifi_status"}'
        kept.append(depth)
    assert 100 < len(kept) < 11_998  # shallow nestings are kept whole; the fallback came before the loop ran out
    assert sandbox._arguments('{"a": ' + "[" * (len(kept) + 1) + "]" * (len(kept) + 1) + "}") or (
        sys.version_info < (3, 12)), "the depth that falls back parses, but cannot be written back"
