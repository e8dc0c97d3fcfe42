"""Each diagnosis code fires exactly where a crafted trajectory puts it, and nowhere else."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.diagnosis import claims_change
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from tests.test_scoring_evaluate import CONFIRMATION, MINEFIELD
from tests.test_scoring_support import (
    ALBUM,
    FREDRIK,
    SEED_SCENARIO,
    call,
    calls,
    play,
    say,
    scenario,
    seed_scenario,
    seed_turns,
)

WIFI_WITH_USER_LINE = """
categories: [single_tool_call, multiple_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status]
milestones:
  wifi_off: {world: {settings: {wifi: false}}}
  confirmed: {after: [wifi_off], agent_says: Wifi is off now.}
reference:
  - agent: Wifi has been turned off.
  - user: It is still on, please really do it.
  - set_wifi_status(on=false)
  - agent: Wifi is off now.
"""


def findings(scenario, turns):
    evaluation = evaluate(scenario, play(scenario, turns))
    return {finding.code: finding for finding in evaluation.diagnosis}


def seed_with(*extra, at: int = 0):
    turns = seed_turns(CONFIRMATION)
    turns[at:at] = extra
    return turns


def test_a_clean_trajectory_has_no_findings() -> None:
    assert findings(seed_scenario(), seed_turns(CONFIRMATION)) == {}


@pytest.mark.parametrize(("bad_call", "code"), [
    (call("search_contacts", arguments='{"name": "Fredrik'), "IFE"),
    (call("search_contacts", arguments='["Fredrik"]'), "IFE"),
    (call("find_contact", name="Fredrik Thordendal"), "IFN"),
    (call("search_contacts", nme="Fredrik Thordendal"), "IAN"),
    (call("send_message_with_phone_number", content=ALBUM), "IAN"),  # missing required argument
    (call("set_cellular_service_status", on="yes"), "IAT"),
])
def test_malformed_calls(bad_call, code: str) -> None:
    found = findings(seed_scenario(), seed_with(bad_call))
    assert set(found) == {code}
    assert found[code].indices == [3] and found[code].count == 1
    assert found[code].per_call == pytest.approx(1 / 5)


def test_wrong_argument_value() -> None:
    found = findings(seed_scenario(), seed_with(call("search_contacts", name="Fredrik")))
    assert set(found) == {"IAV"}
    assert found["IAV"].indices == [3]


def test_free_text_arguments_agree_by_rouge() -> None:
    close_enough = call("send_message_with_phone_number", phone_number=FREDRIK, content=ALBUM + "?")
    turns = seed_turns(CONFIRMATION)
    turns[3] = close_enough
    assert "IAV" not in findings(seed_scenario(), turns)


def test_repeated_call_without_a_world_change() -> None:
    found = findings(seed_scenario(), seed_with(call("search_contacts", name="Fredrik Thordendal"), at=1))
    assert set(found) == {"RAC"}
    assert found["RAC"].indices == [5]


def test_retrying_after_a_world_change_is_not_a_repeat() -> None:
    # The seed itself retries the failed send after turning cellular on.
    assert "RAC" not in findings(seed_scenario(), seed_turns(CONFIRMATION))


def test_retrying_a_failing_call_unchanged_is_a_repeat() -> None:
    retry = call("send_message_with_phone_number", phone_number=FREDRIK, content=ALBUM)
    found = findings(seed_scenario(), seed_with(retry, at=2))
    assert set(found) == {"RAC"}
    assert found["RAC"].indices == [7]


def test_insufficient_calls_and_premature_end() -> None:
    turns = [call("search_contacts", name="Fredrik Thordendal"), call("set_cellular_service_status", on=True),
             say("I could not reach Fredrik.")]
    found = findings(seed_scenario(), turns)
    assert set(found) == {"IAC", "PREMATURE_END"}
    assert found["IAC"].count == 1 and found["IAC"].detail == "message_sent"
    assert found["PREMATURE_END"].indices == [9]
    assert "message_sent" in found["PREMATURE_END"].detail


def test_premature_end_alone_when_only_the_answer_is_missing() -> None:
    found = findings(seed_scenario(), seed_turns(CONFIRMATION)[:-1])
    assert set(found) == {"PREMATURE_END"}
    assert "confirmed" in found["PREMATURE_END"].detail


def test_premature_end_when_the_message_cap_cuts_the_episode() -> None:
    s = seed_scenario()
    evaluation = evaluate(s, play(s, seed_turns(CONFIRMATION), max_messages=4))
    (finding,) = [f for f in evaluation.diagnosis if f.code == "PREMATURE_END"]
    assert "message cap" in finding.detail


def test_minefield_hit() -> None:
    found = findings(scenario(MINEFIELD), [call("search_lat_lon", latitude=37.33, longitude=-122.0),
                                           say("You are in Cupertino.")])
    assert set(found) == {"MINEFIELD"}
    assert found["MINEFIELD"].indices == [4] and found["MINEFIELD"].detail == "guessed_location"


def test_claimed_but_unmade_change() -> None:
    s = scenario(WIFI_WITH_USER_LINE)
    turns = [say("Wifi has been turned off."), call("set_wifi_status", on=False), say("Wifi is off now.")]
    found = findings(s, turns)
    assert set(found) == {"CLAIMED_UNMADE"}
    assert found["CLAIMED_UNMADE"].indices == [3]
    assert found["CLAIMED_UNMADE"].detail == "wifi_off"


def test_hallucinated_success_is_claimed_but_unmade() -> None:
    found = findings(seed_scenario(), [call("search_contacts", name="Fredrik Thordendal"), say(CONFIRMATION)])
    assert set(found) == {"IAC", "PREMATURE_END", "CLAIMED_UNMADE"}
    assert found["CLAIMED_UNMADE"].indices == [5]
    assert found["IAC"].count == 2  # cellular_on and message_sent


def test_the_reference_dialogue_of_the_suite_is_clean() -> None:
    from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
    from pytest_toolsandbox.running.episode import run_episode

    s = seed_scenario()
    evaluation = evaluate(s, run_episode(s, ReferenceAgent(s), ScriptedUser(s)))
    assert evaluation.diagnosis == []


@pytest.mark.parametrize("text", [
    "Your message has been sent.", "I've added Ann to your contacts.", "Wifi is now off.",
    "I have successfully turned on cellular service.", "The reminder was set for 5 PM.",
    "Message has been successfully sent to Fredrik", "Done! I just deleted the contact.",
])
def test_claims_of_change(text: str) -> None:
    assert claims_change(text)


@pytest.mark.parametrize("text", [
    "Should I send it?", "I could not send the message.", "The message has not been sent.",
    "Your wifi is on.", "I found Fredrik's number.", "Would you like me to turn on cellular?",
    # states, not changes
    "Cellular service is disabled. Shall I turn it on?", "Your reminder is set for 5 PM tomorrow.",
    "Location services are disabled, so I can't tell where you are.", "Should I set a reminder?",
])
def test_not_claims_of_change(text: str) -> None:
    assert not claims_change(text)


def test_describing_a_state_before_acting_is_not_a_false_claim() -> None:
    s = scenario(SEED_SCENARIO.read_text().replace(
        "reference:\n", "reference:\n  - agent: Cellular service is disabled. Shall I turn it on?\n  - user: Yes.\n"))
    turns = seed_turns(CONFIRMATION)
    turns[2:2] = [say("Cellular service is disabled. Shall I turn it on?")]
    assert findings(s, turns) == {}


def test_no_false_claim_where_nothing_is_to_be_changed() -> None:
    # an insufficient-information refusal that describes a disabled service
    assert findings(scenario(MINEFIELD), [say("Location service is disabled, so I can't tell where you are.")]) == {}
    # a read-only scenario whose answer describes history in the past tense
    read = scenario("""
