"""Comparing two runs: per-group deltas and, for repeated trials, a paired significance test.

Tasks (scenario × variant) present in both runs are paired; each task contributes its mean
similarity over trials. With several trials per task the per-task means are stable enough for a
Wilcoxon signed-rank test across tasks (non-parametric: similarities are bounded and skewed).
Degenerate inputs get a stated reason instead of a number: fewer than two paired tasks, or no
task whose mean changed.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.report.record import SCORED_OUTCOMES, Record, agent_key
from pytest_toolsandbox.report.summary import task_key
from pytest_toolsandbox.scenario.models import CATEGORIES
from pytest_toolsandbox.tools.augment import VARIANTS


class CompareError(ValueError):
    """Summaries that cannot be compared as asked."""


@dataclass(frozen=True)
class Side:
    """The scored records of one run for one agent (by its `--agent` spec)."""

    label: str
    agent: str
    trials: int
    records: list[Record]


def select(summary: dict[str, Any], label: str, agent: str | None) -> Side:
    scored = [r for r in summary["records"] if r.get("outcome") in SCORED_OUTCOMES and r.get("score") is not None]
    agents = sorted({agent_key(r) for r in scored})
    if agent is None:
        if len(agents) > 1:
            raise CompareError(f"{label} holds several agents ({', '.join(agents)}); choose one with "
                               "--agent-a/--agent-b")
        agent = agents[0] if agents else "?"
    elif agent not in agents:
        raise CompareError(f"{label} has no scored records of agent {agent!r} (has: {', '.join(agents) or 'none'})")
    trials = int(summary.get("run", {}).get("options", {}).get("trials", 1))
    return Side(label, agent, trials, [r for r in scored if agent_key(r) == agent])


def _task_means(records: Sequence[Record]) -> dict[str, float]:
    scores: dict[str, list[float]] = {}
    for record in records:
        scores.setdefault(task_key(record), []).append(record["score"])
    return {key: sum(values) / len(values) for key, values in scores.items()}


def paired_test(before: Sequence[float], after: Sequence[float]) -> tuple[float | None, str]:
    """Wilcoxon signed-rank p-value of paired samples, or None with the reason it cannot be computed."""
    from scipy.stats import wilcoxon

    if len(before) < 2:
        return None, "fewer than 2 paired tasks"
    differences = [b - a for a, b in zip(before, after, strict=True)]
    if not any(abs(d) > 1e-12 for d in differences):
        return 1.0, "no task changed"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = wilcoxon(differences, zero_method="wilcox")
    return float(result.pvalue), "wilcoxon"


def _rate(records: Sequence[Record]) -> float | None:
    return sum(bool(r["passed"]) for r in records) / len(records) if records else None


def _mean(records: Sequence[Record]) -> float | None:
    return sum(r["score"] for r in records) / len(records) if records else None


def _groups(a: Side, b: Side) -> list[tuple[str, Any]]:
    categories = {c for side in (a, b) for r in side.records for c in r["categories"]}
    variants = {r["variant"] for side in (a, b) for r in side.records}
    groups: list[tuple[str, Any]] = [("all", lambda r: True)]
    groups += [(f"category {c}", lambda r, c=c: c in r["categories"])
               for c in [*[c for c in CATEGORIES if c in categories], *sorted(categories - set(CATEGORIES))]]
    groups += [(f"variant {v}", lambda r, v=v: r["variant"] == v)
               for v in [*[v for v in VARIANTS if v in variants], *sorted(variants - set(VARIANTS))]]
    return groups


def _signed(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "—"
    return f"{100 * value:+.1f}%" if percent else f"{value:+.3f}"


def _plain(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "—"
    return f"{100 * value:.1f}%" if percent else f"{value:.3f}"


@dataclass(frozen=True)
class GroupDelta:
    """One row of a comparison: a group's means in A and B and the paired test over its tasks."""

    group: str
    tasks: int
    sim_a: float | None
    sim_b: float | None
    pass_a: float | None
    pass_b: float | None
    p_value: float | None
    reason: str
    """"wilcoxon", or why there is no p-value / why it is trivially 1 ("no task changed")."""

    @property
    def sim_delta(self) -> float | None:
        return None if self.sim_a is None or self.sim_b is None else self.sim_b - self.sim_a

    @property
    def pass_delta(self) -> float | None:
        return None if self.pass_a is None or self.pass_b is None else self.pass_b - self.pass_a


def tested(a: Side, b: Side) -> bool:
    """A significance test needs several trials per task in both runs."""
    return a.trials > 1 and b.trials > 1


def compare_groups(a: Side, b: Side) -> list[GroupDelta]:
    """Per group (all, each category, each variant): means of A and B and, when tested, the p-value."""
    rows = []
    for name, member in _groups(a, b):
        ra = [r for r in a.records if member(r)]
        rb = [r for r in b.records if member(r)]
        means_a, means_b = _task_means(ra), _task_means(rb)
        shared = sorted(set(means_a) & set(means_b))
        p, reason = (paired_test([means_a[k] for k in shared], [means_b[k] for k in shared]) if tested(a, b)
                     else (None, "needs several trials per task in both runs"))
        rows.append(GroupDelta(name, len(shared), _mean(ra), _mean(rb), _rate(ra), _rate(rb), p, reason))
    return rows


def p_text(row: GroupDelta, alpha: float) -> str:
    if row.p_value is None:
        return f"n/a ({row.reason})"
    mark = " *" if row.p_value < alpha else ""
    return f"{row.p_value:.3f}{mark}" + (f" ({row.reason})" if row.reason != "wilcoxon" else "")


def compare_lines(a: Side, b: Side, alpha: float = 0.05) -> list[str]:
    """The comparison as text lines: one row per group, deltas as B − A."""
    with_test = tested(a, b)
    header = ["group", "tasks", "sim A", "sim B", "Δsim", "pass A", "pass B", "Δpass"]
    if with_test:
        header.append("p (paired)")
    rows = [header]
    for delta in compare_groups(a, b):
        row = [delta.group, str(delta.tasks), _plain(delta.sim_a), _plain(delta.sim_b), _signed(delta.sim_delta),
               _plain(delta.pass_a, True), _plain(delta.pass_b, True), _signed(delta.pass_delta, True)]
        if with_test:
            row.append(p_text(delta, alpha))
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [f"A = {a.label} (agent {a.agent}, {a.trials} trial(s)); B = {b.label} (agent {b.agent}, "
             f"{b.trials} trial(s)); deltas are B − A"]
    lines += ["  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
              .rstrip() for row in rows]
    if with_test:
        lines.append(f"p: Wilcoxon signed-rank test over tasks paired by scenario and variant (per-task mean "
                     f"similarity); * marks p < {alpha:g}")
    else:
        lines.append("no significance test: it needs several trials per task in both runs (pytest --trials N)")
    return lines
