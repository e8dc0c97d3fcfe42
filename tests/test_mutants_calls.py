"""The agent's calls as scoring reads them (`evaluation/calls.py`): each paired with its own reply and named by
the tool that ran, and their arguments compared with expected ones (`arguments_agree`, shared by the diagnosis
and the ground-truth metrics). Found unpinned by mutation testing (benchmarks/README.md, "Mutation testing")."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation.calls import agent_calls, arguments_agree
from pytest_toolsandbox.world.messages import ToolCall
from tests.test_scoring_support import call, calls, play, say, seed_scenario


def test_a_call_whose_arguments_could_not_be_read_agrees_with_nothing() -> None:
    assert not arguments_agree({"on": True}, None)
    assert arguments_agree({}, {})  # nothing expected: any readable arguments agree
    assert not arguments_agree({}, None)


def test_every_expected_argument_must_be_given() -> None:
    assert not arguments_agree({"on": True}, {})
    assert not arguments_agree({"on": True, "name": "Kenji"}, {"on": True})
    assert arguments_agree({"on": True}, {"on": True, "extra": 1})  # arguments not expected are free


@pytest.mark.parametrize(("expected", "given", "agree"), [
    ("alpha beta gamma delta", "alpha beta gamma delta epsilon", True),  # ROUGE-L 0.89
    ("alpha beta gamma delta", "alpha beta gamma delta epsilon zeta", True),  # exactly the threshold, 0.8
    ("alpha beta gamma delta", "alpha beta gamma delta epsilon zeta eta", False),  # 0.73
])
def test_free_text_agrees_from_rouge_l_point_eight_up(expected: str, given: str, agree: bool) -> None:
    assert arguments_agree({"content": expected}, {"content": given}) is agree


@pytest.mark.parametrize(("expected", "given"), [("on", "on."), ("Fredrik", "Fredrik Thordendal"), ("on", 1)])
def test_text_without_a_space_is_compared_as_a_value_not_by_rouge(expected: str, given: object) -> None:
    """A one-word string is a value: ROUGE-L would let "on." or a longer name pass."""
    assert not arguments_agree({"status": expected}, {"status": given})


def test_numbers_agree_within_their_own_tolerance_only() -> None:
    assert arguments_agree({"latitude": 37.3, "longitude": 10.0}, {"latitude": 37.8, "longitude": 10.0},
                           {"latitude": 0.5})
    assert not arguments_agree({"latitude": 37.3, "longitude": 10.0}, {"latitude": 37.3, "longitude": 10.5},
                               {"latitude": 0.5})  # the tolerance is the latitude's
    assert not arguments_agree({"amount": 100}, {"amount": 100.5})  # none given: exact


def test_parallel_calls_are_paired_with_their_own_replies() -> None:
    """Two calls in one turn come before both replies: each call takes the reply carrying its id."""
    s = seed_scenario()
    played = play(s, [calls(call("search_contacts", name="Fredrik"), call("set_cellular_service_status", on=True)),
                      say("Done.")])
    paired = [(c.index, c.tool, c.reply.index if c.reply else None, c.succeeded) for c in agent_calls(played)]
    assert paired == [(3, "search_contacts", 5, True), (4, "set_cellular_service_status", 6, True)]
    assert [played.messages[5].tool_call_id, played.messages[6].tool_call_id] == [
        played.messages[3].tool_call.id, played.messages[4].tool_call.id]


def test_two_calls_of_one_turn_under_the_same_id_each_take_their_own_reply() -> None:
    """An agent that gives both calls of a turn one id: the replies come in call order, and a reply taken by
    the first call is not taken again by the second."""
    s = seed_scenario()
    same_id = (ToolCall(id="dup", name="search_contacts", arguments='{"name": "Fredrik"}'),
               ToolCall(id="dup", name="set_cellular_service_status", arguments='{"on": true}'))
    paired = [(c.index, c.reply.index if c.reply else None) for c in agent_calls(play(s, [calls(*same_id), say("ok")]))]
    assert paired == [(3, 5), (4, 6)]


def test_a_call_that_ran_is_named_by_its_trace_even_without_the_offered_tools() -> None:
    """A trajectory written without its offered tools (an older file): the calls that ran still name their tool."""
    s = seed_scenario()
    played = play(s, [call("search_contacts", name="Fredrik"), say("ok")])
    assert [c.tool for c in agent_calls(played.model_copy(update={"tools": []}))] == ["search_contacts"]
