"""The run comparison page: what changed between run A (earlier, or the baseline) and run B.

Lists regressions (passed in A, not in B), improvements, new tasks and tasks no longer run, each
with old → new score and links to both trajectory pages, then the per-group deltas with the tests of
the baseline gate (`compare`, report/ci/group_gate.py). Written into B's report directory by `pytest
--baseline`, or anywhere by `python -m pytest_toolsandbox compare A B --html DIR`; links are relative, so the page
works from file://.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_toolsandbox.basics.gate_defaults import DEFAULT_ALPHA, DEFAULT_MIN_EFFECT
from pytest_toolsandbox.report.ci.compare import CompareError, Side, compare_groups, regressed, select, verdict_text
from pytest_toolsandbox.report.pages.escaping import escape, relative_href
from pytest_toolsandbox.report.pages.page import number, page, percent
from pytest_toolsandbox.report.results.record import Record
from pytest_toolsandbox.report.results.summary import task_key
from pytest_toolsandbox.report.writing.files import write_atomic

CHANGES = ("regression", "improvement", "new", "removed")
_TITLES = {"regression": "Regressions (passed in A, fail in B)", "improvement": "Improvements (failed in A, pass in B)",
           "new": "New in B", "removed": "Only in A (not run in B)"}


@dataclass(frozen=True)
class RunPages:
    """One side's records and where its report directory is (for links to its trajectory pages);
    `directory` None: its pages are not available (e.g. overwritten by the run that compares)."""

    side: Side
    directory: Path | None


@dataclass(frozen=True)
class TaskChange:
    task: str
    scenario: str
    variant: str
    change: str
    score_a: float | None
    score_b: float | None
    page_a: str | None
    page_b: str | None


def _tasks(records: Sequence[Record]) -> dict[str, list[Record]]:
    tasks: dict[str, list[Record]] = {}
    for record in records:
        tasks.setdefault(task_key(record), []).append(record)
    return tasks


def _mean(records: Sequence[Record] | None) -> float | None:
    return sum(r["score"] for r in records) / len(records) if records else None


def _passed(records: Sequence[Record] | None) -> bool | None:
    return all(bool(r["passed"]) for r in records) if records else None


def _link(run: RunPages, records: Sequence[Record] | None, out: Path) -> str | None:
    if run.directory is None or not records:
        return None
    page_path = next((r["page"] for r in sorted(records, key=lambda r: r.get("trial", 1)) if r.get("page")), None)
    if page_path is None or relative_href(page_path) is None or not (run.directory / page_path).is_file():
        return None  # a summary is data: its `page` must be a relative path inside its report
    return Path(os.path.relpath(run.directory / page_path, out)).as_posix()


def task_changes(a: RunPages, b: RunPages, out: Path) -> list[TaskChange]:
    """Every task whose verdict changed, or that only one run has, ordered by change then task."""
    tasks_a, tasks_b = _tasks(a.side.records), _tasks(b.side.records)
    changes = []
    for task in sorted(set(tasks_a) | set(tasks_b)):
        in_a, in_b = tasks_a.get(task), tasks_b.get(task)
        passed_a, passed_b = _passed(in_a), _passed(in_b)
        if in_a is None:
            change = "new"
        elif in_b is None:
            change = "removed"
        elif passed_a and not passed_b:
            change = "regression"
        elif passed_b and not passed_a:
            change = "improvement"
        else:
            continue
        sample = (in_b or in_a or [{}])[0]
        changes.append(TaskChange(task, sample.get("scenario", task), sample.get("variant", ""), change,
                                  _mean(in_a), _mean(in_b), _link(a, in_a, out), _link(b, in_b, out)))
    return sorted(changes, key=lambda c: (CHANGES.index(c.change), c.task))


def _changes_section(changes: list[TaskChange]) -> str:
    parts = []
    for change in CHANGES:
        members = [c for c in changes if c.change == change]
        rows = []
        for item in members:
            delta = (None if item.score_a is None or item.score_b is None else item.score_b - item.score_a)
            css = "" if delta is None or delta == 0 else (" delta-up" if delta > 0 else " delta-down")
            pages = (("A", item.page_a), ("B", item.page_b))
            links = " · ".join(f"<a href='{href}'>{label}</a>" for label, link in pages
                               if (href := relative_href(link)) is not None) or "—"
            rows.append(f"<tr data-change='{change}'><td>{escape(item.scenario)}<br><small>{escape(item.task)}</small>"
                        f"</td><td>{escape(item.variant)}</td><td class='num'>{number(item.score_a)}</td>"
                        f"<td class='num'>{number(item.score_b)}</td>"
                        f"<td class='num{css}'>{'—' if delta is None else f'{delta:+.3f}'}</td><td>{links}</td></tr>")
        table = (f"<table class='ts-changes' data-change='{change}'><thead><tr><th>scenario</th><th>variant</th>"
                 "<th>score A</th><th>score B</th><th>Δ</th><th>trajectories</th></tr></thead>"
                 f"<tbody>{''.join(rows)}</tbody></table>" if members else "<p class='count'>none</p>")
        parts.append(f"<h3>{escape(_TITLES[change])} ({len(members)})</h3>{table}")
    return "".join(parts)


def _signed(value: float | None, as_percent: bool = False) -> str:
    if value is None:
        return "<td class='num'>—</td>"
    css = "" if abs(value) < 1e-12 else (" delta-up" if value > 0 else " delta-down")
    text = f"{100 * value:+.1f}%" if as_percent else f"{value:+.3f}"
    return f"<td class='num{css}'>{text}</td>"


def _p_cell(measure: Any) -> str:
    if measure is None:
        return "<td class='num'>—</td>"
    return f"<td class='num'>{measure.p_drop if measure.delta <= 0 else measure.p_rise:.2g}</td>"


def _groups_section(a: Side, b: Side, alpha: float, min_effect: float) -> str:
    deltas = compare_groups(a, b, alpha, min_effect)
    rows = []
    for delta in deltas:
        css = " class='delta-down'" if delta.verdict.regressed else ""
        rows.append(f"<tr data-verdict='{'regressed' if delta.verdict.regressed else 'ok'}'>"
                    f"<td>{escape(delta.group)}</td><td class='num'>{delta.tasks}</td>"
                    f"<td class='num'>{number(delta.sim_a)}</td><td class='num'>{number(delta.sim_b)}</td>"
                    f"{_signed(delta.sim_delta)}{_p_cell(delta.verdict.similarity)}"
                    f"<td class='num'>{percent(delta.pass_a)}</td><td class='num'>{percent(delta.pass_b)}</td>"
                    f"{_signed(delta.pass_delta, True)}{_p_cell(delta.verdict.passes)}"
                    f"<td{css}>{escape(verdict_text(delta))}</td></tr>")
    head = ("<th>group</th><th>tasks in both</th><th>sim A</th><th>sim B</th><th>Δsim</th><th>p sim</th>"
            "<th>pass A</th><th>pass B</th><th>Δpass</th><th>p pass</th><th>verdict</th>")
    failing = regressed(deltas)
    verdict = (f"<p class='ts-verdict delta-down'>Regressed: {escape(', '.join(row.group for row in failing))}</p>"
               if failing else "<p class='ts-verdict'>No group regressed.</p>")
    note = (f"p: one-sided, over the tasks in both runs (per-task means): Wilcoxon signed-rank test of similarity, "
            f"exact sign test of pass rates; a group regressed when a drop has p &lt; {alpha:g} and is at least "
            f"{min_effect:g}.")
    return (f"<h2>Per-group deltas (B − A)</h2>{verdict}<table class='ts-deltas'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table><p class='count'>{note}</p>")


def comparison_body(a: RunPages, b: RunPages, out: Path, alpha: float = DEFAULT_ALPHA,
                    min_effect: float = DEFAULT_MIN_EFFECT) -> str:
    """One comparison (one agent of A against one of B) as an HTML section."""
    changes = task_changes(a, b, out)
    counts = ", ".join(f"{sum(c.change == change for c in changes)} {change}" for change in CHANGES)
    header = (f"<dl class='meta'><dt>A</dt><dd>{escape(a.side.label)} · agent {escape(a.side.agent)} · "
              f"{a.side.trials} trial(s)</dd><dt>B</dt><dd>{escape(b.side.label)} · agent {escape(b.side.agent)} · "
              f"{b.side.trials} trial(s)</dd><dt>changes</dt><dd>{escape(counts)}</dd></dl>")
    if a.directory is None:
        header += "<p class='count'>A's trajectory pages were replaced by this run, so only B's are linked.</p>"
    return header + _groups_section(a.side, b.side, alpha, min_effect) + _changes_section(changes)


def write_comparison(out: Path, sections: list[tuple[RunPages, RunPages]], alpha: float = DEFAULT_ALPHA,
                     min_effect: float = DEFAULT_MIN_EFFECT, root: str | None = None,
                     empty: str = "No agent of A has scored records to compare with B.") -> Path:
    """`out`/comparison.html with one section per compared agent pair; `root` links back to a report;
    `empty` says why there is nothing to compare."""
    bodies = []
    for a, b in sections:
        title = f"<h2>agent {escape(a.side.agent)} → {escape(b.side.agent)}</h2>" if len(sections) > 1 else ""
        bodies.append(title + comparison_body(a, b, out, alpha, min_effect))
    path = out / "comparison.html"
    body = "".join(bodies) or f"<p>{escape(empty)}</p>"
    # a stand-alone comparison (compare --html) has no report around it to navigate to
    write_atomic(path, page("Run comparison", body, root or "", nav=root is not None))
    return path


def baseline_sections(baseline: dict[str, Any], baseline_path: Path, summary: dict[str, Any],
                      report_dir: Path, label: str) -> list[tuple[RunPages, RunPages]]:
    """The pairs a `--baseline` run compares: the gate's own (`Baseline.gates`: each run agent with the
    baseline agent that gates it), so what is compared is what was gated."""
    pairs = [(source, agent) for agent, source in summary["baseline"]["gates"].items()]
    # A baseline inside the report directory had its trajectory pages replaced by this run.
    same = baseline_path.parent.resolve() == report_dir.resolve()
    sections = []
    for agent_a, agent_b in pairs:
        try:
            side_a = select(baseline, label, agent_a)
            side_b = select(summary, "this run", agent_b)
        except CompareError:
            continue  # an agent without scored records on one side: nothing to compare
        sections.append((RunPages(side_a, None if same else baseline_path.parent), RunPages(side_b, report_dir)))
    return sections