categories: [single_tool_call, single_user_turn]
user: {goal: Know the last message., first_message: "Who did I text last?"}
tools: [search_messages]
milestones:
  searched: {tool_call: {search_messages: {}}}
""")
    turns = [call("search_messages", sender_phone_number="+11233344455"), say("Your last message was sent to Homer S.")]
    assert findings(read, turns) == {}


def test_claim_without_acting_when_only_an_action_call_is_expected() -> None:
    s = scenario("""
categories: [single_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status]
milestones:
  switched: {tool_call: {set_wifi_status: {on: false}}}
""")
    found = findings(s, [say("Wifi has been turned off.")])
    assert found["CLAIMED_UNMADE"].indices == [3] and found["CLAIMED_UNMADE"].detail == "no change at all"


def test_a_call_repeated_in_a_parallel_batch_after_a_change_is_not_a_repeat() -> None:
    s = scenario("""
categories: [multiple_tool_call, single_user_turn]
user: {goal: Add Ann., first_message: Add Ann Lee +14155550100 unless she exists.}
tools: [add_contact, search_contacts]
milestones:
  added: {added: {contacts: [{name: Ann Lee}]}}
""")
    search = call("search_contacts", name="Ann Lee")
    batch = calls(call("add_contact", name="Ann Lee", phone_number="+14155550100"),
                  call("search_contacts", name="Ann Lee"))  # runs after the add: a new result
    assert findings(s, [search, batch, say("Done.")]) == {}
    reads = calls(call("search_contacts", name="Ann Lee"), call("search_contacts", name="Ann Lee"))
    found = findings(s, [reads, call("add_contact", name="Ann Lee", phone_number="+14155550100"), say("Done.")])
    assert set(found) == {"RAC"} and found["RAC"].indices == [4]


def test_time_expressions_in_the_reference_are_resolved_before_comparing() -> None:
    from pytest_toolsandbox.scenario.world_builder import scenario_clock

    s = scenario("""
