"""The baseline gate with repeated trials: a task regresses only when its pass rate fell by more than
chance explains.

With one trial per task, the rule of report/baseline.py stands: passed then, fails now = regression.
With trials, one failing trial of a task that passed every baseline trial is what run-to-run noise of a
sampled model looks like, so each task (scenario × variant, per agent) is judged on its counts: the
baseline's c₀ passes of n₀ scored trials against this run's c₁ of n₁, by a one-sided Fisher exact test
(is the pass rate lower now?). The task has **regressed** when p < alpha; a task that lost passes with
p ≥ alpha is **noisy**: reported, not failing the run.

False alarms. When a task's true pass rate did not change, Fisher's test flags it with probability at
most alpha (the test is exact and conservative), so at most alpha per task; with 4 baseline and 4 run
trials the only counts it flags at alpha = 0.05 are 4/4 → 0/4 (p = 1/70), which a task whose pass rate
did not change produces with probability at most 0.5⁸ ≈ 0.39 % (at a pass rate of one half). A suite
of T tasks with unchanged agents therefore sees at most alpha·T flagged tasks, in practice far fewer
(most tasks pass or fail every trial, and then cannot flip by chance at all).

Tasks that failed a baseline trial stay known failures (their items run as expected failures), and
tasks new to the baseline gate as before; infrastructure errors count on neither side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.report.baseline import pass_counts
from pytest_toolsandbox.report.record import Record, agent_key
from pytest_toolsandbox.report.summary import task_key

DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class TaskVerdict:
    agent: str
    task: str
    baseline: tuple[int, int]
    """(passes, scored trials) in the baseline."""
    now: tuple[int, int]
    p_value: float
    verdict: str
    """"regressed" (p < alpha) or "noisy" (fewer passes, within chance)."""

    def as_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "task": self.task, "baseline": list(self.baseline), "now": list(self.now),
                "p": self.p_value, "verdict": self.verdict}

    def line(self) -> str:
        return (f"{self.task}: {self.baseline[0]}/{self.baseline[1]} → {self.now[0]}/{self.now[1]} passed "
                f"(p = {self.p_value:.3f})")


def one_sided_fisher(baseline: tuple[int, int], now: tuple[int, int]) -> float:
    """p-value of "the pass rate is lower now than in the baseline" (Fisher's exact test)."""
    from scipy.stats import fisher_exact

    (c0, n0), (c1, n1) = baseline, now
    return float(fisher_exact([[c0, n0 - c0], [c1, n1 - c1]], alternative="greater").pvalue)


def judge(baseline_records: Sequence[Record], records: Sequence[Record], gates: Mapping[str, str],
          alpha: float = DEFAULT_ALPHA) -> list[TaskVerdict]:
    """Every task that passed all its baseline trials and passes less often now, with its verdict; sorted
    by agent and task. Only the agents the baseline gates are judged (`gates`: run agent → baseline agent,
    `Baseline.gates`). (A task that failed a baseline trial is a known failure: it cannot regress.)"""
    before, after = pass_counts(baseline_records), pass_counts(records)
    verdicts = []
    for agent, base_agent in sorted(gates.items()):
        if agent not in after or base_agent not in before:
            continue
        for task, now in sorted(after[agent].items()):
            then = before[base_agent].get(task)
            if then is None or then[0] < then[1] or now[0] == now[1]:
                continue
            p = one_sided_fisher(then, now)
            verdicts.append(TaskVerdict(agent, task, then, now, p, "regressed" if p < alpha else "noisy"))
    return verdicts


def forgiven(verdicts: Sequence[TaskVerdict], records: Sequence[Record]) -> set[str]:
    """Ids of the failed items (not expected failures) of noisy tasks: failures the exit status does not
    count."""
    noisy = {(verdict.agent, verdict.task) for verdict in verdicts if verdict.verdict == "noisy"}
    return {record["id"] for record in records
            if record.get("outcome") == "failed" and (agent_key(record), task_key(record)) in noisy}


def gate_summary(verdicts: Sequence[TaskVerdict], alpha: float) -> dict[str, Any]:
    """The gate's part of summary.json's `baseline`."""
    return {"test": "one-sided Fisher exact per task", "alpha": alpha,
            "regressed_tasks": [v.as_json() for v in verdicts if v.verdict == "regressed"],
            "noisy_tasks": [v.as_json() for v in verdicts if v.verdict == "noisy"]}


def gate_lines(verdicts: Sequence[TaskVerdict], alpha: float) -> list[str]:
    """Terminal lines: regressed tasks (they fail the run) apart from noisy ones (they do not)."""
    regressed = [v for v in verdicts if v.verdict == "regressed"]
    noisy = [v for v in verdicts if v.verdict == "noisy"]
    lines = [f"noise-aware gate (one-sided Fisher exact test per task, alpha {alpha:g}): {len(regressed)} "
             f"regressed task(s), {len(noisy)} noisy task(s) (fewer passes, within chance: not failing the run)"]
    lines += [f"  regressed: {v.line()}" for v in regressed]
    lines += [f"  noisy: {v.line()}" for v in noisy]
    return lines
