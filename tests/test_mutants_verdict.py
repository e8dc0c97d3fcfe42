"""What a failed milestone says (`evaluation/verdict.py`'s explanations), on crafted episodes: which
message is "closest", what it misses, and that a text constraint that holds is passed over (found
unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from pytest_toolsandbox.evaluation import Evaluation, evaluate
from pytest_toolsandbox.evaluation.result import MilestoneVerdict
from pytest_toolsandbox.evaluation.verdict import _own_axis, quote
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall
from tests.test_scoring_support import call, play, say, scenario

WIFI = """
categories: [single_tool_call, multiple_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status, get_wifi_status]
reference:
  - agent: Hello there.
  - user: Go on.
  - agent: Hello there.
  - user: Go on then.
  - agent: Hello there.
  - user: Do it.
  - set_wifi_status(on=false)
  - agent: Wifi is off now.
milestones:
"""
ONE_LINE = WIFI.split("reference:")[0] + "milestones:\n"
"""The same scenario whose user says only its first message, then ends the conversation."""


def judged(milestones: str, turns: Sequence[Turn | ToolCall], max_messages: int | None = None,
           base: str = WIFI) -> Evaluation:
    s = scenario(base + milestones)
    return evaluate(s, play(s, turns, max_messages=max_messages))


def verdict(evaluation: Evaluation, name: str) -> MilestoneVerdict:
    assert evaluation.verdict is not None
    return next(milestone for milestone in evaluation.verdict.milestones if milestone.name == name)


def test_an_agent_that_never_speaks_to_the_user_is_told_so() -> None:
    evaluation = judged("  told: {agent_says: Wifi is off now.}\n", [call("get_wifi_status")] * 4, max_messages=6)
    assert verdict(evaluation, "told").missing == "the agent sent no message to the user"


def test_the_closest_message_is_the_best_scoring_one_when_the_mapping_ends_after_the_last() -> None:
    """`told` must follow the wifi change, the agent's last act: the mapping leaves it on the change's
    reply, after every agent message, so the closest is the best-scoring agent message (the second of
    three), not the first or the last."""
    turns = [say("Hello there."), say("Wifi is nearly off now."), say("Okay."), call("set_wifi_status", on=False)]
    evaluation = judged("  wifi_done: {world: {settings: {wifi: false}}}\n"
                        "  told: {after: [wifi_done], agent_says: Wifi is off now.}\n", turns, max_messages=8)
    told = verdict(evaluation, "told")
    mapped = next(outcome for outcome in evaluation.milestones if outcome.name == "told")
    assert (mapped.index, mapped.constraints["agent_says"]) == (10, 0.0)  # the change's reply: nothing said there
    assert told.closest == "Wifi is nearly off now."
    assert told.missing is not None and told.missing.startswith(
        'the closest agent message "Wifi is nearly off now." is not the reference wording "Wifi is off now." '
        "(ROUGE-L 0.9")


def test_without_a_closer_message_the_latest_from_the_sender_is_quoted() -> None:
    """Mapped on the change's reply, with only an agent message that shares no word after it: that one."""
    turns = [say("Hello there."), say("Wifi is nearly off now."), call("set_wifi_status", on=False),
             say("Okay bye.")]
    told = verdict(judged("  wifi_done: {world: {settings: {wifi: false}}}\n"
                          "  told: {after: [wifi_done], agent_says: Wifi is off now.}\n", turns, max_messages=7),
                   "told")
    assert (told.missing, told.closest) == (
        'the closest agent message "Okay bye." is not the reference wording "Wifi is off now." (ROUGE-L 0.000; '
        "the milestone states no facts, so only the exact wording is reached)", "Okay bye.")


def test_a_text_that_holds_is_passed_over_for_the_one_that_fails() -> None:
    told = verdict(judged("  told: {agent_says: [Wifi is off now., {text: goodbye, match: contains}]}\n",
                          [say("Wifi is off now.")], base=ONE_LINE), "told")
    assert (told.missing, told.closest, told.fact) == (
        'the closest agent message "Wifi is off now." does not state "goodbye"', "Wifi is off now.",
        'state "goodbye"')


def test_an_empty_message_is_quoted_empty() -> None:
    told = verdict(judged("  told: {agent_says: Wifi is off now.}\n", [say("")], base=ONE_LINE), "told")
    assert (told.missing, told.closest) == (
        'the closest agent message "" is not the reference wording "Wifi is off now." (ROUGE-L 0.000; the milestone '
        "states no facts, so only the exact wording is reached)", "")


READINGS = ("  read: {agent_says: The readings are 20 and 1.1., "
            "facts: [{number: 20}, {number: 1.1, tolerance: 0.1}]}\n")


