"""Several constraints on one message, values filled from several milestones, and attempted calls."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.scenario.loader import ScenarioError
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from tests.test_scoring_support import call, play, say, scenario

MILES = """
categories: [single_tool_call, single_user_turn]
user: {goal: Know how far 5 km is in miles., first_message: "How many miles are 5 kilometers?"}
tools: [unit_conversion]
milestones:
  converted: {tool_call: {unit_conversion: {amount: 5, from_unit: kilometer, to_unit: mile}}}
  answered:
    after: [converted]
    agent_says:
      - 5 kilometers are about 3.11 miles.
      - {text: "3.11", match: contains}
"""

CONVERT = call("unit_conversion", amount=5, from_unit="kilometer", to_unit="mile")


def answered(text: str):
    s = scenario(MILES)
    return evaluate(s, play(s, [CONVERT, say(text)]))


def test_wording_and_number_must_both_hold_on_the_answer() -> None:
    right = answered("5 kilometers are about 3.11 miles.")
    assert right.score == 1.0
    assert right.milestones[1].constraints == {"agent_says[0]": 1.0, "agent_says[1]": 1.0, "guardrails": 1.0}
    wrong_number = answered("5 kilometers are about 3.41 miles.")
    assert wrong_number.milestones[1].similarity == 0.0
    assert wrong_number.score == 0.5
    # ROUGE-L alone would forgive the number (6 of 7 words agree); the `contains` entry does not
    rouge_only = scenario(MILES.replace('      - {text: "3.11", match: contains}\n', ""))
    forgiving = evaluate(rouge_only, play(rouge_only, [CONVERT, say("5 kilometers are about 3.41 miles.")]))
    assert forgiving.score > 0.9


def test_the_constraints_of_a_milestone_must_hold_on_the_same_message() -> None:
    # wording in one message, the number in another: neither message satisfies both
    split = scenario(MILES)
    evaluation = evaluate(split, play(split, [CONVERT, say("5 kilometers are about that many miles."),
                                              say("It is 3.11.")]))
    assert evaluation.milestones[1].similarity == 0.0


def test_constraint_similarities_combine_by_geometric_mean() -> None:
    s = scenario(MILES.replace('{text: "3.11", match: contains}', "{text: 5 kilometers, match: rouge}"))
    evaluation = evaluate(s, play(s, [CONVERT, say("5 kilometers are about 3.11 miles.")]))
    first, second = (evaluation.milestones[1].constraints[f"agent_says[{k}]"] for k in (0, 1))
    assert first == 1.0 and 0.0 < second < 1.0
    assert evaluation.milestones[1].similarity == pytest.approx((first * second) ** 0.5, rel=1e-12)


DAYS_UNTIL = """
categories: [multiple_tool_call, single_user_turn]
user: {goal: Know how long until Christmas 2026., first_message: "How long is it until Christmas?"}
tools: [get_current_timestamp, datetime_info_to_timestamp, timestamp_diff]
milestones:
  now: {tool_call: {get_current_timestamp: {}}}
  christmas: {tool_call: {datetime_info_to_timestamp: {year: 2026, month: 12, day: 25}}}
  diff:
    after: [now, christmas]
    tool_call: {timestamp_diff: {}}
    fill_from:
      - {milestone: now, values: {timestamp_0: result}}
      - {milestone: christmas, values: {timestamp_1: result}}
"""

CHRISTMAS = dict(year=2026, month=12, day=25, hour=0, minute=0, second=0)


def days_until(timestamp_0_shift: float = 0.0, timestamp_1_shift: float = 0.0):
    s = scenario(DAYS_UNTIL)
    clock = scenario_clock(s)
    now = clock.timestamp()
    christmas = clock.to_timestamp(clock.local(now).replace(month=12, day=25, hour=0, minute=0, second=0,
                                                            tzinfo=None))
    turns = [call("get_current_timestamp"), call("datetime_info_to_timestamp", **CHRISTMAS),
             call("timestamp_diff", timestamp_0=now + timestamp_0_shift, timestamp_1=christmas + timestamp_1_shift),
             say("About 288 days.")]
    return evaluate(s, play(s, turns))


def test_a_target_filled_from_two_milestones_needs_both_values() -> None:
    good = days_until()
    assert good.score == 1.0
    assert [o.index for o in good.milestones] == [4, 6, 8]
    assert days_until(timestamp_0_shift=86400).milestones[2].similarity == 0.0
    assert days_until(timestamp_1_shift=86400).milestones[2].similarity == 0.0
    assert days_until(timestamp_1_shift=86400).score == pytest.approx(2 / 3)


def test_text_placeholders_are_filled_from_several_sources_with_their_own_formats() -> None:
    s = scenario("""
categories: [multiple_tool_call, single_user_turn]
user: {goal: Know the time and a conversion., first_message: "Time and 5 km in miles?"}
tools: [get_current_timestamp, unit_conversion]
milestones:
  now: {tool_call: {get_current_timestamp: {}}}
  converted: {tool_call: {unit_conversion: {amount: 5, from_unit: kilometer, to_unit: mile}}}
  told:
    after: [now, converted]
    agent_says: {text: "It is {ts} and 5 km are {miles} miles.", match: exact}
    fill_from:
      - {milestone: now, values: {ts: result}, formats: ["{:.0f}"]}
      - {milestone: converted, values: {miles: result}, formats: ["{:.1f}", "{:.2f}"]}
