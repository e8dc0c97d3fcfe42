"""The run as Markdown: for `$GITHUB_STEP_SUMMARY` (the job's summary page), a pull-request comment,
or any file (`--ts-markdown PATH`).

The baseline gate first (what regressed and by how much, per category, with links; then what improved;
what the gate could not detect), one table per agent (the terminal's rows: all, each category, each
variant), then the regressions and the failures that are not known failures, each with its similarity,
diagnosis codes and links: to the scenario file (on GitHub when the run is a GitHub Actions job) and
to its trajectory page in the report directory (relative to the Markdown file, or, in a job, named
inside the uploaded report artifact, whose page the job links).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pytest_toolsandbox.report.ci.gate_text import change_counts, gate_findings, gate_note, gate_verdict, plural
from pytest_toolsandbox.report.pages.page import number, percent
from pytest_toolsandbox.report.text.codes import diagnosis_codes
from pytest_toolsandbox.report.text.table import agent_label, table_rows

LISTED = 50
"""Items listed per section; the rest are counted (a step summary is limited to 1 MiB)."""


def _cell(text: str) -> str:
    """Table cell or link text: run data (agent names, ids) must not open Markdown or HTML constructs."""
    escaped = "".join(f"\\{char}" if char in "\\`*[]<>|" else char for char in text)
    return " ".join(escaped.split())


def _code(text: str) -> str:
    """`text` as a code span it cannot leave: delimited by one more backtick than its longest run of
    backticks (a file named ``a`<img src=x>`.yaml`` stays literal text), on one line."""
    text = " ".join(str(text).splitlines())
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _tables(summary: dict[str, Any]) -> list[str]:
    lines = []
    for agent, agent_stats in summary["aggregates"].items():
        lines += [f"**{_cell(agent_label(agent, agent_stats))}**", "",
                  "| group | items | similarity | pass rate | turns | errors |", "|---|--:|--:|--:|--:|--:|"]
        for kind, name, stats in table_rows(agent_stats):
            label = name if kind == "all" else f"{kind} {name}"
            lines.append(f"| {_cell(label)} | {stats['items']} | {number(stats['mean_similarity'])} | "
                         f"{percent(stats['pass_rate'])} | {number(stats['mean_turns'], 1)} | {stats['errors']} |")
        lines.append("")
    return lines


class Links:
    """Where an item's scenario file and trajectory page are, from where the Markdown is read."""

    def __init__(self, report_dir: Path, markdown_dir: Path | None, environ: Mapping[str, str]) -> None:
        self.report_dir, self.markdown_dir = report_dir, markdown_dir
        server, repository = environ.get("GITHUB_SERVER_URL"), environ.get("GITHUB_REPOSITORY")
        sha, run_id = environ.get("GITHUB_SHA"), environ.get("GITHUB_RUN_ID")
        self.blob = f"{server}/{repository}/blob/{sha}/" if server and repository and sha else None
        self.run = f"{server}/{repository}/actions/runs/{run_id}" if server and repository and run_id else None

    def scenario(self, record: dict[str, Any]) -> str:
        name = f"{_code(record['path'])} [{_cell(record['variant'])}]"
        return f"[{name}]({self.blob}{quote(record['path'], safe='/')})" if self.blob else name

    def report_page(self, page: str | None, label: str = "report") -> str:
        """A link to a page of the report (a listing, a trajectory), or "" when there is none; in a job
        summary, where the pages are in the uploaded artifact, the page's name instead."""
        if not page:
            return ""
        if self.markdown_dir is None:
            return f" · {'' if label == 'report' else f'{label}: '}{_code(page)} in the report artifact"
        relative = Path(os.path.relpath(self.report_dir / page, self.markdown_dir)).as_posix()
        return f" · [{label}]({quote(relative, safe='/.')})"

    def page(self, record: dict[str, Any]) -> str:
        return self.report_page(record.get("page"), "trajectory")

