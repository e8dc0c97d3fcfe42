"""The diagnosis of crafted episodes, finding by finding (`evaluation/diagnosis.py`): the codes, how
often, where, and the detail a report shows (found unpinned by mutation testing, benchmarks/README.md
"Mutation testing")."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.roles.base import Turn
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


def findings(milestones: str, turns: Sequence[Turn | ToolCall], max_messages: int | None = None) -> list[Row]:
    s = scenario(WIFI + milestones)
    evaluation = evaluate(s, play(s, turns, max_messages=max_messages))
    return [(f.code, f.count, f.per_call, f.indices, f.detail) for f in evaluation.diagnosis]


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
