"""Ground truth (`evaluation/ground_truth.py`): a read-only call counts as the reference's when it returns
what the reference's returned, however it was asked (found unpinned by mutation testing,
benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.ground_truth import reference_calls
from pytest_toolsandbox.tools.registry import all_tools
from tests.test_scoring_support import ALBUM, FREDRIK, call, play, say, scenario, seed_scenario, seed_turns


@pytest.mark.parametrize(("query", "matched"), [("Fredrik Thordendal", 3), ("Fredrik", 3), ("Nobody Here", 2)])
def test_a_search_matches_the_reference_search_by_its_result(query: str, matched: int) -> None:
    """The seed dialogue's three successful calls: the search, enabling cellular, the send. "Fredrik"
    finds the same contact as the reference's "Fredrik Thordendal"; a search finding no one is extra."""
    s = seed_scenario()
    turns = seed_turns()
    turns[0] = call("search_contacts", name=query)
    truth = evaluate(s, play(s, turns)).ground_truth
    assert truth is not None
    assert (truth.matched_calls, truth.predicted_calls, truth.reference_calls) == (matched, 4, 3)
    assert truth.recall == matched / 3 and truth.precision == matched / 4


def test_two_searches_finding_the_reference_contact_count_once() -> None:
    """Both searches return what the reference's search returned; one reference call matches one call."""
    s = seed_scenario()
    turns = seed_turns()
    turns.insert(1, call("search_contacts", name="Fredrik"))
    truth = evaluate(s, play(s, turns)).ground_truth
    assert truth is not None
    assert (truth.matched_calls, truth.predicted_calls, truth.precision) == (3, 5, 0.6)


def test_a_failed_call_is_no_reference_call_even_with_its_arguments() -> None:
    """The send fails (cellular is off): its arguments are the reference's, yet it did nothing."""
    s = seed_scenario()
    turns = [call("search_contacts", name="Fredrik Thordendal"),
             call("send_message_with_phone_number", phone_number=FREDRIK, content=ALBUM), say("Sent.")]
    truth = evaluate(s, play(s, turns)).ground_truth
    assert truth is not None
    assert (truth.matched_calls, truth.predicted_calls) == (1, 2)


SWITCHES = """
categories: [single_tool_call, multiple_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status, set_cellular_service_status, get_wifi_status]
reference:
  - agent: Shall I?
  - user: Yes, go on.
  - set_wifi_status(on=false)
  - agent: Wifi is off.
"""


def test_an_action_on_another_tool_with_the_same_arguments_is_no_match() -> None:
    s = scenario(SWITCHES)
    truth = evaluate(s, play(s, [say("Shall I?"), call("set_cellular_service_status", on=False),
                                 say("Done.")])).ground_truth
    assert truth is not None
    assert (truth.matched_calls, truth.predicted_calls, truth.reference_calls, truth.incorrect_action_rate) == (
        0, 1, 1, 1.0)


def test_the_reference_calls_are_played_with_the_scripted_user_per_scenario() -> None:
    """The call comes after the user's second line; a second scenario is played on its own."""
    assert [c.tool for c in reference_calls(scenario(SWITCHES), all_tools())] == ["set_wifi_status"]
    other = SWITCHES.replace("set_wifi_status(on=false)", "get_wifi_status()")
    assert [c.tool for c in reference_calls(scenario(other), all_tools())] == ["get_wifi_status"]


def test_the_registry_passed_to_evaluate_decides_actions_and_replays_the_reference() -> None:
    """`evaluate(…, registry=…)` scores with that registry, not the built-in one: it says which tools are
    actions (a wrong message sent is an incorrect action, a read-only "send" is matched by its result) and
    it is the registry the reference dialogue is replayed with."""
    s = seed_scenario()
    turns = seed_turns()
    turns[3] = call("send_message_with_phone_number", phone_number=FREDRIK, content="Something else entirely.")
    trajectory = play(s, turns)
    built_in = evaluate(s, trajectory).ground_truth
    # three action calls: the send that failed (cellular off) did nothing, the wrong send is incorrect
    assert built_in is not None and (built_in.incorrect_action_rate, built_in.matched_calls) == (1 / 3, 2)

    registry = dict(all_tools())
    send = registry["send_message_with_phone_number"]
    registry[send.name] = dataclasses.replace(send, action=False)
    as_read = evaluate(s, trajectory, registry=registry).ground_truth
    assert as_read is not None and (as_read.incorrect_action_rate, as_read.matched_calls) == (0.0, 3)

    search = registry["search_contacts"]
    registry[search.name] = dataclasses.replace(search, function=lambda world, **arguments: [])
    finds_no_one = evaluate(s, trajectory, registry=registry).ground_truth
    assert finds_no_one is not None and finds_no_one.matched_calls == 2  # the replayed search returned nothing


def test_the_reference_is_replayed_once_per_scenario_and_registry() -> None:
    s = scenario(SWITCHES)
    first = reference_calls(s, all_tools())
    assert reference_calls(s, all_tools()) is first  # another dict of the same tools: kept
    assert reference_calls(s, all_tools(), key=s.model_dump_json()) is first  # the key the caller has
    registry = all_tools()
    registry["set_wifi_status"] = dataclasses.replace(registry["set_wifi_status"], action=False)
    assert reference_calls(s, registry) is not first and reference_calls(s, registry) == first


def test_an_unneeded_action_is_incorrect_when_two_calls_compete_for_one_reference_call() -> None:
    """Two searches find the reference's contact, so the calls are matched by a maximum matching; the
    unneeded wifi switch (call 0) is the one incorrect action, whatever the indices of the reference calls."""
    s = seed_scenario()
    turns = seed_turns()
    turns[0:1] = [call("set_wifi_status", on=False), call("search_contacts", name="Fredrik"),
                  call("search_contacts", name="Fredrik Thordendal")]
    s = s.model_copy(update={"tools": [*s.tools, "set_wifi_status"]})
    truth = evaluate(s, play(s, turns)).ground_truth
    assert truth is not None
    assert (truth.matched_calls, truth.predicted_calls, truth.incorrect_action_rate) == (3, 6, 0.25)
