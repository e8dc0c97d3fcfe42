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
    assert [key for key, ok in passes(agent).items() if ok] == [], f"{agent} passes items it must fail"
    assert {scenario for scenario, _ in passes(agent)} == {
        str(path.relative_to(SCENARIOS)) for path in find_scenarios(SCENARIOS)}


def test_declining_with_an_explanation_passes_exactly_the_insufficient_information_items() -> None:
    outcome = passes("declines-and-explains")
    assert {key for key, ok in outcome.items() if ok} == {
        key for key in outcome if key[0].startswith(f"{INSUFFICIENT}/")}
