"""Comparing two runs: per-group deltas and the baseline gate's tests, so `compare A B` says what
`pytest --baseline A` would have said of B.

Tasks (scenario × variant) present in both runs are paired; each contributes its pass rate and mean
similarity over its trials (one trial: its one value). Per group (all, each category, each variant)
report/ci/group_gate.py's one-sided tests run over the paired tasks, an exact sign test on pass rates and a
Wilcoxon signed-rank test on similarity; a group regressed when a drop is significant at alpha and at least
the minimum effect. A group with too few paired tasks for any drop to be significant says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.basics.gate_defaults import DEFAULT_ALPHA, DEFAULT_MIN_EFFECT
from pytest_toolsandbox.basics.vocabulary import REFERENCE
from pytest_toolsandbox.report.ci.group_gate import GroupVerdict, judge_group, pairs_needed, task_means
from pytest_toolsandbox.report.results.record import SCORED_OUTCOMES, Record, agent_key
from pytest_toolsandbox.report.results.summary import as_crashed
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
    if summary.get("run", {}).get("options", {}).get("rules") == REFERENCE:  # errors count as crashes
        scored += [as_crashed(r) for r in summary["records"] if r.get("outcome") == "error"]
    agents = sorted({agent_key(r) for r in scored})
    if agent is None:
        if len(agents) > 1:
            raise CompareError(f"{label} holds several agents ({', '.join(agents)}); choose one with "
                               "--agent-a/--agent-b")
        agent = agents[0] if agents else "?"
    elif agent not in agents:
        raise CompareError(f"{label} has no scored records of agent {agent!r} (has: {', '.join(agents) or 'none'})")
    mine = [r for r in scored if agent_key(r) == agent]
    means = task_means(mine).get(agent, {})
    return Side(label, agent, max((m.trials for m in means.values()), default=1), mine)


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
    """One row of a comparison: a group's means in A and B (all their scored trials) and the gate's verdict
    over its paired tasks."""

    group: str
    sim_a: float | None
    sim_b: float | None
    pass_a: float | None
    pass_b: float | None
    verdict: GroupVerdict

    @property
    def tasks(self) -> int:
        return self.verdict.paired

    @property
    def sim_delta(self) -> float | None:
        return None if self.sim_a is None or self.sim_b is None else self.sim_b - self.sim_a

    @property
    def pass_delta(self) -> float | None:
        return None if self.pass_a is None or self.pass_b is None else self.pass_b - self.pass_a


def compare_groups(a: Side, b: Side, alpha: float = DEFAULT_ALPHA,
                   min_effect: float = DEFAULT_MIN_EFFECT) -> list[GroupDelta]:
    """Per group (all, each category, each variant): means of A and B and the gate's verdict."""
    rows = []
    for name, member in _groups(a, b):
        ra = [r for r in a.records if member(r)]
        rb = [r for r in b.records if member(r)]
        then, now = task_means(ra).get(a.agent, {}), task_means(rb).get(b.agent, {})
        rows.append(GroupDelta(name, _mean(ra), _mean(rb), _rate(ra), _rate(rb),
                               judge_group(b.agent, name, then, now, alpha, min_effect)))
    return rows


def verdict_text(row: GroupDelta) -> str:
    """"regressed", "improved", "—", or why the group cannot be judged."""
    verdict = row.verdict
    if not verdict.detectable:
        return f"too few pairs ({verdict.paired} < {pairs_needed(verdict.alpha)})"
    found = verdict.verdicts()
    for outcome in ("regressed", "improved", "small"):
        names = [name.replace("_", " ") for name, value in found.items() if value == outcome]
        if names:
            return f"{outcome if outcome != 'small' else 'significant, below min effect'}: {', '.join(names)}"
    return "—"


def _p(measure: Any) -> str:
    if measure is None:
        return "—"
    return f"{measure.p_drop if measure.delta <= 0 else measure.p_rise:.2g}"


def regressed(rows: Sequence[GroupDelta]) -> list[GroupDelta]:
    """The rows the gate would fail a run for: the whole run and the categories (variant rows are shown, but
    the gate judges no variant, so neither does the comparison's verdict)."""
    return [row for row in rows if row.verdict.regressed and not row.group.startswith("variant ")]


def compare_lines(a: Side, b: Side, deltas: Sequence[GroupDelta], alpha: float = DEFAULT_ALPHA,
                  min_effect: float = DEFAULT_MIN_EFFECT) -> list[str]:
    """The comparison `compare_groups` made (with `alpha` and `min_effect`) as text lines: regressed groups
    first, then one row per group; deltas are B − A. The tests are not run again here: the caller's exit
    status judges the same rows."""
    header = ["group", "tasks", "sim A", "sim B", "Δsim", "p sim", "pass A", "pass B", "Δpass", "p pass", "verdict"]
    rows = [header]
    for delta in deltas:
        rows.append([delta.group, str(delta.tasks), _plain(delta.sim_a), _plain(delta.sim_b), _signed(delta.sim_delta),
                     _p(delta.verdict.similarity), _plain(delta.pass_a, True), _plain(delta.pass_b, True),
                     _signed(delta.pass_delta, True), _p(delta.verdict.passes), verdict_text(delta)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [f"A = {a.label} (agent {a.agent}, {a.trials} trial(s)); B = {b.label} (agent {b.agent}, "
             f"{b.trials} trial(s)); deltas are B − A"]
    failing = regressed(deltas)
    lines.append(f"REGRESSED: {', '.join(row.group for row in failing)}" if failing else "no regression")
    lines += ["  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:-1], widths[1:-1], strict=True)),
                         row[-1]]).rstrip() for row in rows]
    lines.append(f"p: one-sided, over the tasks in both runs (per-task means): Wilcoxon signed-rank test of "
                 f"similarity, exact sign test of pass rates; a group regressed when a drop has p < {alpha:g} and is "
                 f"at least {min_effect:g}")
    return lines
