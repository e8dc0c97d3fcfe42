"""Repeated trials: one item per trial, and pass^k in summary.json and the terminal table."""

from __future__ import annotations

import pytest

from tests.test_plugin_support import SUITE, run, summary, write_suite

# wifi_off passes its first 3 of 4 trials, wifi_status its first 2 of 4.
FLAKY_AGENT = """
import pytest
from pytest_toolsandbox.roles.scripted import ReferenceAgent, UnhelpfulAgent

PASSES = {"wifi_off": 3, "wifi_status": 2}


class Flaky:
    name = "flaky"

    def __init__(self, scenario, trial):
        good = trial <= PASSES[scenario.name]
        self.inner = ReferenceAgent(scenario) if good else UnhelpfulAgent()

    def respond(self, messages, tools):
        return self.inner.respond(messages, tools)


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario, toolsandbox_case):
    return Flaky(toolsandbox_scenario, toolsandbox_case.trial)
"""


def test_pass_hat_k_matches_a_hand_computation(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {name: text for name, text in SUITE.items() if "wifi_" in name})
    pytester.makeconftest(FLAKY_AGENT)
    result = run(pytester, "--trials", "4")
    result.assert_outcomes(passed=5, failed=3)
    # Hand computation, tasks (n=4, c=3) and (n=4, c=2):
    # k=1: (3/4 + 2/4) / 2;  k=2: (C(3,2)/C(4,2) + C(2,2)/C(4,2)) / 2 = (3/6 + 1/6) / 2;
    # k=3: (C(3,3)/C(4,3) + 0) / 2 = (1/4) / 2;  k=4: 0.
    expected = {"1": 0.625, "2": 1 / 3, "3": 0.125, "4": 0.0}
    stats = summary(pytester)["aggregates"]["reference"]  # the --agent spec; the conftest's agent is "flaky"
    assert stats["all"]["pass_k"] == pytest.approx(expected)
    assert stats["all"]["tasks"] == 2 and stats["all"]["items"] == 8
    assert stats["categories"]["canonicalization"]["pass_k"] == pytest.approx({"1": 0.5, "2": 1 / 6, "3": 0.0,
                                                                                "4": 0.0})
    table = result.stdout.str()
    assert "pass^4" in table
    assert [line.split()[-2] for line in result.outlines if line.startswith("all ")] == ["0.000"]
