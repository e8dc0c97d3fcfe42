"""The noise-aware baseline gate in real runs: per task (with trials, a one-sided Fisher exact test: one flipped
trial is noise) and across the tasks of each group, so that many small drops add up to a regression, while
noise in both directions passes."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.report.ci.gate import forgiven, judge, one_sided_fisher
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
    # FAILING_EVEN / FAILING_ODD: the trials (comma-separated) that fail on even / odd numbered scenarios
    plan = os.environ.get("FAILING_EVEN" if name.endswith(tuple("02468")) else "FAILING_ODD", "")
    if str(toolsandbox_case.trial) in plan.split(","):
        return UnhelpfulAgent()
    return ReferenceAgent(toolsandbox_scenario)
"""


def suite(pytester: pytest.Pytester, tasks: int) -> pytest.Pytester:
    write_suite(pytester, {f"scenarios/wifi_{k:02}.yaml": WIFI_OFF for k in range(tasks)})
    pytester.makeconftest(FLIPPING_AGENT)
    return pytester


@pytest.fixture
def thirty(pytester: pytest.Pytester) -> pytest.Pytester:
    suite(pytester, TASKS)
    run(pytester, "--trials", "4", "--report-dir", "base").assert_outcomes(passed=4 * TASKS)
    return pytester


def test_one_flipped_trial_on_every_task_is_a_drop_across_tasks(thirty: pytest.Pytester,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Each task alone lost one pass of four (noise, p = 0.5), but all thirty did: the pass rate fell from
    100 % to 75 % across tasks, which chance does not explain."""
    monkeypatch.setenv("FLIP", "1")
    result = run(thirty, "--trials", "4", "--baseline", "base/summary.json")
    result.assert_outcomes(passed=3 * TASKS, failed=TASKS)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    # the thirty failed trials are noise task by task, so they are no pass flips; the drop across tasks is
    assert "REGRESSED against baseline base/summary.json: 3 groups dropped\n" in out
    assert "pass flip" not in out
    assert "  all tasks: similarity" in out and "pass rate 100.0% → 75.0% (-25.0 pts, p = 9.3e-10 over 30 paired " \
        "tasks)" in out
    assert "noisy (fewer passes within chance, not failing the run): 30 task(s)" in out
    gate = summary(thirty)["baseline"]["gate"]
    assert gate["regressed_tasks"] == [] and len(gate["noisy_tasks"]) == TASKS
    assert gate["regressed_groups"] == ["reference all", "reference single_tool_call", "reference single_user_turn"]


def test_a_drop_from_four_of_four_to_none_fails_the_gate(thirty: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROKEN", "wifi_07")
    result = run(thirty, "--trials", "4", "--baseline", "base/summary.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "REGRESSED against baseline base/summary.json: 4 pass flips, 1 task regressed on its trials" in out
    assert "    scenarios/wifi_07.yaml [base-t1], similarity now 0.000  (toolsandbox-report/trajectories/" in out
    assert "  scenarios/wifi_07.yaml::base: 4/4 → 0/4 passed (p = 0.014)" in out
    assert summary(thirty)["baseline"]["gate"]["regressed_groups"] == []  # one task of thirty: not a group drop


@pytest.mark.parametrize(("baseline_trials", "run_trials", "failing", "after"), [
    ("1", "4", "1,2,3,4", "0.0%"),  # 1/1 → 0/4: per task p = 0.2, nothing alone can be flagged
    ("4", "2", "1,2", "0.0%"),  # 4/4 → 0/2: per task p = 1/15
    ("4", "4", "1,2", "50.0%"),  # 4/4 → 2/4: per task p = 0.24
])
def test_a_collapse_on_every_task_fails_the_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                baseline_trials: str, run_trials: str, failing: str,
                                                after: str) -> None:
    suite(pytester, 25)
    run(pytester, "--trials", baseline_trials, "--report-dir", "base").assert_outcomes(passed=25 * int(baseline_trials))
    monkeypatch.setenv("FAILING_EVEN", failing)
    monkeypatch.setenv("FAILING_ODD", failing)
    result = run(pytester, "--trials", run_trials, "--baseline", "base/summary.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert f"pass rate 100.0% → {after}" in out and "over 25 paired tasks" in out
    assert summary(pytester)["baseline"]["gate"]["regressed_tasks"] == []  # each task alone: noise
    if baseline_trials == "1":
        assert ("cannot detect: per task: 1 baseline trial(s) against 4 run trial(s) cannot flag a single task "
                "(smallest p 0.200 ≥ alpha 0.05)") in out


def test_noise_in_both_directions_passes(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """30 tasks at 3/4 in the baseline; in the run, half of them at 2/4 and half at 4/4."""
    suite(pytester, TASKS)
    monkeypatch.setenv("FAILING_EVEN", "4")
    monkeypatch.setenv("FAILING_ODD", "4")
    run(pytester, "--trials", "4", "--report-dir", "base").assert_outcomes(passed=3 * TASKS, failed=TASKS)
    monkeypatch.setenv("FAILING_EVEN", "3,4")
    monkeypatch.setenv("FAILING_ODD", "")
    result = run(pytester, "--trials", "4", "--baseline", "base/summary.json")
    result.assert_outcomes(xfailed=TASKS, xpassed=3 * TASKS)  # every task failed a baseline trial: known failures
    assert result.ret == pytest.ExitCode.OK
    out = result.stdout.str()
    assert "no regression against baseline base/summary.json" in out
    groups = summary(pytester)["baseline"]["gate"]["groups"]
    assert groups[0]["pass_rate"]["delta"] == 0 and groups[0]["pass_rate"]["p_drop"] > 0.5


@pytest.mark.parametrize("alpha", ["0", "1", "-0.1"])
def test_an_alpha_outside_zero_to_one_is_refused(pytester: pytest.Pytester, alpha: str) -> None:
    write_suite(pytester)
    result = run(pytester, "--baseline-alpha", alpha)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.str().splitlines() if line.strip()]
    assert len(errors) == 1 and "--baseline-alpha / toolsandbox_baseline_alpha" in errors[0]


def test_without_trials_one_failure_is_a_regression_as_before(pytester: pytest.Pytester,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester, {"scenarios/wifi_off.yaml": WIFI_OFF})
    pytester.makeconftest(FLIPPING_AGENT)
    run(pytester, "--report-dir", "base").assert_outcomes(passed=1)
    monkeypatch.setenv("BROKEN", "wifi_off")
    result = run(pytester, "--baseline", "base/summary.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "noisy" not in out
    assert "cannot detect: all tasks: 1 paired task(s), too few to detect a drop at alpha 0.05 (needs 5)" in out
    assert "cannot detect: per task: 1 baseline trial(s) against 1 run trial(s) cannot tell a drop from noise" in out
    assert summary(pytester)["baseline"]["regression"] == ["scenarios/wifi_off.yaml::test_scenario[base]"]
