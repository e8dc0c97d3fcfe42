"""The noise-aware baseline gate: with trials, a task regresses only when its pass rate fell beyond
chance (one-sided Fisher exact test); one flipped trial is noise and does not fail the run."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.report.gate import forgiven, judge, one_sided_fisher
from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite

TASKS = 30


def records(passes: dict[str, list[bool]]) -> list[dict[str, object]]:
    """Scored records of agent `reference`, one per trial, for each task."""
    return [{"id": f"scenarios/{name}.yaml::test_scenario[base-t{trial}]", "path": f"scenarios/{name}.yaml",
             "variant": "base", "agent": "reference", "agent_spec": "reference", "trial": trial,
             "outcome": "passed" if passed else "failed", "score": 1.0 if passed else 0.0, "passed": passed}
            for name, trials in passes.items() for trial, passed in enumerate(trials, 1)]


SAME_AGENT = {"reference": "reference"}
"""The baseline's gates of a run of the agent it was recorded for."""


def test_fisher_p_values_of_small_counts() -> None:
    assert one_sided_fisher((4, 4), (0, 4)) == pytest.approx(1 / 70)
    assert one_sided_fisher((4, 4), (3, 4)) == pytest.approx(0.5)
    assert one_sided_fisher((4, 4), (1, 4)) == pytest.approx(5 / 70)


def test_one_flipped_trial_on_thirty_tasks_is_noise_and_a_drop_to_zero_regresses() -> None:
    baseline = records({f"s{k}": [True] * 4 for k in range(TASKS + 1)})
    now = records({**{f"s{k}": [k % 4 != t for t in range(4)] for k in range(TASKS)}, f"s{TASKS}": [False] * 4})
    verdicts = judge(baseline, now, SAME_AGENT)
    assert sorted(v.verdict for v in verdicts) == ["noisy"] * TASKS + ["regressed"]
    regressed = [v for v in verdicts if v.verdict == "regressed"]
    assert [(v.task, v.baseline, v.now) for v in regressed] == [(f"scenarios/s{TASKS}.yaml::base", (4, 4), (0, 4))]
    assert len(forgiven(verdicts, now)) == TASKS  # one failed trial of each noisy task


def test_known_failures_and_new_tasks_are_not_judged() -> None:
    baseline = records({"flaky": [True, False, True, True]})
    now = records({"flaky": [False] * 4, "new": [False] * 4})
    assert judge(baseline, now, SAME_AGENT) == []


def test_only_the_agents_the_baseline_gates_are_judged() -> None:
    """An agent the baseline does not gate (an ini baseline of another agent) gets no verdict, so none of
    its failures can be forgiven as noise; a gated agent is judged against the baseline agent it maps to."""
    baseline = records({"drop": [True] * 4})
    now = [{**record, "agent": "other", "agent_spec": "other"} for record in records({"drop": [False] * 4})]
    assert judge(baseline, now, {}) == []
    assert [v.verdict for v in judge(baseline, now, {"other": "reference"})] == ["regressed"]


FLIPPING_AGENT = """
import os
import zlib

import pytest

from pytest_toolsandbox.roles.scripted import ReferenceAgent, UnhelpfulAgent


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario, toolsandbox_case):
    name = toolsandbox_scenario.name
    if name == os.environ.get("BROKEN", ""):
        return UnhelpfulAgent()
    if os.environ.get("FLIP") and toolsandbox_case.trial == zlib.crc32(name.encode()) % 4 + 1:
        return UnhelpfulAgent()
    return ReferenceAgent(toolsandbox_scenario)
"""


@pytest.fixture
def thirty(pytester: pytest.Pytester) -> pytest.Pytester:
    write_suite(pytester, {f"scenarios/wifi_{k:02}.yaml": WIFI_OFF for k in range(TASKS)})
    pytester.makeconftest(FLIPPING_AGENT)
    run(pytester, "--trials", "4", "--report-dir", "base").assert_outcomes(passed=4 * TASKS)
    return pytester


def test_a_run_where_one_trial_flips_on_thirty_items_passes_the_gate(thirty: pytest.Pytester,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLIP", "1")
    result = run(thirty, "--trials", "4", "--baseline", "base/summary.json")
    result.assert_outcomes(passed=3 * TASKS, failed=TASKS)
    assert result.ret == pytest.ExitCode.OK
    out = result.stdout.str()
    assert "0 regressed task(s), 30 noisy task(s)" in out
    assert "  noisy: scenarios/wifi_00.yaml::base: 4/4 → 3/4 passed (p = 0.500)" in out
    gate = summary(thirty)["baseline"]["gate"]
    assert gate["regressed_tasks"] == [] and len(gate["noisy_tasks"]) == TASKS


def test_a_drop_from_four_of_four_to_none_fails_the_gate(thirty: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLIP", "1")
    monkeypatch.setenv("BROKEN", "wifi_07")
    result = run(thirty, "--trials", "4", "--baseline", "base/summary.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "1 regressed task(s), 29 noisy task(s)" in out
    assert "  regressed: scenarios/wifi_07.yaml::base: 4/4 → 0/4 passed (p = 0.014)" in out


def test_without_trials_one_failure_is_a_regression_as_before(pytester: pytest.Pytester,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester, {"scenarios/wifi_off.yaml": WIFI_OFF})
    pytester.makeconftest(FLIPPING_AGENT)
    run(pytester, "--report-dir", "base").assert_outcomes(passed=1)
    monkeypatch.setenv("BROKEN", "wifi_off")
    result = run(pytester, "--baseline", "base/summary.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "noise-aware gate" not in result.stdout.str()
    assert summary(pytester)["baseline"]["regression"] == ["scenarios/wifi_off.yaml::test_scenario[base]"]
