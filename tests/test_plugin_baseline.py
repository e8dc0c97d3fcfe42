"""CI gating with --baseline: regressions fail, known failures xfail, improvements are reported."""

from __future__ import annotations

import json

import pytest

from tests.test_plugin_support import records_by_id, run, summary, write_suite

# wifi_off regresses (unhelpful agent), refuse improves (it gets an agent that turns wifi off).
CHANGED_AGENT = """
import pytest
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ReferenceAgent, UnhelpfulAgent
from pytest_toolsandbox.world.messages import ToolCall


class WifiOff:
    name = "reference"

    def __init__(self):
        self.called = False

    def respond(self, messages, tools):
        if not self.called:
            self.called = True
            return Turn(tool_calls=(ToolCall(id="c1", name="set_wifi_status", arguments='{"on": false}'),))
        return Turn(text="Done.")


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    if toolsandbox_scenario.name == "wifi_off" and REGRESS:
        agent = UnhelpfulAgent()
        agent.name = "reference"
        return agent
    if toolsandbox_scenario.name == "refuse":
        return WifiOff()
    return ReferenceAgent(toolsandbox_scenario)
"""


def node(path: str) -> str:
    return f"scenarios/{path}.yaml::test_scenario[base]"


@pytest.fixture
def baseline(pytester: pytest.Pytester) -> str:
    """A baseline run of the suite: wifi_off and wifi_status pass, half and refuse fail."""
    write_suite(pytester)
    run(pytester).assert_outcomes(passed=2, failed=2)
    (pytester.path / "baseline.json").write_text((pytester.path / "toolsandbox-report/summary.json").read_text())
    return "baseline.json"


def test_regression_fails_known_failure_xfails_improvement_is_reported(pytester: pytest.Pytester,
                                                                       baseline: str) -> None:
    pytester.makeconftest("REGRESS = True\n" + CHANGED_AGENT)
    result = run(pytester, "--baseline", baseline, "-rxX")
    result.assert_outcomes(passed=1, failed=1, xfailed=1, xpassed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    output = result.stdout.str()
    assert "REGRESSION (passed in the baseline) — wifi_off [base]" in output
    regressed, improved = output.split("\nregressed:\n")[1].split("\nimproved:\n")
    assert "    scenarios/settings/wifi_off.yaml [base], similarity now 0.000" in regressed
    assert "    scenarios/settings/refuse.yaml [base], similarity now 1.000" in improved
    assert "baseline baseline.json: 1 regression, 1 improvement, 1 known failure" in output
    data = summary(pytester)
    assert data["baseline"]["regression"] == [node("settings/wifi_off")]
    assert data["baseline"]["improvement"] == [node("settings/refuse")]
    assert data["baseline"]["known_failure"] == [node("settings/half")]
    changes = {nodeid: record["change"] for nodeid, record in records_by_id(data).items()}
    assert changes[node("messaging/wifi_status")] == "unchanged"


def test_without_regressions_the_gate_passes(pytester: pytest.Pytester, baseline: str) -> None:
    pytester.makeconftest("REGRESS = False\n" + CHANGED_AGENT)
    result = run(pytester, "--baseline", baseline, "-n", "2")  # workers gate with the controller's baseline
    result.assert_outcomes(passed=2, xfailed=1, xpassed=1)
    assert result.ret == pytest.ExitCode.OK


def test_unreadable_baseline_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    (pytester.path / "bad.json").write_text(json.dumps({"records": "no"}))
    result = run(pytester, "--baseline", "bad.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "bad.json: not a pytest-toolsandbox summary" in result.stderr.str()
