"""Values taken from tool traces for `fill_from` (`evaluation/similarity.py`): the paths into a trace,
one trace per source, and the first format that fits a value (found unpinned by mutation testing,
benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.constraints import Constraint, compile_events
from pytest_toolsandbox.evaluation.similarity import extract, filled_rows
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message
from tests.test_scoring_support import scenario

TRACE = {"tool": "search_contacts", "arguments": {"name": "Ada", "limit": 2},
         "result": [{"name": "Ada Lovelace", "phone_number": "+14155550100"}, {"name": "Ada King"}]}


@pytest.mark.parametrize(("path", "value"), [
    ("result", TRACE["result"]),
    ("result.1.name", "Ada King"),
    ("result.0.phone_number", "+14155550100"),
    ("arguments.name", "Ada"),
    ("arguments.limit", 2),
])
def test_a_path_reads_the_result_or_the_arguments_key_by_key(path: str, value: Any) -> None:
    assert extract(TRACE, path) == value


@pytest.mark.parametrize(("path", "error"), [("result.2.name", IndexError), ("result.first", ValueError),
                                             ("arguments.phone", KeyError)])
def test_a_path_the_trace_lacks_is_an_error(path: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        extract(TRACE, path)


SOURCES = """
categories: [multiple_tool_call, single_user_turn]
user: {goal: Text Ada., first_message: Text Ada that I am late.}
tools: [search_contacts, send_message_with_phone_number]
milestones:
  found: {tool_call: {search_contacts: {name: Ada}}}
  counted: {tool_call: {search_contacts: {name: Ada}}}
  sent:
    after: [found, counted]
    tool_call: {send_message_with_phone_number: {content: I am late}}
    fill_from:
      - {milestone: found, values: {phone_number: result.0.phone_number}}
      - {milestone: counted, values: {content: arguments.name}}
  told:
    after: [found]
    agent_says: "{count} contacts found"
    fill_from: {milestone: found, values: {count: arguments.limit}, formats: ["{:.1f}", "{:d}", "{}"]}
"""


def constraint(name: str, kind: str) -> Constraint:
    s = scenario(SOURCES)
    spec = next(spec for spec in compile_events(s.milestones, scenario_clock(s)) if spec.name == name)
    return next(constraint for constraint in spec.constraints if constraint.label == kind)


def test_a_call_takes_its_arguments_from_one_trace_per_source() -> None:
    sent = constraint("sent", "tool_call")
    [row] = filled_rows(sent, [TRACE, TRACE])
    assert row["tool_trace"] == (("send_message_with_phone_number",
                                  (("content", "Ada"), ("phone_number", "+14155550100"))),)
    assert filled_rows(sent, [TRACE]) == []  # a source without its trace: nothing to compare


def test_each_format_that_fits_the_value_gives_a_target_and_one_that_does_not_is_skipped() -> None:
    """2 as "{:.1f}" is "2.0", as "{:d}" "2"; "{:d}" does not fit 2.5, the later "{}" still does."""
    told = constraint("told", "agent_says")
    assert [row["content"] for row in filled_rows(told, [TRACE])] == [
        "2.0 contacts found", "2 contacts found", "2 contacts found"]
    half = {**TRACE, "arguments": {"name": "Ada", "limit": 2.5}}
    assert [row["content"] for row in filled_rows(told, [half])] == ["2.5 contacts found", "2.5 contacts found"]
    text = {**TRACE, "arguments": {"name": "Ada", "limit": "two"}}
    assert [row["content"] for row in filled_rows(told, [text])] == ["two contacts found"]


class Failing:
    """An agent whose model is down: the episode ends at the user's first message."""

    name = "failing"

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        raise RuntimeError("model down")


def test_an_episode_ended_at_the_users_first_message_scores_an_addition_as_missing() -> None:
    """One position only: the addition is compared with the initial world there (nothing added)."""
    s = scenario("""
categories: [single_tool_call, single_user_turn]
user: {goal: Add Ann., first_message: Add Ann Lee +14155550100 to my contacts.}
tools: [add_contact]
milestones:
  added: {added: {contacts: [{name: Ann Lee, phone_number: "+14155550100"}]}}
""")
    trajectory = run_episode(s, Failing(), ScriptedUser(s))
    assert (len(trajectory.messages), trajectory.ended_by) == (3, "error")
    [added] = evaluate(s, trajectory).milestones
    assert (added.index, added.similarity, added.constraints) == (2, 0.0, {"added.contacts": 0.0, "guardrails": 1.0})
