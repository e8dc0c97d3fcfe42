"""The static report: index.html (run facts, leaderboard, heatmaps, pass^k curve), one listing
page per category and per variant plus all.html (sortable, filterable), one page per trajectory,
and comparison.html when the run had a baseline.

Built from summary.json data only, independent of pytest-html. Pages are self-contained: inline CSS,
inline SVG charts, a small inline script on listings, no network assets; every value from a run is
escaped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_toolsandbox.basics.vocabulary import INDEX_FILE
from pytest_toolsandbox.report.pages.escaping import escape
from pytest_toolsandbox.report.pages.leaderboard import group_page_path, heatmaps, leaderboard, pass_k_figure, run_facts
from pytest_toolsandbox.report.pages.listing import items_table, listing_script
from pytest_toolsandbox.report.pages.page import number, page, percent
from pytest_toolsandbox.report.pages.trajectory_html import PageContext, trajectory_fragment
from pytest_toolsandbox.report.results.record import Record
from pytest_toolsandbox.report.text.table import agent_label, table_rows
from pytest_toolsandbox.report.writing.files import write_atomic
from pytest_toolsandbox.world.trajectory import Trajectory

COMPARISON_PAGE = "comparison.html"

# For the table when it is embedded in another page (pytest-html's summary).
CATEGORY_TABLE_STYLE = (".ts-categories{border-collapse:collapse;margin:.3rem 0 1rem}"
                        ".ts-categories th,.ts-categories td{border:1px solid #d5d9e2;padding:.2rem .6rem}"
                        ".ts-categories td.num{text-align:right}")


def category_table(aggregates: dict[str, dict[str, Any]], trials: int, link_root: str | None = "") -> str:
    """The per-category table as HTML, one per agent (pytest-html's summary, without links)."""
    blocks = []
    for agent, agent_stats in aggregates.items():
        head = "<th>group</th><th>items</th><th>similarity</th><th>pass rate</th><th>turns</th>"
        head += f"<th>pass^{trials}</th>" if trials > 1 else ""
        with_guard = bool(agent_stats["all"].get("user_sim_checked"))
        head += "<th>user suspect</th>" if with_guard else ""
        head += "<th>errors</th>"
        rows = []
        for kind, name, stats in table_rows(agent_stats):
            label = escape(name if kind == "all" else f"{kind} {name}")
            if link_root is not None:
                label = f"<a href='{link_root}{escape(group_page_path(kind, name))}'>{label}</a>"
            extra = f"<td class='num'>{number(stats['pass_k'].get(str(trials)))}</td>" if trials > 1 else ""
            if with_guard:
                extra += f"<td class='num'>{stats.get('user_sim_suspect', 0)}</td>"
            rows.append(f"<tr class='kind-{kind}'><td>{label}</td><td class='num'>{stats['items']}</td>"
                        f"<td class='num'>{number(stats['mean_similarity'])}</td>"
                        f"<td class='num'>{percent(stats['pass_rate'])}</td>"
                        f"<td class='num'>{number(stats['mean_turns'], 1)}</td>{extra}"
                        f"<td class='num'>{stats['errors']}</td></tr>")
        blocks.append(f"<h2>{escape(agent_label(agent, agent_stats))}</h2>"
                      f"<table class='ts-categories' data-agent='{escape(agent)}'><tr>{head}</tr>"
                      f"{''.join(rows)}</table>")
    return "".join(blocks)


def _baseline_section(summary: dict[str, Any]) -> str:
    baseline = summary.get("baseline")
    if not baseline:
        return ""
    from pytest_toolsandbox.report.ci.gate_text import change_counts, gate_note

    note = gate_note(baseline)
    return (f"<h2>Baseline</h2><p>Compared with <code>{escape(baseline['path'])}</code>: "
            f"{escape(change_counts(baseline))}. "
            f"<a href='{COMPARISON_PAGE}'>Comparison page</a> (old → new scores, per-category deltas).</p>"
            + (f"<p class='count'>{escape(note)}.</p>" if note else ""))


def index_page(summary: dict[str, Any]) -> str:
    banner = ""
    if summary["partial"]:
        counts = summary["counts"]
        why = escape(summary.get("stop_reason") or "interrupted, stopped early or a worker crashed")
        banner = (f"<p class='partial'><b>Partial run</b>: {counts['finished']} of {counts['expected']} "
                  f"items finished ({why}).</p>")
    figures = heatmaps(summary)
    pass_k = pass_k_figure(summary)
    charts = ""
    if figures:
        charts += f"<h2 id='charts'>Category × variant</h2><div class='charts'>{''.join(figures)}</div>"
    if pass_k:
        charts += f"<h2>Reliability over repeated trials</h2><div class='charts'>{pass_k}</div>"
    paper = ("<p>A run of the imported reference benchmark: <a href='paper.html'>our rows next to the paper's "
             "Tables 5 and 11</a>.</p>" if summary.get("run", {}).get("imported_suite") and summary["records"] else "")
    return page("ToolSandbox results", banner + paper + run_facts(summary) + leaderboard(summary) + charts
                + _baseline_section(summary), "")


def listing_pages(summary: dict[str, Any]) -> dict[str, tuple[str, list[Record]]]:
    """Relative path → (title, records) of every listing: all items, each category, each variant."""
    records = summary["records"]
    pages: dict[str, tuple[str, list[Record]]] = {"all.html": ("All items", records)}
    for agent_stats in summary["aggregates"].values():
        for kind, name, _ in table_rows(agent_stats):
            if kind == "category":
                pages[group_page_path(kind, name)] = (f"Category {name}",
                                                      [r for r in records if name in r["categories"]])
            elif kind == "variant":
                pages[group_page_path(kind, name)] = (f"Variant {name}", [r for r in records if r["variant"] == name])
    return pages


def write_site(directory: Path, summary: dict[str, Any],
               write: Callable[[Path, str], None] = write_atomic) -> Path:
    """index.html plus one listing page per row of the leaderboard, and paper.html for a run of the
    imported reference benchmark, each through `write` (the run's writer goes on past a file that does
    not fit)."""
    index = directory / INDEX_FILE
    write(index, index_page(summary))
    for relative, (title, members) in listing_pages(summary).items():
        root = "../" * relative.count("/")
        write(directory / relative, page(title, items_table(members, root), root, listing_script()))
    if summary.get("run", {}).get("imported_suite") and summary["records"]:
        from pytest_toolsandbox.report.text.paper import PAPER_PAGE, PAPER_STYLE, html_section

        write(directory / PAPER_PAGE, page("Next to the ToolSandbox paper", f"<style>{PAPER_STYLE}</style>"
                                           + html_section(summary), ""))
    return index


def write_trajectory_page(directory: Path, relative: str, trajectory: Trajectory, record: Record,
                          context: PageContext | None = None) -> None:
    root = "../" * relative.count("/")
    title = f"{trajectory.scenario} · {trajectory.variant} · trial {record.get('trial', 1)}"
    write_atomic(directory / relative, page(title, trajectory_fragment(trajectory, record, context, root), root))
