"""Which agents a baseline gates: the ini's baseline only the agent it was recorded for, a baseline
given on the command line also a single agent of another spec; every other agent runs ungated and the
run says so once (never a silent "0 regressions")."""

from __future__ import annotations

import shutil

import pytest

from tests.test_plugin_support import run, summary, write_suite


@pytest.fixture
def recorded(pytester: pytest.Pytester) -> str:
    """baseline.json: the reference agent's run of the suite (wifi_off, wifi_status pass; half, refuse fail)."""
    write_suite(pytester)
    run(pytester)
    shutil.copy(pytester.path / "toolsandbox-report" / "summary.json", pytester.path / "baseline.json")
    return "baseline.json"


def test_the_ini_baseline_gates_only_its_own_agent(pytester: pytest.Pytester, recorded: str) -> None:
    pytester.makeini(f"[pytest]\ntoolsandbox_baseline = {recorded}\n")
    result = run(pytester, "--agent", "unhelpful")
    result.assert_outcomes(failed=4)  # no xfail: the reference's failures say nothing about this agent
    output = result.stdout.str()
    assert output.count("baseline baseline.json: unhelpful ran ungated (the baseline holds results of reference "
                        "only)") == 1
    assert "regressions" not in output  # nothing was judged: no counts that read as a pass
    gate = summary(pytester)["baseline"]
    assert (gate["recorded_for"], gate["gates"], gate["ungated"]) == (["reference"], {}, ["unhelpful"])
    comparison = (pytester.path / "toolsandbox-report" / "comparison.html").read_text()
    assert "The baseline holds results of reference only: no agent of this run was gated by it." in comparison
    run(pytester).assert_outcomes(passed=2, xfailed=2)  # its own agent is gated


def test_a_baseline_given_on_the_command_line_gates_a_changed_agent(pytester: pytest.Pytester,
                                                                    recorded: str) -> None:
    result = run(pytester, "--agent", "unhelpful", "--baseline", recorded)
    result.assert_outcomes(failed=2, xfailed=2)
    output = result.stdout.str()
    assert "baseline baseline.json: 2 regressions, 0 improvements, 2 known failures" in output
    assert output.count("unhelpful gated by the results of reference") == 1
    assert summary(pytester)["baseline"]["gates"] == {"unhelpful": "reference"}
    comparison = (pytester.path / "toolsandbox-report" / "comparison.html").read_text()
    assert "agent reference" in comparison and "agent unhelpful" in comparison


def test_a_multi_agent_run_names_the_agents_it_did_not_gate(pytester: pytest.Pytester, recorded: str) -> None:
    result = run(pytester, "--agent", "reference", "--agent", "unhelpful", "--baseline", recorded)
    result.assert_outcomes(passed=2, xfailed=2, failed=4)
    output = result.stdout.str()
    assert output.count("unhelpful ran ungated (the baseline holds results of reference only)") == 1
    gate = summary(pytester)["baseline"]
    assert (gate["gates"], gate["ungated"]) == ({"reference": "reference"}, ["unhelpful"])
