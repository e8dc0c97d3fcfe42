"""No degenerate agent passes an item of the shipped suite (issue 29).

Every agent of tests/degenerate_agents.py plays every shipped base against the scripted user, and
every insufficient-information base in all 8 variants (`--augment all`), judged by the real verdict.
An agent that declines and names what is missing passes exactly the insufficient-information items.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.roles.scripted import ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.tools.augment import VARIANTS
from pytest_toolsandbox.tools.registry import all_tools
from tests.degenerate_agents import DEGENERATE, build

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
INSUFFICIENT = "insufficient_information"

KNOWN_HOLES = {
    # Listing every value its look-ups returned still passes these bases: a fact holds when *some* value of
    # the answer matches (issue 29, "exclusive values"). Delete a line when its scenario's facts reject it.
    ("shotgun", "contacts/whose_number.yaml"),
    ("shotgun", "messaging/boss_messages_today.yaml"),
    ("shotgun", "messaging/messages_last_hour.yaml"),
    ("shotgun", "messaging/messages_last_hour_ask_window.yaml"),
    ("shotgun", "messaging/priya_messages_since_yesterday.yaml"),
    ("shotgun", "reminders/search_reminder_report.yaml"),
    ("shotgun", "reminders/search_reminders_this_afternoon.yaml"),
    ("shotgun", "search/convert_currency.yaml"),
    ("shotgun", "search/currency_ask_which_dollars.yaml"),
    ("shotgun", "search/currency_pound_symbol.yaml"),
    ("shotgun", "search/currency_quid_reworded.yaml"),
    ("shotgun", "search/place_address_of_landmark.yaml"),
    ("shotgun", "search/place_distance_cities_then_miles.yaml"),
    ("shotgun", "search/place_distance_paris_follow_up.yaml"),
    ("shotgun", "search/place_reverse_geocode_pin.yaml"),
    ("shotgun", "search/stock_price_by_company.yaml"),
    ("shotgun", "search/stock_share_in_euros.yaml"),
    ("shotgun", "search/stock_share_in_euros_reworded.yaml"),
    ("shotgun", "search/stock_shares_in_pounds_ask_company.yaml"),
    ("shotgun", "search/weather_city_now.yaml"),
    ("shotgun", "search/weather_city_now_reworded.yaml"),
    ("shotgun", "search/weather_here.yaml"),
    ("shotgun", "search/weather_sunrise_traveling_tokyo.yaml"),
    ("shotgun", "search/weather_tomorrow_high_fahrenheit.yaml"),
    ("shotgun", "time/birthday_countdown.yaml"),
    ("shotgun", "utilities/units_recipe_ask_amounts.yaml"),
    ("shotgun", "utilities/units_run_miles_to_km.yaml"),
    ("shotgun", "utilities/units_run_miles_to_km_reworded.yaml"),
}
"""(agent, scenario) pairs a degenerate agent is known to pass today, as the lead can shrink them."""


@cache
def passes(agent: str) -> dict[tuple[str, str], bool]:
    """(scenario relative to scenarios/, variant) → whether `agent` passes: every base in the base variant,
    the insufficient-information bases in every variant."""
    registry = all_tools()
    outcome = {}
    for path in find_scenarios(SCENARIOS):
        scenario = load_scenario(path, registry)
        start = build_world(scenario)
        variants = VARIANTS if INSUFFICIENT in scenario.categories else ("base",)
        for variant in variants:
            trajectory = run_episode(scenario, build(agent, scenario), ScriptedUser(scenario), variant=variant,
                                     registry=registry, world=start.fork())
            passed = evaluate(scenario, trajectory, registry).passed(scenario.explicit_threshold)
            outcome[(str(path.relative_to(SCENARIOS)), variant)] = passed
    return outcome


@pytest.mark.parametrize("agent", sorted(DEGENERATE))
def test_no_degenerate_agent_passes_an_item(agent: str) -> None:
    passed = {scenario for (scenario, _), ok in passes(agent).items() if ok}
    known = {scenario for name, scenario in KNOWN_HOLES if name == agent}
    assert passed - known == set(), f"{agent} passes items it must fail"
    assert known - passed == set(), f"{agent} now fails these known holes: delete them from KNOWN_HOLES"
    assert {scenario for scenario, _ in passes(agent)} == {
        str(path.relative_to(SCENARIOS)) for path in find_scenarios(SCENARIOS)}


def test_declining_with_an_explanation_passes_exactly_the_insufficient_information_items() -> None:
    outcome = passes("declines-and-explains")
    assert {key for key, ok in outcome.items() if ok} == {
        key for key in outcome if key[0].startswith(f"{INSUFFICIENT}/")}
