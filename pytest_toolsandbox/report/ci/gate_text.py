"""How a run's baseline gate reads in the terminal, the HTML index and the Markdown summary.

One wording everywhere: first what regressed and by how much (groups whose similarity or pass rate
dropped across tasks, pass flips per category, tasks that regressed on their own trials), then what
improved, then the counts of changes, which agents the baseline gated (and with whose results), which ran
ungated, and what the gate could not detect, so no run reads as "0 regressions" silently.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.report.pages.leaderboard import group_page_path
from pytest_toolsandbox.report.results.record import agent_key
from pytest_toolsandbox.report.results.summary import task_key

CHANGES = ("regression", "improvement", "known_failure")


def plural(count: int, noun: str) -> str:
    """`1 regression`, `0 regressions`, `2 known failures`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def change_counts(baseline: dict[str, Any]) -> str:
    """`0 regressions, 23 improvements, 147 known failures` from summary.json's `baseline`."""
    return ", ".join(plural(len(baseline.get(change) or []), change.replace("_", " ")) for change in CHANGES)


def gate_note(baseline: dict[str, Any]) -> str | None:
    """Which agents the baseline gated and which it did not, when that is not simply "the agent it was
    recorded for"; None for the plain case (the baseline's one agent, gating itself)."""
    gates: dict[str, str] = baseline.get("gates") or {}
    ungated: list[str] = baseline.get("ungated") or []
    recorded = ", ".join(baseline.get("recorded_for") or []) or "no agent"
    parts = [f"{agent} gated by the results of {source}" for agent, source in gates.items() if agent != source]
    if ungated:
        parts.append(f"{', '.join(ungated)} ran ungated (the baseline holds results of {recorded} only)")
    differs: list[str] = baseline.get("differs") or []
    if differs:
        parts.append(f"the baseline was scored under other options ({'; '.join(differs)}): verdicts may differ "
                     "by the options alone; refresh it with --update-baseline under this run's")
    return "; ".join(parts) or None


@dataclass(frozen=True)
class Finding:
    """One line of the gate's report: what changed, by how much, and the report page that shows it."""

    text: str
    page: str | None
    depth: int = 0
    """0: a group or task; 1: an item under it."""


def _measure_text(name: str, measure: dict[str, Any], paired: int, as_percent: bool) -> str:
    show = (lambda v: f"{100 * v:.1f}%") if as_percent else (lambda v: f"{v:.3f}")
    delta = f"{100 * measure['delta']:+.1f} pts" if as_percent else f"{measure['delta']:+.3f}"
    p = measure["p_drop"] if measure["delta"] < 0 else measure["p_rise"]
    return (f"{name} {show(measure['before'])} → {show(measure['after'])} ({delta}, p = {p:.2g} over "
            f"{plural(paired, 'paired task')})")


def _group_name(group: dict[str, Any], several: bool) -> str:
    name = "all tasks" if group["group"] == "all" else f"category {group['group']}"
    return f"{group['agent']} · {name}" if several else name


def _group_findings(gate: dict[str, Any], verdict: str, several: bool) -> list[Finding]:
    found = []
    for group in gate.get("groups") or []:
        parts = [_measure_text(label, group[key], group["paired_tasks"], key == "pass_rate")
                 for key, label in (("similarity", "similarity"), ("pass_rate", "pass rate"))
                 if group.get(key) and group[key]["verdict"] == verdict]
        if parts:
            page = "all.html" if group["group"] == "all" else group_page_path("category", group["group"])
            found.append(Finding(f"{_group_name(group, several)}: {'; '.join(parts)}", page))
    return found


def _flipped(summary: dict[str, Any], change: str) -> list[dict[str, Any]]:
    """The records whose verdict flipped, leaving out the failed trials of tasks the per-task test found
    noisy (the exit status does not count them either: report/ci/gate.py `forgiven`)."""
    gate = (summary.get("baseline") or {}).get("gate") or {}
    noisy = {(verdict["agent"], verdict["task"]) for verdict in gate.get("noisy_tasks") or []}
    return [r for r in summary.get("records") or []
            if r.get("change") == change and (agent_key(r), task_key(r)) not in noisy]


def _flips(flipped: list[dict[str, Any]], change: str, several: bool, listed: int) -> list[Finding]:
    """Items whose verdict flipped: their count per category (each with its listing page), then the first
    `listed` of them, each once, with its trajectory page."""
    what = "passed then, fail now" if change == "regression" else "failed then, pass now"
    per_category = Counter(c for r in flipped for c in r.get("categories") or [])
    found = [Finding(f"category {category}: {plural(count, 'pass flip')} ({what})",
                     group_page_path("category", category)) for category, count in sorted(per_category.items())]
    for record in flipped[:listed]:
        agent = f"{record.get('agent_spec')} · " if several else ""
        case = record["id"].rpartition("[")[2].rstrip("]") if "[" in record["id"] else record["variant"]
        score = "" if record.get("score") is None else f", similarity now {record['score']:.3f}"
        found.append(Finding(f"{agent}{record['path']} [{case}]{score}", record.get("page"), 1))
    if len(flipped) > listed > 0:
        found.append(Finding(f"… and {len(flipped) - listed} more (see the report)", None, 1))
    return found


def _task_findings(gate: dict[str, Any], key: str) -> list[Finding]:
    return [Finding(f"{v['task']}: {v['baseline'][0]}/{v['baseline'][1]} → {v['now'][0]}/{v['now'][1]} passed "
                    f"(p = {v['p']:.3f})", None) for v in gate.get(key) or []]


def gate_findings(summary: dict[str, Any], listed: int = 10) -> tuple[list[Finding], list[Finding]]:
    """(what regressed, what improved), regressions by group (similarity and pass-rate drops across
    tasks), then pass flips per category, then tasks that regressed on their own trials."""
    baseline = summary.get("baseline") or {}
    gate = baseline.get("gate") or {}
    several = len(baseline.get("gates") or {}) > 1
    regressed = (_group_findings(gate, "regressed", several)
                 + _flips(_flipped(summary, "regression"), "regression", several, listed)
                 + _task_findings(gate, "regressed_tasks"))
    improved = (_group_findings(gate, "improved", several)
                + _flips(_flipped(summary, "improvement"), "improvement", several, listed))
    return regressed, improved


def gate_verdict(summary: dict[str, Any]) -> str:
    """The gate's one-line headline."""
    baseline = summary.get("baseline") or {}
    gate = baseline.get("gate") or {}
    groups = len(gate.get("regressed_groups") or [])
    flips = len(_flipped(summary, "regression"))
    tasks = len(gate.get("regressed_tasks") or [])
    if groups or flips or tasks:
        parts = [plural(groups, "group") + " dropped" if groups else "", plural(flips, "pass flip") if flips else "",
                 plural(tasks, "task") + " regressed on its trials" if tasks else ""]
        return f"REGRESSED against baseline {baseline['path']}: {', '.join(p for p in parts if p)}"
    return f"no regression against baseline {baseline['path']}"
