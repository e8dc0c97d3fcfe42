"""CI decisions through the command line (issue 33): mutations the rest of the suite missed in the
noise-aware gate, the baseline's choice of which agent gates which, and the merge of shards. Only
pytest's and `python -m pytest_toolsandbox`'s documented options are used, so the tests outlive any
reorganisation of the modules behind them."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.cli import main
from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite

DROPPING_AGENT = """
import os

import pytest

from pytest_toolsandbox import ReferenceAgent
from pytest_toolsandbox.roles.scripted import UnhelpfulAgent


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario, toolsandbox_case):
    if os.environ.get("DROP") and toolsandbox_case.trial <= 3:  # passes one trial of four
        return UnhelpfulAgent()
    return ReferenceAgent(toolsandbox_scenario)
"""


@pytest.fixture
def dropped(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A baseline of 4/4 passes, then an agent that passes 1/4: one-sided Fisher p = 5/70 ≈ 0.071."""
    write_suite(pytester, {"scenarios/wifi_off.yaml": WIFI_OFF})
    pytester.makeconftest(DROPPING_AGENT)
    run(pytester, "--trials", "4", "--report-dir", "base").assert_outcomes(passed=4)
    monkeypatch.setenv("DROP", "1")
    return pytester


def test_at_the_default_alpha_a_drop_to_one_of_four_is_noise(dropped: pytest.Pytester) -> None:
    result = run(dropped, "--trials", "4", "--baseline", "base/summary.json")
    assert result.ret == pytest.ExitCode.OK
    gate = summary(dropped)["baseline"]["gate"]
    assert gate["regressed_tasks"] == [] and [task["now"] for task in gate["noisy_tasks"]] == [[1, 4]]
    assert gate["noisy_tasks"][0]["p"] == pytest.approx(5 / 70, abs=1e-3)


def test_baseline_alpha_is_the_gates_significance_level(dropped: pytest.Pytester) -> None:
    result = run(dropped, "--trials", "4", "--baseline", "base/summary.json", "--baseline-alpha", "0.1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    gate = summary(dropped)["baseline"]["gate"]
    assert gate["alpha"] == 0.1 and gate["noisy_tasks"] == []
    assert [(task["baseline"], task["now"]) for task in gate["regressed_tasks"]] == [([4, 4], [1, 4])]


def test_a_baseline_of_several_agents_does_not_gate_a_one_agent_run_of_another(pytester: pytest.Pytester) -> None:
    """Only a one-agent baseline stands in for another spec; of several, none is the obvious one."""
    write_suite(pytester, {"scenarios/wifi_off.yaml": WIFI_OFF})
    pytester.makepyfile(decliner="""
        class Decliner:
            name = "decliner"

            def respond(self, messages, tools):
                from pytest_toolsandbox import Turn
                return Turn(text="No.")
    """)
    run(pytester, "--agent", "unhelpful", "--agent", "reference", "--report-dir", "base").assert_outcomes(
        passed=1, failed=1)
    result = run(pytester, "--agent", "decliner:Decliner", "--baseline", "base/summary.json")
    result.assert_outcomes(failed=1)  # neither a known failure (xfail) nor judged as a regression
    gate = summary(pytester)["baseline"]
    assert gate["gates"] == {} and gate["ungated"] == ["decliner:Decliner"]
    assert sorted(gate["recorded_for"]) == ["reference", "unhelpful"]


def test_items_one_shard_left_unfinished_and_another_finished_make_a_complete_merge(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "stopped", "-x").assert_outcomes(passed=1, failed=1)
    assert len(summary(pytester, "stopped")["unfinished"]) == 2
    run(pytester, "--report-dir", "complete").assert_outcomes(passed=2, failed=2)
    capsys.readouterr()  # the runs' own output
    assert main(["merge", "stopped", "complete", "--out", "merged"]) == 0
    out = capsys.readouterr().out
    assert "merged 2 report(s)" in out and "PARTIAL" not in out
    merged = summary(pytester, "merged")
    assert merged["partial"] is False and not merged["unfinished"]
    assert merged["counts"]["expected"] == merged["counts"]["finished"] == 4
