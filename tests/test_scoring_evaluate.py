"""End-to-end scoring semantics on crafted episodes (reference behaviours and deliberate deviations)."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.score import UNKNOWN_TOOL_MINEFIELD
from pytest_toolsandbox.scenario.loader import ScenarioError
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from tests.test_scoring_support import ALBUM, FREDRIK, call, play, say, scenario, seed_scenario

CONFIRMATION = "Your message to Fredrik Thordendal has been sent saying: How's the new album coming along"

WIFI = """
categories: [single_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status, add_contact, search_contacts]
milestones:
  wifi_off: {world: {settings: {wifi: false}}}
  confirmed: {after: [wifi_off], agent_says: Wifi is off now.}
"""


def by_name(evaluation, name: str):
    return next(o for o in [*evaluation.milestones, *evaluation.minefields] if o.name == name)


def test_an_extra_message_after_the_correct_send_is_not_penalised() -> None:
    s = seed_scenario()
    turns = [call("set_cellular_service_status", on=True), call("search_contacts", name="Fredrik Thordendal"),
             call("send_message_with_phone_number", phone_number=FREDRIK, content=ALBUM),
             call("send_message_with_phone_number", phone_number="+14085550172", content="See you soon"),
             say(CONFIRMATION)]
    evaluation = evaluate(s, play(s, turns))
    assert evaluation.score == 1.0
    assert by_name(evaluation, "message_sent").index == 8  # the reply of the first send


def test_a_milestone_slides_later_so_an_unrelated_change_does_not_break_its_successor_guardrail() -> None:
    s = scenario(WIFI)
    turns = [call("set_wifi_status", on=False), call("add_contact", name="Ann Lee", phone_number="+14155550100"),
             say("Wifi is off now.")]
    evaluation = evaluate(s, play(s, turns))
    assert evaluation.score == 1.0
    assert [o.index for o in evaluation.milestones] == [6, 7]  # wifi_off after the add_contact reply


def test_a_change_after_a_predecessor_that_cannot_slide_breaks_the_guardrail() -> None:
    s = scenario("""
categories: [multiple_tool_call, single_user_turn]
user: {goal: Know about wifi., first_message: "Is my wifi on?"}
tools: [get_wifi_status, add_contact]
milestones:
  checked: {tool_call: {get_wifi_status: {}}}
  told: {after: [checked], agent_says: Your wifi is on.}
""")
    add = call("add_contact", name="Ann Lee", phone_number="+14155550100")
    broken = evaluate(s, play(s, [call("get_wifi_status"), add, say("Your wifi is on.")]))
    # `checked` is pinned to its reply (4) and contacts changed before the (word-perfect) answer (7)
    assert [o.similarity for o in broken.milestones] == [1.0, 0.0]
    before = evaluate(s, play(s, [add, call("get_wifi_status"), say("Your wifi is on.")]))
    assert before.score == 1.0  # only changes between a predecessor and the milestone count


def test_reference_to_the_initial_state_is_penalised_for_any_earlier_unconstrained_change() -> None:
    s = scenario("""
categories: [single_tool_call, single_user_turn]
user: {goal: Add Ann., first_message: Add Ann Lee +14155550100 to my contacts.}
tools: [add_contact, set_wifi_status]
milestones:
  added: {added: {contacts: [{name: Ann Lee, phone_number: "+14155550100"}]}, since: initial}
""")
    clean = evaluate(s, play(s, [call("add_contact", name="Ann Lee", phone_number="+14155550100"), say("Done.")]))
    assert clean.score == 1.0
    assert clean.milestones[0].constraints == {"added.contacts": 1.0, "guardrails": 1.0}
    meddled = evaluate(s, play(s, [call("set_wifi_status", on=False),
                                   call("add_contact", name="Ann Lee", phone_number="+14155550100"), say("Done.")]))
    assert meddled.score == 0.0
    # after the add_contact reply the addition matches but the settings guardrail fails, so no
    # message scores and the milestone sits at the earliest one
    assert meddled.milestones[0].index == 2


def test_claiming_success_without_acting_still_earns_the_answer_milestone() -> None:
    s = seed_scenario()
    evaluation = evaluate(s, play(s, [call("search_contacts", name="Fredrik Thordendal"), say(CONFIRMATION)]))
    assert [o.similarity for o in evaluation.milestones] == [0.0, 1.0, 0.0, 1.0]
    assert evaluation.score == 0.5
    # zero-score milestones sit at the earliest allowed message and still anchor their successors
    assert [o.index for o in evaluation.milestones] == [2, 4, 4, 5]


def test_an_empty_search_result_still_satisfies_a_tool_call_milestone() -> None:
    s = scenario("""
categories: [single_tool_call, single_user_turn]
user: {goal: Find Nobody., first_message: Find Nobody Atall.}
tools: [search_contacts]
milestones:
  searched: {tool_call: {search_contacts: {name: Nobody Atall}}}
