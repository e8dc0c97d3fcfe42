"""The per-category table printed at the end of a run (after the paper's Table 5).

Rows are the whole run, then each scenario category, then each augmentation variant; columns are
mean similarity, pass rate, mean turn count, pass^k (k = trials, when > 1), tokens per item (when a
role reported usage), episodes the simulator guard flagged (with a model user simulator) and
infrastructure errors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def agent_label(agent: str, agent_stats: dict[str, Any]) -> str:
    """`agent SPEC`, plus the agents' own names when they differ from the spec (e.g. a conftest override)."""
    names = [name for name in agent_stats.get("names", []) if name != agent]
    return f"agent {agent}" + (f" ({', '.join(names)})" if names else "")


def _tokens_per_item(stats: dict[str, Any]) -> float | None:
    """Input plus output tokens of agent and user, per item of the group; None when nothing reported usage."""
    tokens = (stats.get("usage") or {}).get("tokens") or {}
    roles = [counts for counts in tokens.values() if isinstance(counts, dict) and counts.get("requests")]
    if not roles or not stats["items"]:
        return None
    return sum(counts.get("input_tokens", 0) + counts.get("output_tokens", 0) for counts in roles) / stats["items"]


def table_rows(agent_stats: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(kind, name, stats) in display order: all, categories, variants."""
    yield "all", "all", agent_stats["all"]
    for name, stats in agent_stats["categories"].items():
        yield "category", name, stats
    for name, stats in agent_stats["variants"].items():
        yield "variant", name, stats


def format_table(aggregates: dict[str, dict[str, Any]], trials: int) -> list[str]:
    """Text lines of one table per agent."""
    headers = ["", "items", "similarity", "pass rate", "turns"]
    if trials > 1:
        headers.append(f"pass^{trials}")
    lines: list[str] = []
    for agent, agent_stats in aggregates.items():
        with_tokens = _tokens_per_item(agent_stats["all"]) is not None
        with_guard = bool(agent_stats["all"].get("user_sim_checked"))
        agent_headers = [*headers, *(["tokens/item"] if with_tokens else []),
                         *(["user suspect"] if with_guard else []), "errors"]
        rows = []
        for kind, name, stats in table_rows(agent_stats):
            label = name if kind == "all" else f"{kind} {name}"
            row = [label, str(stats["items"]), _number(stats["mean_similarity"]), _percent(stats["pass_rate"]),
                   _number(stats["mean_turns"], 1)]
            if trials > 1:
                row.append(_number(stats["pass_k"].get(str(trials))))
            if with_tokens:
                row.append(_number(_tokens_per_item(stats), 0))
            if with_guard:
                row.append(str(stats.get("user_sim_suspect", 0)))
            row.append(str(stats["errors"]))
            rows.append(row)
        widths = [max(len(row[i]) for row in [agent_headers, *rows]) for i in range(len(agent_headers))]
        lines.append(agent_label(agent, agent_stats))
        for row in [agent_headers, *rows]:
            cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:],
                                                                                           strict=True)]
            lines.append("  ".join(cells).rstrip())
    return lines
