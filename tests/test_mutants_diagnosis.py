"""The diagnosis of crafted episodes, finding by finding (`evaluation/diagnosis.py`): the codes, how
often, where, and the detail a report shows (found unpinned by mutation testing, benchmarks/README.md
"Mutation testing")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from pytest_toolsandbox.world.messages import ToolCall
from tests.test_scoring_support import call, play, say, scenario

WIFI = """
categories: [single_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status, get_wifi_status, add_contact, search_contacts]
milestones:
"""
WIFI_OFF = "  wifi_done: {world: {settings: {wifi: false}}}\n"

Row = tuple[str, int, float, list[int], str]


def diagnosed(text: str, turns: Sequence[Turn | ToolCall], **options: Any) -> list[Row]:
    """The findings of a scripted episode of the scenario in `text`, as a report lists them."""
    s = scenario(text)
    evaluation = evaluate(s, play(s, turns, **options))
    return [(f.code, f.count, f.per_call, f.indices, f.detail) for f in evaluation.diagnosis]


def findings(milestones: str, turns: Sequence[Turn | ToolCall], **options: Any) -> list[Row]:
    return diagnosed(WIFI + milestones, turns, **options)


def test_an_event_out_of_order_is_named_with_the_milestone_it_must_precede() -> None:
    assert findings("  told: {agent_says: Turning wifi off.}\n"
                    "  switched: {after: [told], tool_call: {set_wifi_status: {on: false}}}\n",
                    [call("set_wifi_status", on=False), say("Turning wifi off.")]) == [
        ("ORDER", 1, 1.0, [4, 5], "told found at message 5, after switched (message 4), which must come after it")]


def test_milestones_that_need_a_call_are_listed_when_the_user_ends_early() -> None:
    assert findings(WIFI_OFF + "  looked: {tool_call: {search_contacts: {name: Ann}}}\n"
                               "  checked: {tool_call: {get_wifi_status: {}}}\n",
                    [say("I will look into it.")]) == [
        ("IAC", 3, 3.0, [], "wifi_done, looked, checked"),
        ("PREMATURE_END", 1, 1.0, [5], "the user ended it; pending: wifi_done, looked, checked")]


def test_a_repeated_read_and_a_cap_hit_are_reported() -> None:
    assert findings(WIFI_OFF, [call("get_wifi_status"), call("get_wifi_status"), say("Let me see.")]) == [
        ("RAC", 1, 0.5, [5], "get_wifi_status"), ("IAC", 1, 0.5, [], "wifi_done"),
        ("PREMATURE_END", 1, 0.5, [9], "the user ended it; pending: wifi_done")]
    assert findings(WIFI_OFF, [call("get_wifi_status")] * 5, max_messages=6) == [
        ("RAC", 2, 2 / 3, [5, 7], "get_wifi_status"), ("IAC", 1, 1 / 3, [], "wifi_done"),
        ("PREMATURE_END", 1, 1 / 3, [8], "the message cap was hit; pending: wifi_done")]


def test_a_claimed_change_names_every_change_not_made() -> None:
    ann = "  ann: {added: {contacts: [{name: Ann Lee, phone_number: '+14155550100'}]}}\n"
    assert findings(WIFI_OFF + ann, [say("Your wifi has been turned off and Ann has been added.")]) == [
        ("IAC", 2, 2.0, [], "wifi_done, ann"),
        ("PREMATURE_END", 1, 1.0, [5], "the user ended it; pending: wifi_done, ann"),
        ("CLAIMED_UNMADE", 1, 1.0, [3], "wifi_done, ann")]
    assert findings(WIFI_OFF, [say("Done, I have switched it off.")])[-1][0] == "PREMATURE_END"  # no claim read


def test_findings_name_the_registry_tool_although_the_agent_saw_scrambled_names() -> None:
    # setting_4 / setting_8 are get_wifi_status / set_wifi_status under scrambled names; a malformed call
    # and calls to tools no milestone expects do not stop the search for later wrong values and repeats
    switched = "  switched: {tool_call: {set_wifi_status: {on: false}}}\n"
    assert diagnosed(WIFI + WIFI_OFF + switched,
                     [call("nope"), call("setting_4"), call("setting_4"), call("setting_8", on=True), say("Hm.")],
                     variant="tool_name_scrambled") == [
        ("IFN", 1, 0.25, [3], "nope"), ("IAV", 1, 0.25, [9], "set_wifi_status"),
        ("RAC", 1, 0.25, [7], "get_wifi_status"),
        ("IAC", 2, 0.5, [], "wifi_done, switched"),
        ("PREMATURE_END", 1, 0.25, [13], "the user ended it; pending: wifi_done, switched")]


def test_a_call_cut_off_under_a_name_not_offered_is_no_repeat() -> None:
    # the registry's own name for setting_4 was never offered, and the message cap stops the episode
    # before the environment could refuse it: it is not the call setting_4 made
    assert findings(WIFI_OFF, [call("setting_4"), call("get_wifi_status")], max_messages=3,
                    variant="tool_name_scrambled") == [
        ("IAC", 1, 0.5, [], "wifi_done"), ("PREMATURE_END", 1, 0.5, [5], "the message cap was hit; pending: wifi_done")]


def test_a_call_target_beside_a_world_target_is_an_expected_call() -> None:
    # the same failed call is no wrong value where no milestone expects that tool
    assert findings(WIFI_OFF, [call("set_wifi_status", on=True), say("Let me see.")])[0][0] == "IAC"
    assert findings("  done: {world: {settings: {wifi: false}}, tool_call: {set_wifi_status: {on: false}}}\n",
                    [call("set_wifi_status", on=True), say("Let me see.")]) == [
        ("IAV", 1, 1.0, [3], "set_wifi_status"), ("IAC", 1, 1.0, [], "done"),
        ("PREMATURE_END", 1, 1.0, [7], "the user ended it; pending: done")]


REMINDER = """
categories: [single_tool_call, single_user_turn]
user: {goal: A reminder., first_message: Remind me to stand up in an hour.}
tools: [add_reminder]
milestones:
  reminded:
    tool_call: {add_reminder: {content: Stand up, reminder_timestamp: "@now +1h"}}
    tolerance: {reminder_timestamp: 60}