""")
    trajectory = play(s, [call("search_contacts", name="Nobody Atall"), say("No such contact.")])
    assert trajectory.messages[4].tool_trace is not None and trajectory.messages[4].tool_trace.result == []
    assert evaluate(s, trajectory).score == 1.0


def test_of_two_identical_calls_the_first_is_matched() -> None:
    s = seed_scenario()
    search = call("search_contacts", name="Fredrik Thordendal")
    again = call("search_contacts", name="Fredrik Thordendal")
    evaluation = evaluate(s, play(s, [search, again]))
    assert by_name(evaluation, "found_contact").index == 4


def test_one_zero_constraint_zeroes_the_milestone() -> None:
    s = scenario("""
categories: [single_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status]
milestones:
  done:
    world: {settings: {wifi: false}}
    agent_says: {text: switched off, match: contains}
""")
    good = play(s, [call("set_wifi_status", on=False), say("Wifi is switched off.")])
    assert evaluate(s, good).score == 1.0
    bad = play(s, [call("set_wifi_status", on=False), say("Wifi is off.")])
    evaluation = evaluate(s, bad)
    assert evaluation.score == 0.0
    assert evaluation.milestones[0].constraints["agent_says"] == 0.0


MINEFIELD = """
categories: [insufficient_information]
user: {goal: Know where you are., first_message: "Where am I right now?"}
tools: [search_lat_lon]
minefields:
  guessed_location: {tool_call: {search_lat_lon: {}}}
"""


def test_no_milestones_scores_one_unless_a_minefield_fires() -> None:
    s = scenario(MINEFIELD)
    polite = evaluate(s, play(s, [say("I can't access your location, sorry.")]))
    assert (polite.score, polite.milestone_similarity, polite.minefield_similarity) == (1.0, 1.0, 0.0)
    guessed = evaluate(s, play(s, [call("search_lat_lon", latitude=37.33, longitude=-122.0), say("Cupertino.")]))
    assert guessed.score == 0.0
    assert by_name(guessed, "guessed_location").similarity == 1.0
    assert by_name(guessed, "guessed_location").index == 4


def test_unknown_tool_is_a_minefield_hit_in_insufficient_information_scenarios() -> None:
    s = scenario(MINEFIELD)
    trajectory = play(s, [call("get_current_location"), say("I can't tell.")])
    assert trajectory.messages[4].error_code == "IFN"
    evaluation = evaluate(s, trajectory)
    assert evaluation.score == 0.0
    hit = by_name(evaluation, UNKNOWN_TOOL_MINEFIELD)
    assert (hit.similarity, hit.index) == (1.0, 3)


def test_the_implicit_minefield_leaves_the_declared_minefields_mean_alone() -> None:
    s = scenario(MINEFIELD)
    guessed = evaluate(s, play(s, [call("search_lat_lon", latitude=37.33, longitude=-122.0), say("Cupertino.")]))
    assert [o.name for o in guessed.minefields] == ["guessed_location"]
    assert guessed.minefield_similarity == 1.0  # as the reference reports it, not diluted to 0.5
    polite = evaluate(s, play(s, [say("I can't access your location, sorry.")]))
    assert [o.name for o in polite.minefields] == ["guessed_location"]


def test_unknown_tool_is_only_an_error_reply_elsewhere() -> None:
    s = scenario(WIFI)
    evaluation = evaluate(s, play(s, [call("get_location"), call("set_wifi_status", on=False),
                                      say("Wifi is off now.")]))
    assert evaluation.score == 1.0
    assert evaluation.minefields == []


def test_null_cell_never_matches_a_required_value() -> None:
    s = scenario("""
categories: [single_tool_call, single_user_turn]
world: {clear: [contacts]}
user: {goal: Add Ann as a friend., first_message: Add my friend Ann Lee +14155550100.}
tools: [add_contact]
milestones:
  added:
    world: {contacts: [{name: Ann Lee, relationship: friend}]}
    match: {relationship: exact}
""")
    with_relationship = play(s, [call("add_contact", name="Ann Lee", phone_number="+14155550100",
                                      relationship="friend")])
    assert evaluate(s, with_relationship).score == 1.0
    without = play(s, [call("add_contact", name="Ann Lee", phone_number="+14155550100")])
    assert evaluate(s, without).score == 0.0  # the reference would count the null relationship as a match


def test_values_from_an_earlier_tool_trace_fill_the_target() -> None:
    s = scenario("""
categories: [multiple_tool_call, single_user_turn]
user: {goal: Know the time., first_message: "What is the timestamp now?"}
tools: [get_current_timestamp, add_reminder]
milestones:
  asked: {tool_call: {get_current_timestamp: {}}}
  reminded:
    after: [asked]
    tool_call: {add_reminder: {content: Stand up}}
    fill_from: {milestone: asked, values: {reminder_timestamp: result}}
    no_guardrails: [reminders]     # the call itself adds a reminder
  told:
    after: [reminded]
    agent_says: "The current timestamp is {ts}."
    fill_from: {milestone: asked, values: {ts: result}, formats: ["{:.0f}", "{:.1f}"]}
    no_guardrails: [reminders]     # guarded against `asked` too, which precedes the reminder
