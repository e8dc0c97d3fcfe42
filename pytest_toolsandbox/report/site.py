"""The static report: index.html with the per-category table, one page per category (and per
variant) listing its items, one page per trajectory.

Built from summary.json data only, independent of pytest-html. Pages are self-contained: inline CSS,
no scripts, no network assets; every value from a run is escaped.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from pytest_toolsandbox.report.files import write_atomic
from pytest_toolsandbox.report.record import Record
from pytest_toolsandbox.report.table import agent_label, table_rows
from pytest_toolsandbox.report.trajectory_html import trajectory_fragment
from pytest_toolsandbox.world.trajectory import Trajectory

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;color:#1d2330;margin:1.5rem auto;max-width:75rem;padding:0 1rem}
h1{font-size:1.5rem;margin:.2rem 0 1rem}h2{font-size:1.15rem;margin-top:1.6rem}
table{border-collapse:collapse;margin:.4rem 0 1rem}
th,td{border:1px solid #d5d9e2;padding:.25rem .6rem;text-align:left}
th{background:#eef1f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.kind-all td{font-weight:600}.partial{background:#fff4d6;border:1px solid #e3b341;padding:.5rem .8rem}
.outcome-passed,.outcome-xpassed{color:#1f7a44}.outcome-failed,.outcome-error{color:#b42318;font-weight:600}
.outcome-xfailed,.outcome-skipped{color:#7a6200}nav a{margin-right:1rem}.meta td{font-size:13px}
"""


# For the table when it is embedded in another page (pytest-html's summary).
CATEGORY_TABLE_STYLE = (".ts-categories{border-collapse:collapse;margin:.3rem 0 1rem}"
                        ".ts-categories th,.ts-categories td{border:1px solid #d5d9e2;padding:.2rem .6rem}"
                        ".ts-categories td.num{text-align:right}")


def _page(title: str, body: str, root: str) -> str:
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body><nav><a href='{root}index.html'>pytest-toolsandbox report</a>"
            f"</nav><h1>{escape(title)}</h1>{body}</body></html>\n")


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def group_page_path(kind: str, name: str) -> str:
    """Where the listing of one table row lives, relative to the report directory."""
    return "all.html" if kind == "all" else f"{'categories' if kind == 'category' else 'variants'}/{name}.html"


def category_table(aggregates: dict[str, dict[str, Any]], trials: int, link_root: str | None = "") -> str:
    """The per-category table as HTML (also injected into pytest-html's summary, without links)."""
    blocks = []
    for agent, agent_stats in aggregates.items():
        head = "<th>group</th><th>items</th><th>similarity</th><th>pass rate</th><th>turns</th>"
        head += f"<th>pass^{trials}</th>" if trials > 1 else ""
        head += "<th>errors</th>"
        rows = []
        for kind, name, stats in table_rows(agent_stats):
            label = escape(name if kind == "all" else f"{kind} {name}")
            if link_root is not None:
                label = f"<a href='{link_root}{escape(group_page_path(kind, name))}'>{label}</a>"
            passk = f"<td class='num'>{_fmt(stats['pass_k'].get(str(trials)))}</td>" if trials > 1 else ""
            rows.append(f"<tr class='kind-{kind}'><td>{label}</td><td class='num'>{stats['items']}</td>"
                        f"<td class='num'>{_fmt(stats['mean_similarity'])}</td>"
                        f"<td class='num'>{_pct(stats['pass_rate'])}</td>"
                        f"<td class='num'>{_fmt(stats['mean_turns'], 1)}</td>{passk}"
                        f"<td class='num'>{stats['errors']}</td></tr>")
        blocks.append(f"<h2>{escape(agent_label(agent, agent_stats))}</h2>"
                      f"<table class='ts-categories' data-agent='{escape(agent)}'><tr>{head}</tr>"
                      f"{''.join(rows)}</table>")
    return "".join(blocks)