"""


def test_a_number_within_the_milestones_tolerance_is_no_wrong_value() -> None:
    due = scenario_clock(scenario(REMINDER)).timestamp() + 3600

    def reminded_at(timestamp: float) -> list[Row]:
        return diagnosed(REMINDER, [call("add_reminder", content="Stand up", reminder_timestamp=timestamp), say("OK.")])

    assert reminded_at(due + 60) == reminded_at(due - 60) == []
    assert reminded_at(due + 61) == [
        ("IAV", 1, 1.0, [3], "add_reminder"), ("IAC", 1, 1.0, [], "reminded"),
        ("PREMATURE_END", 1, 1.0, [7], "the user ended it; pending: reminded")]


def test_adding_the_same_contact_twice_is_a_repeat() -> None:
    ann = {"name": "Ann Lee", "phone_number": "+14155550100"}
    assert findings(WIFI_OFF, [call("add_contact", **ann), call("add_contact", **ann), say("OK.")]) == [
        ("RAC", 1, 0.5, [5], "add_contact"), ("IAC", 1, 0.5, [], "wifi_done"),
        ("PREMATURE_END", 1, 0.5, [9], "the user ended it; pending: wifi_done")]


def test_a_failed_call_repeated_with_its_arguments_in_another_order_is_a_repeat() -> None:
    # "+1" is no phone number: both searches fail, so no trace puts their arguments in one order
    assert findings(WIFI_OFF, [call("search_contacts", name="Ann", phone_number="+1"),
                               call("search_contacts", phone_number="+1", name="Ann"), say("OK.")]) == [
        ("RAC", 1, 0.5, [5], "search_contacts"), ("IAC", 1, 0.5, [], "wifi_done"),
        ("PREMATURE_END", 1, 0.5, [9], "the user ended it; pending: wifi_done")]


def test_repeats_of_two_tools_are_one_finding_naming_both() -> None:
    turns = [call("get_wifi_status"), call("search_contacts", name="Ann"), call("get_wifi_status"),
             call("search_contacts", name="Ann"), call("get_wifi_status"), say("OK.")]
    assert findings(WIFI_OFF, turns)[0] == ("RAC", 3, 0.6, [7, 9, 11], "get_wifi_status; search_contacts")


WIFI_THEN_ANN = """
categories: [multiple_tool_call, multiple_user_turn]
user: {goal: Turn wifi off and add Ann., first_message: Please turn off my wifi.}
tools: [set_wifi_status, add_contact]
milestones:
  wifi_done: {world: {settings: {wifi: false}}}
  ann: {added: {contacts: [{name: Ann Lee, phone_number: '+14155550100'}]}}