""")
    now = scenario_clock(s).timestamp()
    good = play(s, [call("get_current_timestamp"), call("add_reminder", content="Stand up", reminder_timestamp=now),
                    say(f"The current timestamp is {now:.0f}.")])
    evaluation = evaluate(s, good)
    assert evaluation.score == 1.0
    assert by_name(evaluation, "told").index == 7
    wrong = play(s, [call("get_current_timestamp"),
                     call("add_reminder", content="Stand up", reminder_timestamp=now + 60),
                     say("The current timestamp is 12.")])
    evaluation = evaluate(s, wrong)
    assert by_name(evaluation, "reminded").similarity == 0.0
    assert 0.0 < by_name(evaluation, "told").similarity < 1.0


def test_removed_and_updated_rows_and_time_expressions() -> None:
    s = scenario("""
categories: [multiple_tool_call, single_user_turn]
user: {goal: Tidy contacts., first_message: Tidy up my contacts.}
tools: [search_contacts, remove_contact, modify_contact, add_reminder]
milestones:
  renamed: {updated: {contacts: [{name: Sam W., phone_number: "+13105550143"}]}}
  removed: {after: [renamed], removed: {contacts: [{name: Olivia Chen}]}}
  reminder: {after: [removed], added: {reminders: [{content: Call Sam, reminder_timestamp: "@tomorrow 17:00"}]}}
""")
    from pytest_toolsandbox.world.default_world import contact_id

    tomorrow = scenario_clock(s).shifted(days=1)
    tomorrow_five = scenario_clock(s).to_timestamp(
        scenario_clock(s).local(tomorrow).replace(hour=17, minute=0, second=0, tzinfo=None))
    turns = [call("modify_contact", person_id=contact_id("Sam Whitaker"), name="Sam W."),
             call("remove_contact", person_id=contact_id("Olivia Chen")),
             call("add_reminder", content="Call Sam", reminder_timestamp=tomorrow_five), say("Done.")]
    evaluation = evaluate(s, play(s, turns))
    assert [o.similarity for o in evaluation.milestones] == [1.0, 1.0, 1.0]
    late = [*turns[:2], call("add_reminder", content="Call Sam", reminder_timestamp=tomorrow_five + 3600)]
    assert evaluate(s, play(s, late)).milestones[2].similarity == 0.0


@pytest.mark.parametrize(("milestones", "cycle"), [
    ("  a: {after: [b], added: {contacts: [{name: A}]}}\n  b: {added: {contacts: [{name: B}]}, since: a}\n",
     "(a → b → a|b → a → b)"),
    ("  a: {after: [a], added: {contacts: [{name: A}]}}\n", "a → a"),
])
def test_dependency_cycles_are_reported_when_the_scenario_loads(milestones: str, cycle: str) -> None:
    # before any episode runs (and spends model calls), not when its trajectory is scored
    with pytest.raises(ScenarioError, match=f"field milestones: .*cycle: {cycle}"):
        scenario("""
categories: [single_tool_call, single_user_turn]
user: {goal: x, first_message: x}
tools: [add_contact]
milestones:
""" + milestones)


def test_additions_are_compared_only_for_version_pairs_with_the_right_row_count(monkeypatch) -> None:
    # Scoring compares every pair of table versions; with one contact added per call, only
    # consecutive versions can differ by exactly one row, so the multiset difference (the costly
    # part) must be taken about once per version, not once per pair.
    from pytest_toolsandbox.evaluation import snapshots

    s = scenario("""
categories: [multiple_tool_call, single_user_turn]
user: {goal: x, first_message: Add my friends.}
tools: [add_contact]
milestones:
  first: {added: {contacts: [{name: P0}]}}
  second: {after: [first], added: {contacts: [{name: P1}]}}
""")
    trajectory = play(s, [call("add_contact", name=f"P{i}", phone_number=f"+1415555{i:04d}") for i in range(24)],
                      max_messages=60)
    differences = []
    original = snapshots.rows_not_in
    monkeypatch.setattr(snapshots, "rows_not_in", lambda *a: differences.append(1) or original(*a))
    assert evaluate(s, trajectory).score == 1.0
    assert len(differences) <= 4 * 25  # was about 25 * 25 (every ordered pair of versions)


def test_a_trajectory_cut_short_by_an_error_still_scores() -> None:
    s = seed_scenario()
    full = play(s, [call("search_contacts", name="Fredrik Thordendal")])
    for length in (2, 3, 4, 5):
        cut = full.model_copy(update={"messages": full.messages[:length], "ended_by": "error", "error": "boom"})
        evaluation = evaluate(s, cut)
        assert evaluation.score == (0.25 if length == 5 else 0.0)
