"""The gate across tasks: per group (the whole run, each category) did the agent get worse than its baseline?

A run whose every task drops a little, each within chance, has still regressed; a weak agent that passes
almost nothing can still lose much of its similarity. So each group is judged on all its tasks at once,
paired by task (scenario × variant; with trials, each task contributes its pass rate and mean similarity
over its trials):

- **pass rate**: an exact sign test (one-sided binomial test at ½) on the tasks whose pass rate changed.
  Pass rates of a task take few values (0, ¼, … 1), so most differences tie; the sign test needs only
  their direction.
- **similarity**: a one-sided Wilcoxon signed-rank test on the per-task mean similarity; similarity is
  bounded and skewed, so no normal model, and unlike the sign test it weighs large drops more than tiny ones.

A group **regressed** when a test gives p < alpha *and* the mean drop over its paired tasks is at least
the minimum effect; it improved by the mirror rule. Tasks present on one side only are not paired (they
gate per item as new tasks). A group with too few paired tasks for any drop to reach alpha (0.5ⁿ ≥ alpha:
n ≤ 4 at 0.05) cannot regress, and says so.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.report.results.record import SCORED_OUTCOMES, Record, agent_key
from pytest_toolsandbox.report.results.summary import task_key
from pytest_toolsandbox.scenario.models import CATEGORIES

ALL = "all"
UNCHANGED = 1e-6
"""Differences of similarity smaller than this are no change: a baseline file rounds similarity to 6 digits."""


@dataclass(frozen=True)
class TaskMeans:
    """One task of one run: its pass rate and mean similarity over its scored trials, and its categories."""

    pass_rate: float
    similarity: float
    trials: int
    categories: tuple[str, ...]


def task_means(records: Sequence[Record]) -> dict[str, dict[str, TaskMeans]]:
    """Agent → task → its means; errors and skips are no evidence either way."""
    trials: dict[str, dict[str, list[Record]]] = {}
    for record in records:
        if record.get("outcome") in SCORED_OUTCOMES and record.get("score") is not None:
            trials.setdefault(agent_key(record), {}).setdefault(task_key(record), []).append(record)
    return {agent: {task: TaskMeans(sum(bool(r["passed"]) for r in mine) / len(mine),
                                    sum(float(r["score"]) for r in mine) / len(mine), len(mine),
                                    tuple(mine[0].get("categories") or ()))
                    for task, mine in tasks.items()} for agent, tasks in trials.items()}


def smallest_p(pairs: int) -> float:
    """The smallest one-sided p-value either test can give with `pairs` changed tasks: every task moved
    the same way (exact sign test and exact signed-rank test agree on it)."""
    return 0.5 ** pairs


def pairs_needed(alpha: float) -> int:
    """Fewest changed tasks with which a drop can be significant at `alpha`."""
    return math.floor(math.log(alpha) / math.log(0.5)) + 1


def sign_test(differences: Sequence[float]) -> tuple[float, float]:
    """(p of "lower now", p of "higher now"): exact binomial test on the signs of the non-zero differences."""
    from scipy.stats import binomtest

    down = sum(d < 0 for d in differences)
    up = sum(d > 0 for d in differences)
    if down + up == 0:
        return 1.0, 1.0
    return (float(binomtest(down, down + up, 0.5, alternative="greater").pvalue),
            float(binomtest(up, down + up, 0.5, alternative="greater").pvalue))


def signed_rank_test(differences: Sequence[float]) -> tuple[float, float]:
    """(p of "lower now", p of "higher now"): one-sided Wilcoxon signed-rank tests, zero differences dropped."""
    from scipy.stats import wilcoxon

    changed = [d for d in differences if abs(d) >= UNCHANGED]
    if not changed:
        return 1.0, 1.0
    with warnings.catch_warnings():  # ties and small samples: scipy picks its method and says so
        warnings.simplefilter("ignore")
        lower = wilcoxon(changed, zero_method="wilcox", alternative="less").pvalue
        higher = wilcoxon(changed, zero_method="wilcox", alternative="greater").pvalue
    return float(lower), float(higher)


@dataclass(frozen=True)
class Measure:
    """One measure (pass rate or similarity) of one group, baseline against run over the paired tasks."""

    before: float
    after: float
    p_drop: float
    p_rise: float

    @property
    def delta(self) -> float:
        return self.after - self.before

    def verdict(self, alpha: float, min_effect: float) -> str:
        """"regressed", "improved", "small" (significant, below the minimum effect) or "unchanged"."""
        if self.p_drop < alpha:
            return "regressed" if -self.delta >= min_effect - 1e-12 else "small"
        if self.p_rise < alpha:
            return "improved" if self.delta >= min_effect - 1e-12 else "small"
        return "unchanged"

    def as_json(self, alpha: float, min_effect: float) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "delta": self.delta, "p_drop": self.p_drop,
                "p_rise": self.p_rise, "verdict": self.verdict(alpha, min_effect)}


@dataclass(frozen=True)
class GroupVerdict:
    """A group of one agent's tasks judged against the baseline's."""

    agent: str
    group: str
    """"all", or a category."""
    paired: int
    """Tasks in both runs."""
    passes: Measure | None
    similarity: Measure | None
    alpha: float
    min_effect: float

    @property
    def detectable(self) -> bool:
        """Whether a drop of this group could reach alpha at all with its paired tasks."""
        return smallest_p(self.paired) < self.alpha

    def verdicts(self) -> dict[str, str]:
        return {name: measure.verdict(self.alpha, self.min_effect)
                for name, measure in (("pass_rate", self.passes), ("similarity", self.similarity))
                if measure is not None}

    @property
    def regressed(self) -> bool:
        return "regressed" in self.verdicts().values()

    @property
    def improved(self) -> bool:
        return not self.regressed and "improved" in self.verdicts().values()

    def as_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "group": self.group, "paired_tasks": self.paired, "detectable": self.detectable,
                "pass_rate": self.passes.as_json(self.alpha, self.min_effect) if self.passes else None,
                "similarity": self.similarity.as_json(self.alpha, self.min_effect) if self.similarity else None}


def _measure(before: Sequence[float], after: Sequence[float], test: Any) -> Measure | None:
    if not before:
        return None
    p_drop, p_rise = test([b - a for a, b in zip(before, after, strict=True)])
    return Measure(sum(before) / len(before), sum(after) / len(after), p_drop, p_rise)


def judge_group(agent: str, group: str, then: Mapping[str, TaskMeans], now: Mapping[str, TaskMeans],
                alpha: float, min_effect: float) -> GroupVerdict:
    """One group: `then` and `now` hold its tasks in the baseline and in the run."""
    shared = sorted(set(then) & set(now))
    pass_pairs = ([then[t].pass_rate for t in shared], [now[t].pass_rate for t in shared])
    sim_pairs = ([then[t].similarity for t in shared], [now[t].similarity for t in shared])
    return GroupVerdict(agent, group, len(shared), _measure(*pass_pairs, sign_test),
                        _measure(*sim_pairs, signed_rank_test), alpha, min_effect)


def _categories(tasks: Mapping[str, TaskMeans]) -> list[str]:
    present = {category for means in tasks.values() for category in means.categories}
    return [c for c in CATEGORIES if c in present] + sorted(present - set(CATEGORIES))


def judge_groups(baseline_records: Sequence[Record], records: Sequence[Record], gates: Mapping[str, str],
                 alpha: float, min_effect: float) -> list[GroupVerdict]:
    """Every group (all, then each category) of every agent the baseline gates (`gates`: run agent →
    baseline agent), in that order."""
    before, after = task_means(baseline_records), task_means(records)
    verdicts = []
    for agent, source in sorted(gates.items()):
        then, now = before.get(source, {}), after.get(agent, {})
        if not now:
            continue
        for group in [ALL, *_categories({**then, **now})]:
            def member(tasks: Mapping[str, TaskMeans], group: str = group) -> dict[str, TaskMeans]:
                return {t: m for t, m in tasks.items() if group == ALL or group in m.categories}
            verdicts.append(judge_group(agent, group, member(then), member(now), alpha, min_effect))
    return verdicts