def _items_table(records: list[Record], root: str) -> str:
    rows = []
    for record in records:
        name = escape(record["scenario"])
        if record.get("page"):
            name = f"<a href='{root}{escape(record['page'])}'>{name}</a>"
        codes = ", ".join(finding["code"] for finding in record.get("diagnosis") or [])
        rows.append(f"<tr><td>{name}<br><small>{escape(record['path'])}</small></td>"
                    f"<td>{escape(record['variant'])}</td><td class='num'>{record['trial']}</td>"
                    f"<td>{escape(str(record['agent']))}</td>"
                    f"<td class='outcome-{escape(record['outcome'])}'>{escape(record['outcome'])}</td>"
                    f"<td class='num'>{_fmt(record.get('score'))}</td>"
                    f"<td class='num'>{record.get('turn_count') if record.get('turn_count') is not None else '—'}</td>"
                    f"<td>{escape(codes)}</td><td>{escape(record.get('change') or '')}</td></tr>")
    return ("<table class='ts-items'><tr><th>scenario</th><th>variant</th><th>trial</th><th>agent</th>"
            "<th>outcome</th><th>similarity</th><th>turns</th><th>diagnosis</th><th>baseline</th></tr>"
            f"{''.join(rows)}</table>")


def _run_facts(summary: dict[str, Any]) -> str:
    run, counts = summary["run"], summary["counts"]
    facts = {
        "agents": ", ".join(run.get("agents", [])), "users": ", ".join(run.get("users", [])),
        "variants": ", ".join(run.get("options", {}).get("augment", [])),
        "trials": run.get("options", {}).get("trials"),
        "git": f"{run.get('git', {}).get('sha') or '—'}{' (modified)' if run.get('git', {}).get('dirty') else ''}",
        "started": run.get("started"),
        "versions": ", ".join(f"{name} {version}" for name, version in run.get("versions", {}).items()),
        "items": ", ".join(f"{value} {name}" for name, value in counts.items() if value),
    }
    return "<table class='meta'>" + "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
                                            for k, v in facts.items()) + "</table>"


def _baseline_section(summary: dict[str, Any]) -> str:
    baseline = summary.get("baseline")
    if not baseline:
        return ""
    parts = [f"<h2>Baseline {escape(baseline['path'])}</h2>"]
    for change in ("regression", "improvement", "known_failure"):
        ids = baseline.get(change, [])
        items = "".join(f"<li>{escape(nodeid)}</li>" for nodeid in ids) or "<li>none</li>"
        parts.append(f"<h3>{escape(change.replace('_', ' '))}s ({len(ids)})</h3><ul>{items}</ul>")
    return "".join(parts)


def index_page(summary: dict[str, Any]) -> str:
    trials = summary["run"].get("options", {}).get("trials", 1)
    banner = ""
    if summary["partial"]:
        counts = summary["counts"]
        banner = (f"<p class='partial'><b>Partial run</b>: {counts['finished']} of {counts['expected']} "
                  "items finished (interrupted, stopped early or a worker crashed).</p>")
    return _page("ToolSandbox results", banner + _run_facts(summary)
                 + category_table(summary["aggregates"], trials) + _baseline_section(summary), "")


def write_site(directory: Path, summary: dict[str, Any]) -> Path:
    """index.html plus one listing page per row of the category table."""
    records = summary["records"]
    pages: dict[str, tuple[str, list[Record]]] = {"all.html": ("All items", records)}
    for agent_stats in summary["aggregates"].values():
        for kind, name, _ in table_rows(agent_stats):
            if kind == "category":
                pages[group_page_path(kind, name)] = (f"Category {name}",
                                                      [r for r in records if name in r["categories"]])
            elif kind == "variant":
                pages[group_page_path(kind, name)] = (f"Variant {name}", [r for r in records if r["variant"] == name])
    for relative, (title, members) in pages.items():
        root = "../" * relative.count("/")
        write_atomic(directory / relative, _page(title, _items_table(members, root), root))
    index = directory / "index.html"
    write_atomic(index, index_page(summary))
    return index


def write_trajectory_page(directory: Path, relative: str, trajectory: Trajectory, record: Record) -> None:
    root = "../" * relative.count("/")
    title = f"{trajectory.scenario} · {trajectory.variant} · trial {record.get('trial', 1)}"
    write_atomic(directory / relative, _page(title, trajectory_fragment(trajectory, record), root))