""")
    now = scenario_clock(s).timestamp()
    turns = [call("get_current_timestamp"), CONVERT]
    assert evaluate(s, play(s, [*turns, say(f"It is {now:.0f} and 5 km are 3.11 miles.")])).score == 1.0
    assert evaluate(s, play(s, [*turns, say(f"It is {now:.0f} and 5 km are 3.1 miles.")])).score == 1.0
    assert evaluate(s, play(s, [*turns, say(f"It is {now + 1:.0f} and 5 km are 3.1 miles.")])).score < 1.0


def test_a_fill_source_no_target_uses_is_an_authoring_error() -> None:
    with pytest.raises(ScenarioError, match=r"field milestones\.told\.fill_from\[1\]: no target uses the "
                                            r"values \['other'\]"):
        scenario("""
categories: [multiple_tool_call, single_user_turn]
user: {goal: Know the time., first_message: "What time is it?"}
tools: [get_current_timestamp]
milestones:
  now: {tool_call: {get_current_timestamp: {}}}
  told:
    after: [now]
    agent_says: "It is {ts}."
    fill_from: [{milestone: now, values: {ts: result}}, {milestone: now, values: {other: result}}]
""")


ADDRESS = """
categories: [insufficient_information]
world: {settings: {wifi: false}}
user:
  goal: Find out the street address where you are right now.
  knowledge: You don't know your coordinates. You have no other information.
  first_message: What's the address of where I am right now?
tools: [search_lat_lon]
deny: [get_current_location]
minefields:
  guessed_coordinates: {attempted_call: {search_lat_lon: {}}}
"""

GUESS = call("search_lat_lon", latitude=37.3, longitude=-122.0)
REFUSAL = say("I can't tell where you are without your coordinates.")


def test_an_attempted_call_fires_a_minefield_even_when_the_call_fails() -> None:
    s = scenario(ADDRESS)
    trajectory = play(s, [GUESS, REFUSAL])
    assert trajectory.messages[4].exception is not None  # wifi is off: the guess failed
    guess = evaluate(s, trajectory)
    assert guess.score == 0.0
    assert guess.minefields[0].index == 3  # the agent's call message, not the error reply
    assert [f.code for f in guess.diagnosis if f.code == "MINEFIELD"] == ["MINEFIELD"]
    assert evaluate(s, play(s, [REFUSAL])).score == 1.0


def test_a_tool_call_minefield_only_sees_calls_that_succeeded() -> None:
    # why attempted_call exists: the same minefield on the reply misses a guess that failed
    s = scenario(ADDRESS.replace("attempted_call", "tool_call"))
    assert evaluate(s, play(s, [GUESS, REFUSAL])).score == 1.0


def test_an_attempted_call_compares_arguments_with_tolerances() -> None:
    s = scenario(ADDRESS.replace("{search_lat_lon: {}}", "{search_lat_lon: {latitude: 37.3}}, "
                                                         "tolerance: {latitude: 0.05}"))
    assert evaluate(s, play(s, [call("search_lat_lon", latitude=37.33, longitude=0.0), REFUSAL])).score == 0.0
    assert evaluate(s, play(s, [call("search_lat_lon", latitude=37.4, longitude=0.0), REFUSAL])).score == 1.0


def test_an_attempt_with_malformed_arguments_still_counts_by_name() -> None:
    s = scenario(ADDRESS)
    trajectory = play(s, [call("search_lat_lon", arguments="{not json"), REFUSAL])
    assert trajectory.messages[4].error_code == "IFE"
    assert evaluate(s, trajectory).score == 0.0


def test_an_attempted_call_is_matched_by_its_registry_name_under_scrambled_names() -> None:
    s = scenario(ADDRESS)
    scrambled = play(s, [REFUSAL], variant="tool_name_scrambled")
    alias = next(entry["name"] for entry in scrambled.tools if entry["tool"] == "search_lat_lon")
    assert alias != "search_lat_lon"
    guessed = play(s, [call(alias, latitude=37.3, longitude=-122.0), REFUSAL], variant="tool_name_scrambled")
    assert evaluate(s, guessed).score == 0.0


def test_an_attempted_call_milestone_counts_as_expected_call() -> None:
    s = scenario("""
categories: [single_tool_call, single_user_turn]
world: {settings: {wifi: false}}
user: {goal: Try to look up 37.3 -122.0., first_message: "What is at 37.3 -122.0?"}
tools: [search_lat_lon]
milestones:
  tried: {attempted_call: {search_lat_lon: {latitude: 37.3, longitude: -122.0}}}
""")
    evaluation = evaluate(s, play(s, [GUESS, say("Wifi is off, so I could not look it up.")]))
    assert evaluation.score == 1.0
    assert evaluation.milestones[0].index == 3
    wrong = evaluate(s, play(s, [call("search_lat_lon", latitude=1.0, longitude=2.0), say("Sorry.")]))
    assert {f.code for f in wrong.diagnosis} >= {"IAV", "IAC"}


def test_the_insufficient_information_scenario_punishes_a_failed_guess() -> None:
    from pytest_toolsandbox.scenario.loader import load_scenario
    from tests.test_scoring_support import ROOT

    s = load_scenario(ROOT / "scenarios" / "insufficient_information" / "address_without_location.yaml")
    trajectory = play(s, [call("search_lat_lon", latitude=137.3, longitude=-122.0), REFUSAL])
    assert trajectory.messages[4].exception is not None  # latitude out of range: the call failed
    assert evaluate(s, trajectory).score == 0.0
    assert evaluate(s, play(s, [REFUSAL])).score == 1.0
