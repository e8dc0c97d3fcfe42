"""No degenerate agent passes an item of the shipped suite (issue 29).

Every agent of tests/degenerate_agents.py plays every shipped base against the scripted user, and
every insufficient-information base in all 8 variants (`--augment all`), judged by the real verdict.
An agent that declines and names what is missing passes exactly the insufficient-information items.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from pytest_toolsandbox.scenario.loader import find_scenarios
from tests.degenerate_agents import DEGENERATE, INSUFFICIENT, outcomes

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


@cache
def passes(agent: str) -> dict[tuple[str, str], bool]:
    return outcomes(agent, SCENARIOS)


@pytest.mark.parametrize("agent", sorted(DEGENERATE))
def test_no_degenerate_agent_passes_an_item(agent: str) -> None:
    assert [key for key, ok in passes(agent).items() if ok] == [], f"{agent} passes items it must fail"
    assert {scenario for scenario, _ in passes(agent)} == {
        path.relative_to(SCENARIOS).as_posix() for path in find_scenarios(SCENARIOS)}


def test_declining_with_an_explanation_passes_exactly_the_insufficient_information_items() -> None:
    outcome = passes("declines-and-explains")
    assert {key for key, ok in outcome.items() if ok} == {
        key for key in outcome if key[0].startswith(f"{INSUFFICIENT}/")}