def test_a_value_of_a_sibling_fact_is_no_rival_in_the_explanation() -> None:
    """20 is the milestone's other fact: the missing 1.1 is "not stated", not "given as 20 instead"."""
    read = verdict(judged(READINGS, [say("It reads 20.")], base=ONE_LINE), "read")
    assert (read.missing, read.fact) == (
        'the closest agent message "It reads 20." does not state the number 1.1 (±0.1)', "state the number 1.1 (±0.1)")


def test_another_milestones_fact_decides_which_fact_is_missing() -> None:
    """7 is the `count` milestone's value: beside 20 it is no rival (the context), so the fact `read`
    misses is 1.1, not 20."""
    evaluation = judged(READINGS + "  count: {agent_says: The count is 7., facts: [{number: 7}]}\n",
                        [say("It reads 20 and 7.")], base=ONE_LINE)
    assert verdict(evaluation, "count").reached
    read = verdict(evaluation, "read")
    assert (read.missing, read.fact) == (
        'the closest agent message "It reads 20 and 7." does not state the number 1.1 (±0.1)',
        "state the number 1.1 (±0.1)")


def test_a_state_that_holds_is_passed_over_for_the_text_that_fails() -> None:
    told = verdict(judged("  told: {world: {settings: {wifi: false}}, agent_says: Wifi is off now.}\n",
                          [call("set_wifi_status", on=False), say("Wifi is nearly off now.")], base=ONE_LINE), "told")
    assert told.missing is not None and told.missing.startswith(
        'the closest agent message "Wifi is nearly off now." is not the reference wording "Wifi is off now."')


GUARDED = """
categories: [multiple_tool_call, single_user_turn]
user: {goal: Know about wifi., first_message: "Is my wifi on?"}
tools: [get_wifi_status, add_contact]
milestones:
  checked: {tool_call: {get_wifi_status: {}}}
  told: {after: [checked], agent_says: Your wifi is on.}
"""


def test_a_guardrail_broken_between_a_milestone_and_its_successor_is_named_where_the_successor_holds() -> None:
    """The answer is word-perfect (message 7), but contacts changed after the check (message 4): the
    guardrail, not the order, is why it is not reached; only the table that changed is named."""
    s = scenario(GUARDED)
    add = call("add_contact", name="Ann Lee", phone_number="+14155550100")
    told = verdict(evaluate(s, play(s, [call("get_wifi_status"), add, say("Your wifi is on.")])), "told")
    assert told.missing == "guardrails: contacts changed between checked (message 4) and message 7, where it holds"


def test_a_trajectory_without_the_users_first_message_has_no_message_from_anyone() -> None:
    """A trajectory file may stop before the first user message: nothing was said, by the agent or the user."""
    s = scenario(ONE_LINE + "  told: {agent_says: Wifi is off now.}\n  asked: {user_says: Please turn off my wifi.}\n")
    played = play(s, [say("Wifi is off now.")])
    evaluation = evaluate(s, played.model_copy(update={"messages": played.messages[:2]}))
    assert [(name, verdict(evaluation, name).missing) for name in ("told", "asked")] == [
        ("told", "the agent sent no message to the user"), ("asked", "the user sent no message to the agent")]


def test_a_message_is_quoted_whole_up_to_160_characters() -> None:
    assert quote("x" * 160) == '"' + "x" * 160 + '"'
    assert quote("x" * 161) == '"' + "x" * 159 + '…"'
    assert quote("  two\n   lines ") == '"two lines"'


def test_a_change_undone_before_the_successor_is_no_guardrail_breach() -> None:
    """Wifi off and on again between the check and the answer: the world is as it was, so the answer counts."""
    s = scenario(GUARDED.replace("tools: [get_wifi_status, add_contact]",
                                 "tools: [get_wifi_status, add_contact, set_wifi_status]"))
    turns = [call("get_wifi_status"), call("set_wifi_status", on=False), call("set_wifi_status", on=True),
             say("Your wifi is on.")]
    evaluation = evaluate(s, play(s, turns))
    assert verdict(evaluation, "told").reached and evaluation.score == 1.0


def test_without_milestones_a_fired_minefield_is_the_reason_to_fail() -> None:
    s = scenario(ONE_LINE.removesuffix("milestones:\n") + "minefields:\n  wifi_left_on: {agent_says: Wifi stays on.}\n")
    evaluation = evaluate(s, play(s, [say("Wifi stays on.")]))
    assert evaluation.verdict is not None
    assert (evaluation.verdict.passed, evaluation.verdict.reasons()) == (False, ["minefield 'wifi_left_on' fired"])


TWO_CHECKS = """
categories: [multiple_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: "Turn my wifi off."}
tools: [get_wifi_status, set_wifi_status, add_contact]
milestones:
  checked: {tool_call: {get_wifi_status: {}}}
  switched: {tool_call: {set_wifi_status: {on: false}}}
  wifi_off: {after: [checked, switched], world: {settings: {wifi: false}}}
"""