reference:
  - set_wifi_status(on=false)
  - agent: Wifi is off.
  - user: Now add Ann Lee, +14155550100.
  - add_contact(name="Ann Lee", phone_number="+14155550100")
  - agent: Ann Lee has been added.
"""
ANN_MISSING = [("IAC", 1, 1.0, [], "ann"), ("PREMATURE_END", 1, 1.0, [9], "the user ended it; pending: ann")]


def test_a_claim_in_a_turn_that_changed_the_world_is_not_called_false() -> None:
    # it over-claims (Ann was not added), but the turn did change something: the missing change is IAC
    assert diagnosed(WIFI_THEN_ANN, [call("set_wifi_status", on=False),
                                     say("Wifi has been turned off and Ann Lee has been added.")]) == ANN_MISSING


def test_each_claim_is_judged_by_the_changes_of_its_own_turn() -> None:
    turns = [call("set_wifi_status", on=False), say("Wifi has been turned off."), say("Ann Lee has been added.")]
    assert diagnosed(WIFI_THEN_ANN, turns) == [*ANN_MISSING, ("CLAIMED_UNMADE", 1, 1.0, [7], "ann")]
    # a reply that claims nothing is passed over, and the later claim is still read
    assert diagnosed(WIFI_THEN_ANN, [say("Let me check."), say("Ann Lee has been added.")])[-1] == (
        "CLAIMED_UNMADE", 1, 1.0, [5], "wifi_done, ann")


def test_the_users_goal_is_not_read_as_a_claim_of_the_agent() -> None:
    goal = WIFI_THEN_ANN.replace("Turn wifi off and add Ann.", "Make sure wifi has been turned off.")
    assert diagnosed(goal, [say("Let me look.")]) == [
        ("IAC", 2, 2.0, [], "wifi_done, ann"),
        ("PREMATURE_END", 1, 1.0, [7], "the user ended it; pending: wifi_done, ann")]


ASKED_AGAIN = """
categories: [single_tool_call, multiple_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status]
milestones:
reference:
  - set_wifi_status(on=false)
  - agent: Done.
  - user: Is it really off?
  - agent: Wifi has been turned off.
"""


def test_restating_a_change_made_in_an_earlier_turn_is_no_false_claim() -> None:
    turns = [call("set_wifi_status", on=False), say("Done."), say("Wifi has been turned off.")]
    # the milestone is reached at the restatement itself (the world has held it since message 4)
    said = "  told: {world: {settings: {wifi: false}}, agent_says: Wifi has been turned off.}\n"
    assert diagnosed(ASKED_AGAIN.replace("milestones:\n", "milestones:\n" + said), turns) == []
    # only an action call is expected: the world changed since the start, so the claim is backed
    called = "  switched: {tool_call: {set_wifi_status: {on: false}}}\n"
    assert diagnosed(ASKED_AGAIN.replace("milestones:\n", "milestones:\n" + called), turns) == []
