"""The baseline gate: the groups across tasks (report/ci/group_gate.py) and, with repeated trials, each task:
a task regresses only when its pass rate fell by more than chance explains.

With one trial per task, the rule of report/ci/baseline.py stands: passed then, fails now = regression.
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
tasks new to the baseline gate as before; infrastructure errors count on neither side. A noisy task is
forgiven only as a task: if many tasks lose a little, the test across tasks of their group fails the run.
When the trials at hand make a per-task drop undetectable (1/C(n₀+n₁, n₀) ≥ alpha, e.g. one baseline trial
against four), the gate says so instead of passing silently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.basics.gate_defaults import DEFAULT_ALPHA, DEFAULT_MIN_EFFECT
from pytest_toolsandbox.report.ci.baseline import pass_counts
from pytest_toolsandbox.report.ci.group_gate import ALL, GroupVerdict, judge_groups, pairs_needed
from pytest_toolsandbox.report.results.record import SCORED_OUTCOMES, Record, agent_key
from pytest_toolsandbox.report.results.summary import task_key


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


def per_task_floor(baseline_trials: int, run_trials: int) -> float:
    """The smallest p the per-task test can give: a task that passed every baseline trial and fails every
    trial now (1 / C(n₀ + n₁, n₀))."""
    return 1 / math.comb(baseline_trials + run_trials, baseline_trials)


def per_task_note(baseline_trials: int, run_trials: int, alpha: float) -> str | None:
    """Why the per-task verdicts cannot catch a drop with these trials, or None when they can."""
    floor = per_task_floor(baseline_trials, run_trials)
    if floor < alpha:
        return None
    counts = f"{baseline_trials} baseline trial(s) against {run_trials} run trial(s)"
    if baseline_trials == run_trials == 1:
        return (f"per task: {counts} cannot tell a drop from noise (smallest p {floor:.3f} ≥ alpha {alpha:g}): "
                "every task that passed in the baseline and fails now fails the run; run --trials N on both "
                "sides for per-task noise verdicts")
    return (f"per task: {counts} cannot flag a single task (smallest p {floor:.3f} ≥ alpha {alpha:g}): tasks that "
            "lost passes are judged across tasks only; record the baseline with more --trials")


@dataclass(frozen=True)
class GateResult:
    """Everything the gate found: per-group verdicts across tasks, per-task verdicts (with trials), and
    what it could not detect."""

    alpha: float
    min_effect: float
    groups: list[GroupVerdict]
    tasks: list[TaskVerdict]
    notes: list[str]

    @property
    def regressed_groups(self) -> list[GroupVerdict]:
        return [group for group in self.groups if group.regressed]

    @property
    def improved_groups(self) -> list[GroupVerdict]:
        return [group for group in self.groups if group.improved]

    def as_json(self) -> dict[str, Any]:
        """The gate's part of summary.json's `baseline`."""
        return {"tests": {"groups": "per group across paired tasks: exact sign test of pass rates, Wilcoxon "
                          "signed-rank test of mean similarity (one-sided)",
                          "tasks": "with trials, one-sided Fisher exact test per task"},
                "alpha": self.alpha, "min_effect": self.min_effect,
                "groups": [group.as_json() for group in self.groups],
                "regressed_groups": [f"{g.agent} {g.group}" for g in self.regressed_groups],
                "improved_groups": [f"{g.agent} {g.group}" for g in self.improved_groups],
                "regressed_tasks": [v.as_json() for v in self.tasks if v.verdict == "regressed"],
                "noisy_tasks": [v.as_json() for v in self.tasks if v.verdict == "noisy"],
                "notes": list(self.notes)}


def _trials(records: Sequence[Record]) -> int:
    """The most scored trials any task has (1 for a run without trials)."""
    counts: dict[tuple[str, str], int] = {}
    for record in records:
        if record.get("outcome") in SCORED_OUTCOMES and record.get("score") is not None:
            key = (agent_key(record), task_key(record))
            counts[key] = counts.get(key, 0) + 1
    return max(counts.values(), default=1)


def run_gate(baseline_records: Sequence[Record], records: Sequence[Record], gates: Mapping[str, str],
             alpha: float = DEFAULT_ALPHA, min_effect: float = DEFAULT_MIN_EFFECT) -> GateResult:
    """The whole gate of a run against its baseline, for the agents the baseline gates."""
    groups = judge_groups(baseline_records, records, gates, alpha, min_effect)
    run_trials = _trials(records)
    tasks = judge(baseline_records, records, gates, alpha) if run_trials > 1 else []
    notes = []
    if gates:
        note = per_task_note(_trials(baseline_records), run_trials, alpha)
        if note:
            notes.append(note)
    needed = pairs_needed(alpha)
    several = len(gates) > 1
    for group in groups:
        if not group.detectable:
            name = "all tasks" if group.group == ALL else f"category {group.group}"
            name = f"{group.agent} · {name}" if several else name
            notes.append(f"{name}: {group.paired} paired task(s), too few to detect a drop at alpha {alpha:g} "
                         f"(needs {needed}); not gated across tasks")
    return GateResult(alpha, min_effect, groups, tasks, notes)
