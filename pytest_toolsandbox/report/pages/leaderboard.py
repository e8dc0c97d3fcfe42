"""The index page's content: run facts, the leaderboard, the heatmaps and the pass^k curve.

The leaderboard follows the tau-bench and BFCL tables: agents as columns, the whole run, each
category and each variant as rows; a cell shows pass rate, mean similarity, mean turns, errors, and
tokens and cost when the run knows them; the best agent of each row is outlined. Charts come from
report.charts (matplotlib, inline SVG).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_toolsandbox.report.pages import charts
from pytest_toolsandbox.report.pages.escaping import escape
from pytest_toolsandbox.report.pages.page import number, percent
from pytest_toolsandbox.report.results.models import models_text
from pytest_toolsandbox.report.results.record import SCORED_OUTCOMES, Record, agent_key
from pytest_toolsandbox.report.results.usage import mean_tokens, total_cost, usage_known
from pytest_toolsandbox.report.text.table import agent_label
from pytest_toolsandbox.scenario.models import CATEGORIES
from pytest_toolsandbox.tools.augment import VARIANTS


def group_page_path(kind: str, name: str) -> str:
    """Where the listing of one table row lives, relative to the report directory."""
    return "all.html" if kind == "all" else f"{'categories' if kind == 'category' else 'variants'}/{name}.html"


def _ordered(names: set[str], canonical: Sequence[str]) -> list[str]:
    return [name for name in canonical if name in names] + sorted(names - set(canonical))


def board_rows(aggregates: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """(kind, name) of every row any agent has: all, then categories, then variants."""
    categories = {name for stats in aggregates.values() for name in stats["categories"]}
    variants = {name for stats in aggregates.values() for name in stats["variants"]}
    return ([("all", "all")] + [("category", name) for name in _ordered(categories, CATEGORIES)]
            + [("variant", name) for name in _ordered(variants, list(VARIANTS))])


def _stats(agent_stats: dict[str, Any], kind: str, name: str) -> dict[str, Any] | None:
    if kind == "all":
        return agent_stats["all"]
    return agent_stats["categories" if kind == "category" else "variants"].get(name)


def _members(records: list[Record], kind: str, name: str) -> list[Record]:
    if kind == "all":
        return records
    if kind == "category":
        return [record for record in records if name in record["categories"]]
    return [record for record in records if record["variant"] == name]


def _rank(stats: dict[str, Any] | None) -> tuple[float, float] | None:
    if not stats or stats.get("pass_rate") is None:
        return None
    return stats["pass_rate"], stats.get("mean_similarity") or 0.0


def leaderboard(summary: dict[str, Any]) -> str:
    """Agents as columns, groups as rows; the best agent of each row outlined (when several ran)."""
    aggregates = summary["aggregates"]
    agents = list(aggregates)
    by_agent = {agent: [r for r in summary["records"] if agent_key(r) == agent] for agent in agents}
    tokens_known, cost_known = usage_known(summary["records"])
    trials = summary["run"].get("options", {}).get("trials", 1)
    head = "".join(f"<th data-agent='{escape(agent)}'>{escape(agent_label(agent, aggregates[agent]))}</th>"
                   for agent in agents)
    rows = []
    for kind, name in board_rows(aggregates):
        ranks = {agent: _rank(_stats(aggregates[agent], kind, name)) for agent in agents}
        known = [rank for rank in ranks.values() if rank is not None]
        best = max(known) if len(agents) > 1 and known else None
        label = escape(name if kind == "all" else f"{kind} {name}")
        cells = [f"<td><a href='{escape(group_page_path(kind, name))}'>{label}</a></td>"]
        for agent in agents:
            stats = _stats(aggregates[agent], kind, name)
            if stats is None:
                cells.append("<td class='cell'>—</td>")
                continue
            members = _members(by_agent[agent], kind, name)
            parts = [f"sim {number(stats['mean_similarity'])}", f"turns {number(stats['mean_turns'], 1)}"]
            if trials > 1 and stats.get("pass_k"):
                parts.append(f"pass^{trials} {number(stats['pass_k'].get(str(trials)))}")
            if tokens_known:
                parts.append(f"tokens {number(mean_tokens(members), 0)}/item")
            if cost_known:
                cost = total_cost(members)
                parts.append(f"cost {'—' if cost is None else f'${cost:.4f}'}")
            if stats.get("user_sim_checked"):
                parts.append(f"{stats.get('user_sim_suspect', 0)} user-sim suspect")
            parts.append(f"{stats['errors']} err · {stats['items']} items")
            classes = "cell best" if best is not None and ranks[agent] == best else "cell"
            rate = stats["pass_rate"]
            tint = "" if rate is None else f" style='background:hsl({round(120 * rate)},55%,94%)'"
            cells.append(f"<td class='{classes}'{tint} data-agent='{escape(agent)}' data-pass-rate="
                         f"'{'' if rate is None else rate}'><a class='rate' href='{escape(group_page_path(kind, name))}"
                         f"#agent={escape(agent.lower())}'>{percent(rate)}</a>"
                         f"<span class='sub'>{escape(' · '.join(parts))}</span></td>")
        rows.append(f"<tr class='kind-{kind}'>{''.join(cells)}</tr>")
    note = ("<p class='count'>Pass rate (share of scored items that passed: every milestone reached and no "
            "minefield fired, or the scenario's threshold met); ★ best agent of the row.</p>")
    return (f"<h2>Leaderboard</h2>{note}<table class='board'><thead><tr><th>group</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _pass_rate(records: list[Record]) -> float | None:
    scored = [r for r in records if r["outcome"] in SCORED_OUTCOMES and r.get("score") is not None]
    return sum(bool(r["passed"]) for r in scored) / len(scored) if scored else None


def heatmaps(summary: dict[str, Any]) -> list[str]:
    """One category × variant pass-rate heatmap per agent, as inline SVG figures."""
    figures = []
    for position, (agent, agent_stats) in enumerate(summary["aggregates"].items()):
        records = [r for r in summary["records"] if agent_key(r) == agent]
        categories, variants = list(agent_stats["categories"]), list(agent_stats["variants"])
        if not categories or not variants:
            continue
        values = [[_pass_rate([r for r in records if c in r["categories"] and r["variant"] == v]) for v in variants]
                  for c in categories]
        svg = charts.heatmap(categories, variants, values, f"{agent_label(agent, agent_stats)}: pass rate",
                             f"heatmap-{position}")
        figures.append(f"<figure class='heatmap' data-agent='{escape(agent)}'>{svg}</figure>")
    return figures


def pass_k_figure(summary: dict[str, Any]) -> str:
    """pass^k for every k the summary holds, one line per agent (only when trials > 1)."""
    curves = {}
    for agent, agent_stats in summary["aggregates"].items():
        pass_k = agent_stats["all"].get("pass_k") or {}
        if pass_k:
            curves[agent_label(agent, agent_stats)] = {int(k): value for k, value in pass_k.items()}
    if not curves:
        return ""
    return f"<figure class='pass-k'>{charts.pass_k_curve(curves, 'pass^k over all items', 'pass-k')}</figure>"


def _git(run: dict[str, Any]) -> str:
    git = run.get("git") or {}
    if not git.get("sha"):
        return "not a git checkout"
    state = {True: "dirty (uncommitted changes to tracked files)", False: "clean", None: "state unknown"}
    return f"{git['sha']} · {state[git.get('dirty')]}"


def run_facts(summary: dict[str, Any]) -> str:
    """What ran, when, for how long, from which commit, with which versions."""
    run, counts = summary["run"], summary["counts"]
    options = run.get("options", {})
    duration = run.get("duration")
    facts = {
        "agents": ", ".join(run.get("agents", [])), "users": ", ".join(run.get("users", [])),
        "models": models_text(run.get("models")),
        "variants": ", ".join(options.get("augment", [])), "trials": options.get("trials"),
        "started": run.get("started"), "finished": run.get("finished"),
        "duration": "—" if duration is None else f"{duration:.1f} s",
        "workers": run.get("workers") or "none (in-process)",
        "git": _git(run),
        "items": ", ".join(f"{value} {name}" for name, value in counts.items() if value),
        "baseline": (summary.get("baseline") or {}).get("path"),
        "versions": ", ".join(f"{name} {version}" for name, version in run.get("versions", {}).items()),
    }
    return "<dl class='meta'>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>"
                                         for k, v in facts.items() if v not in (None, "")) + "</dl>"
