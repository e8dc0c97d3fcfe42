"""Attempted calls as the scorer reads them (`evaluation/sandbox.py`): named by the tool behind the
offered name, or by the name the agent wrote for a tool it was not offered; arguments that are not a
JSON object count as none (found unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
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