SINCE_INITIAL = """
categories: [multiple_tool_call, single_user_turn]
user: {goal: Add Ann., first_message: "Add Ann Lee, +14155550100."}
tools: [set_wifi_status, add_contact]
milestones:
  adding: {tool_call: {add_contact: {name: Ann Lee}}}
  added_ann: {after: [adding], since: initial, added: {contacts: [{name: Ann Lee, phone_number: "+14155550100"}]}}
"""

ADD_ANN = call("add_contact", name="Ann Lee", phone_number="+14155550100")
REMINDER = call("add_reminder", content="Buy milk", reminder_timestamp=1798308000.0)


@pytest.mark.parametrize(("text", "turns", "missing"), [
    # wifi is off where both checks are done, but a contact was added after the first: that guardrail fails
    (TWO_CHECKS, [call("get_wifi_status"), ADD_ANN, call("set_wifi_status", on=False), say("Done.")],
     "guardrails: contacts changed between checked (message 4) and message 8, where it holds"),
    # a contact and a reminder added after the check: both tables are named
    (TWO_CHECKS.replace("add_contact]", "add_contact, add_reminder]"),
     [call("get_wifi_status"), ADD_ANN, REMINDER, call("set_wifi_status", on=False), say("Done.")],
     "guardrails: contacts, reminders changed between checked (message 4) and message 10, where it holds"),
    # Ann is added since the initial world, but wifi had been turned off: the guardrail against it fails
    (SINCE_INITIAL, [call("set_wifi_status", on=False), ADD_ANN, say("Done.")],
     "guardrails: settings changed between the start and message 6, where it holds"),
])
def test_a_milestone_that_holds_where_mapped_but_breaks_a_guardrail_there_is_not_reached(
        text: str, turns: list[ToolCall | Turn], missing: str) -> None:
    """The milestone's constraints hold, but a guarded table changed since a predecessor or since the
    initial world: the verdict names that table (not every guarded one), since where, and where it holds."""
    s = scenario(text)
    evaluation = evaluate(s, play(s, turns))
    assert evaluation.verdict is not None and not evaluation.verdict.passed
    assert [(v.reached, v.missing) for v in evaluation.verdict.milestones][-1] == (False, missing)


ANNOUNCED = """
categories: [single_tool_call, multiple_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status, add_reminder]
reference:
  - agent: Turning wifi off now.
  - user: Go on.
  - set_wifi_status(on=false)
  - agent: Done.
  - user: Thanks.
milestones:
  told: {agent_says: Turning wifi off now.}
  wifi_off: {after: [told], world: {settings: {wifi: false}}}
"""
"""`wifi_off` is guarded against `told` (a message, itself guarded against nothing): every table but the
settings must stay as they were when the agent announced it."""


def test_a_guardrail_against_a_predecessor_is_scored_from_where_the_predecessor_is() -> None:
    """A reminder added before the announcement leaves `wifi_off`'s guardrail whole: the announcement, not
    the initial world, is what it is guarded against."""
    s = scenario(ANNOUNCED)
    turns = [REMINDER, say("Turning wifi off now."), call("set_wifi_status", on=False), say("Done.")]
    evaluation = evaluate(s, play(s, turns))
    assert [(o.name, o.index, o.constraints) for o in evaluation.milestones] == [
        ("told", 5, {"agent_says": 1.0}), ("wifi_off", 8, {"world.settings": 1.0, "guardrails": 1.0})]


def test_a_guardrail_is_judged_against_where_the_verdict_reached_the_predecessor() -> None:
    """The exact announcement is at message 3; a looser echo of it at message 9 would keep the guardrail
    whole, so the similarity mapping puts `told` there. The verdict reaches `told` only at message 3, and
    the reminder added after it is what fails `wifi_off` (not the order)."""
    s = scenario(ANNOUNCED.replace("Turning wifi off now.}", "Cellular is off too.}"))
    evaluation = evaluate(s, play(s, [say("Cellular is off too."), REMINDER, call("set_wifi_status", on=False),
                                      say("Wifi is off now.")]))
    mapped = {outcome.name: outcome.index for outcome in evaluation.milestones}
    assert (mapped, verdict(evaluation, "told").index) == ({"told": 9, "wifi_off": 9}, 3)
    assert verdict(evaluation, "wifi_off").missing == (
        "guardrails: reminders changed between told (message 3) and message 8, where it holds")