def _item(record: dict[str, Any], links: Links, agents: int) -> str:
    agent = f" · {_cell(record['agent_spec'])}" if agents > 1 else ""
    codes = ", ".join(diagnosis_codes(record)) or "none"
    if record.get("outcome") == "error":
        what = f"error: {_cell((record.get('error') or '').splitlines()[0][:200] if record.get('error') else '')}"
    else:
        what = f"similarity {number(record.get('score'))} · diagnosis {_cell(codes)}"
    return f"- {links.scenario(record)}{agent} — {what}{links.page(record)}"


def _section(title: str, records: list[dict[str, Any]], links: Links, agents: int) -> list[str]:
    if not records:
        return []
    lines = [f"### {title} ({len(records)})", ""]
    lines += [_item(record, links, agents) for record in records[:LISTED]]
    if len(records) > LISTED:
        lines.append(f"- … and {len(records) - LISTED} more (see the report)")
    return [*lines, ""]


def _gate(summary: dict[str, Any], links: Links) -> list[str]:
    """The gate first: what regressed and by how much, then what improved, then what it could not detect."""
    baseline = summary["baseline"]
    if not baseline["gates"]:
        return [f"Baseline {_code(baseline['path'])}: {_cell(gate_note(baseline) or '')}.", ""]
    regressed, improved = gate_findings(summary)
    lines = [f"### {'❌' if regressed else '✅'} {_cell(gate_verdict(summary))}", ""]
    for title, findings in (("Regressed", regressed), ("Improved", improved)):
        if findings:
            lines += [f"**{title}**", ""]
            lines += [f"{'  ' * finding.depth}- {_cell(finding.text)}{links.report_page(finding.page)}"
                      for finding in findings]
            lines.append("")
    gate = baseline.get("gate") or {}
    if gate.get("noisy_tasks"):
        noisy = plural(len(gate["noisy_tasks"]), "task")
        lines += [f"Noisy (fewer passes within chance, not failing the run): {noisy}.", ""]
    if gate.get("notes"):
        lines += [*(f"- cannot detect: {_cell(note)}" for note in gate["notes"]), ""]
    note = gate_note(baseline)
    tests = f" Tests at alpha {gate['alpha']:g}, minimum effect {gate['min_effect']:g}." if gate else ""
    return [*lines, f"Baseline {_code(baseline['path'])}: {change_counts(baseline)}.{tests}"
            + (f" {_cell(note)}." if note else ""), ""]


def markdown_summary(summary: dict[str, Any], report_dir: Path, markdown_dir: Path | None,
                     environ: Mapping[str, str]) -> str:
    """The Markdown text; `markdown_dir` None for a GitHub job summary (links to the job's artifacts)."""
    links = Links(report_dir, markdown_dir, environ)
    records = summary["records"]
    outcomes: dict[str, int] = {}
    for record in records:
        outcomes[record["outcome"]] = outcomes.get(record["outcome"], 0) + 1
    counts = ", ".join(f"{count} {outcome}" for outcome, count in sorted(outcomes.items()))
    agents = len(summary["aggregates"])
    lines = [f"## ToolSandbox: {plural(len(records), 'item')} ({counts or 'none run'})", ""]
    if summary.get("partial"):
        finished = summary["counts"]
        lines += [f"**Partial run**: {finished['finished']} of {finished['expected']} items finished.", ""]
    baseline = summary.get("baseline")
    if baseline:
        lines += _gate(summary, links)
    lines += _tables(summary)
    regressions = [r for r in records if r.get("change") == "regression"]
    failures = [r for r in records if r["outcome"] in ("failed", "error") and r.get("change") != "regression"]
    lines += _section("Regressions (passed in the baseline)", regressions, links, agents)
    lines += _section("Failures and errors", failures, links, agents)
    if links.run and markdown_dir is None:
        lines += [f"Report: the `toolsandbox-report` artifact of [this run]({links.run}).", ""]
    return "\n".join(lines)