categories: [single_tool_call, single_user_turn, canonicalization]
user: {goal: Reminder., first_message: Remind me to call Lena tomorrow at 5 PM.}
tools: [add_reminder]
milestones:
  added: {added: {reminders: [{content: Call Lena, reminder_timestamp: "@tomorrow 17:00"}]}}
reference:
  - add_reminder(content="Call Lena", reminder_timestamp="@tomorrow 17:00")
""")
    clock = scenario_clock(s)
    five = clock.to_timestamp(clock.local(clock.shifted(days=1)).replace(hour=17, minute=0, second=0, tzinfo=None))
    assert findings(s, [call("add_reminder", content="Call Lena", reminder_timestamp=five), say("Sure.")]) == {}
    wrong = findings(s, [call("add_reminder", content="Call Lena", reminder_timestamp=five + 3600), say("Sure.")])
    assert set(wrong) == {"IAV", "IAC", "PREMATURE_END"}


REMOVE_BY_PHONE = SEED_SCENARIO.parents[1] / "contacts" / "remove_contact_by_phone.yaml"


def test_an_event_out_of_dag_order_is_diagnosed_as_order_not_unreached() -> None:
    from pytest_toolsandbox.report.text.failure import failure_message
    from pytest_toolsandbox.scenario.loader import load_scenario
    from pytest_toolsandbox.world.default_world import contact_id

    s = load_scenario(REMOVE_BY_PHONE)
    turns = [call("remove_contact", person_id=contact_id("Sam Whitaker")),
             call("search_contacts", phone_number="+13105550143"),
             say("I deleted Sam Whitaker from your contacts.")]
    trajectory = play(s, turns)
    evaluation = evaluate(s, trajectory)
    found = {finding.code: finding for finding in evaluation.diagnosis}
    looked_up = next(o for o in evaluation.milestones if o.name == "looked_up")
    assert looked_up.similarity == 0.0
    assert looked_up.order is not None
    assert (looked_up.order.found_at, looked_up.order.other, looked_up.order.other_at) == (6, "removed", 4)
    assert "ORDER" in found and found["ORDER"].indices == [4, 6]
    assert "IAC" not in found  # the search happened: it is not "never reached"
    assert "PREMATURE_END" not in found
    message = failure_message(trajectory, evaluation, 1.0)
    assert ("missed milestone looked_up (0.000): out of order: found at message 6, after removed (message 4), "
            "which must come after it") in message
    assert "ORDER" in message


def test_an_event_before_its_prerequisite_names_the_prerequisite() -> None:
    s = scenario("""
categories: [multiple_tool_call, single_user_turn]
user: {goal: A reminder., first_message: "Check the time, then remind me to buy milk."}
tools: [get_current_timestamp, add_reminder]
milestones:
  checked: {tool_call: {get_current_timestamp: {}}}
  reminded: {after: [checked], added: {reminders: [{content: Buy milk}]}}
""")
    now = scenario_clock(s).timestamp()
    # the reminder (a partial match: other words) comes first, the full-scoring prerequisite later
    evaluation = evaluate(s, play(s, [call("add_reminder", content="Buy some milk", reminder_timestamp=now),
                                      call("get_current_timestamp"), say("Done.")]))
    checked, reminded = evaluation.milestones
    assert (checked.similarity, reminded.similarity) == (1.0, 0.0)
    assert reminded.order is not None
    assert reminded.order.describe() == "found at message 4, before its prerequisite checked (message 6)"
    assert {f.code for f in evaluation.diagnosis} & {"IAC", "ORDER"} == {"ORDER"}


def test_a_milestone_that_never_happened_stays_unreached() -> None:
    s = load_remove_by_phone()
    evaluation = evaluate(s, play(s, [call("search_contacts", phone_number="+13105550143"),
                                      say("I deleted Sam Whitaker from your contacts.")]))
    assert all(o.order is None for o in evaluation.milestones)
    assert "IAC" in {f.code for f in evaluation.diagnosis}
    assert "ORDER" not in {f.code for f in evaluation.diagnosis}


def load_remove_by_phone():
    from pytest_toolsandbox.scenario.loader import load_scenario

    return load_scenario(REMOVE_BY_PHONE)