PHONE = """
categories: [multiple_tool_call, multiple_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status, set_cellular_service_status, add_reminder, set_low_battery_mode_status]
reference:
  - agent: Turning wifi off now.
  - user: Go on.
  - set_wifi_status(on=false)
  - agent: Wifi is off.
  - user: Thanks.
milestones:
"""
WIFI_FACTS = "facts: [{any: [wifi]}, {none: [not]}]"
CELLULAR_FACTS = "facts: [{any: [cellular]}, {none: [not]}]"


@pytest.mark.parametrize(("milestones", "turns", "missing"), [
    # low battery mode turns cellular off after the answer that had to follow it
    (f"  cellular_off: {{world: {{settings: {{cellular: false}}}}}}\n"
     f"  told: {{after: [cellular_off], agent_says: Wifi is off now., {WIFI_FACTS}}}\n",
     [say("Wifi is off."), call("set_low_battery_mode_status", on=True)],
     ("told", "holds at message 3, before cellular_off (message 6), which it must follow")),
    # the answer about wifi had to come first; the one about cellular, reached, came before it
    (f"  wifi_told: {{agent_says: Wifi is off.}}\n"
     f"  cellular_told: {{after: [wifi_told], agent_says: Cellular is off., {CELLULAR_FACTS}}}\n",
     [say("Cellular is off."), say("Wifi is off.")],
     ("wifi_told", "holds at message 5, after cellular_told (message 3), which must follow it")),
    # two confirmations in other words (ROUGE-L 0: reached with no similarity bonus) before the answer
    # both must follow
    ("  wifi_told: {agent_says: Wifi is off.}\n"
     f"  cellular_told: {{after: [wifi_told], agent_says: Mobile data disabled., {CELLULAR_FACTS}}}\n"
     "  battery_told: {after: [wifi_told], agent_says: Power saving enabled., facts: [{any: [battery]}]}\n",
     [say("Cellular is off."), say("Low battery mode is on."), say("Wifi is off.")],
     ("wifi_told", "holds at message 7, after cellular_told (message 3), which must follow it")),
    # one reminder where two were due: placing `first` on it would leave `again` with nothing added since
    ("  first: {since: initial, added: {reminders: [{content: Buy milk}]}}\n"
     "  again: {after: [first], added: {reminders: [{content: Buy milk}]}}\n",
     [REMINDER], ("first", "holds at message 4, where a milestone reached after it would no longer hold")),
    # the agent said wifi was off before it turned it off, and said nothing after
    (f"  done: {{world: {{settings: {{wifi: false}}}}, agent_says: Wifi is off now., {WIFI_FACTS}}}\n",
     [say("Wifi is off."), call("set_wifi_status", on=False)],
     ("done", "its constraints hold apart (world.settings at message 6, agent_says at message 3), never on one "
              "message")),
])
def test_a_milestone_whose_constraints_hold_is_explained_by_order_or_by_where_they_hold(
        milestones: str, turns: list[ToolCall | Turn], missing: tuple[str, str]) -> None:
    """Each constraint holds somewhere: the explanation names the milestone reached on the wrong side of
    it, the successor it would break, or where each constraint holds when they never hold together."""
    s = scenario(PHONE + milestones)
    evaluation = evaluate(s, play(s, turns))
    assert (missing[0], verdict(evaluation, missing[0]).missing) == missing
    assert evaluation.verdict is not None and not evaluation.verdict.passed


CHECKED_TWICE = GUARDED.split("milestones:")[0].replace("add_contact]", "add_reminder]") + """milestones:
  asked: {tool_call: {get_wifi_status: {}}}
  checked: {after: [asked], tool_call: {get_wifi_status: {}}}
  told: {after: [checked], agent_says: Your wifi is on.}
  told_again: {after: [checked], agent_says: Your wifi is on.}
"""


def test_a_predecessor_reached_on_the_same_message_is_no_order_violation() -> None:
    """`asked` and `checked` are the one call (message 4); the reminder added after it breaks the
    guardrails of both answers against `checked`, so the verdict leaves `checked` out. Sharing its
    predecessor's message is allowed: the answers it would break are to blame, not the order."""
    s = scenario(CHECKED_TWICE)
    evaluation = evaluate(s, play(s, [call("get_wifi_status"), REMINDER, say("Your wifi is on.")]))
    assert evaluation.verdict is not None
    assert [(v.name, v.reached) for v in evaluation.verdict.milestones] == [
        ("asked", True), ("checked", False), ("told", True), ("told_again", True)]
    assert verdict(evaluation, "checked").missing == (
        "holds at message 4, where a milestone reached after it would no longer hold")


def test_a_table_along_its_own_axis_takes_each_reference_at_its_position() -> None:
    table = np.arange(24).reshape(4, 3, 2)
    assert _own_axis(table, [2, 1]).tolist() == [5, 11, 17, 23]
    assert _own_axis(table[:, 0, 0], []).tolist() == [0, 6, 12, 18]
