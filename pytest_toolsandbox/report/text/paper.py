"""Our results in the layout of the ToolSandbox paper's Table 5 (similarity × 100) and Table 11 (turn
counts), next to the paper's 13 rows.

The paper's rows are shipped as data (`report/data/toolsandbox_paper/`, with the citation). Each of
our cells carries its population — the items its mean is over and the augmentation variants they
come from — and a column that cannot be set against the paper's is marked with the reason: variants
not run (the paper's `avg` and category columns average all eight), a scripted user (it answers no
question, so `multiple_user_turn` is a floor), other rules or prompts than the paper's.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from pytest_toolsandbox.basics.vocabulary import CATEGORIES, VARIANT_CATEGORIES
from pytest_toolsandbox.report.results.record import Record, agent_key
from pytest_toolsandbox.report.results.summary import group_stats

CITATION = ('Lu et al., "ToolSandbox: A Stateful, Conversational, Interactive Evaluation Benchmark for LLM Tool '
            'Use Capabilities", arXiv:2408.04682 (2024)')
TABLES = {"similarity": ("Table 5", "average similarity × 100", "table5_similarity.csv"),
          "turns": ("Table 11", "average turn count", "table11_turn_count.csv")}
VARIANT_COLUMNS = {"base": "0_distraction_tools", **{name: name for name in VARIANT_CATEGORIES if name != "base"}}
"""Our variant → the paper's augmentation column."""
COLUMNS = ("avg", *CATEGORIES, *VARIANT_COLUMNS.values())
SHORT = {"avg": "avg", "single_tool_call": "STC", "multiple_tool_call": "MTC", "single_user_turn": "SUT",
         "multiple_user_turn": "MUT", "state_dependency": "SD", "canonicalization": "Can",
         "insufficient_information": "II", "0_distraction_tools": "0dt", "3_distraction_tools": "3dt",
         "10_distraction_tools": "10dt", "all_tools": "all", "tool_name_scrambled": "name",
         "tool_description_scrambled": "desc", "arg_description_scrambled": "argd", "arg_type_scrambled": "argt"}
PAPER_BASES = 129


def paper_rows(table: str) -> list[tuple[str, dict[str, float]]]:
    """The paper's rows of `table` ("similarity" or "turns"): (model, {column: value})."""
    text = resources.files("pytest_toolsandbox.report").joinpath("data", "toolsandbox_paper",
                                                                  TABLES[table][2]).read_text(encoding="utf-8")
    return [(row["model"], {column: float(row[column]) for column in COLUMNS})
            for row in csv.DictReader(io.StringIO(text))]


@dataclass(frozen=True)
class Cell:
    """One of our values with the population its mean is over."""

    similarity: float | None
    turns: float | None
    items: int
    variants: tuple[str, ...]


@dataclass
class OurRow:
    """One agent of one run, in the paper's columns."""

    label: str
    cells: dict[str, Cell]
    notes: list[str] = field(default_factory=list)
    """Facts about the whole row (user, rules, prompts, bases)."""
    not_comparable: dict[str, list[str]] = field(default_factory=dict)
    """Column → why it cannot be set against the paper's column."""

    def mark(self, columns: Sequence[str], why: str) -> None:
        for column in columns:
            self.not_comparable.setdefault(column, []).append(why)

    def reasons(self) -> dict[str, list[str]]:
        """Each reason with the (short names of the) columns it applies to."""
        found: dict[str, list[str]] = {}
        for column in COLUMNS:
            for why in self.not_comparable.get(column, []):
                found.setdefault(why, []).append(SHORT[column])
        return found


def _members(records: Sequence[Record], column: str) -> list[Record]:
    if column == "avg":
        return list(records)
    if column in CATEGORIES:
        return [record for record in records if column in record["categories"]]
    variant = next(name for name, paper in VARIANT_COLUMNS.items() if paper == column)
    return [record for record in records if record["variant"] == variant]


def _cell(records: Sequence[Record], trials: int, rules: str) -> Cell:
    stats = group_stats(records, trials, rules)
    similarity = stats["mean_similarity"]
    return Cell(similarity=None if similarity is None else 100 * similarity, turns=stats["mean_turns"],
                items=stats["scored"], variants=tuple(_ordered_variants({r["variant"] for r in records})))


def _ordered_variants(variants: set[str]) -> list[str]:
    return [name for name in VARIANT_COLUMNS if name in variants] + sorted(variants - set(VARIANT_COLUMNS))


def our_rows(summary: dict[str, Any]) -> list[OurRow]:
    """One row per agent of the summary, with its notes and the columns that are not comparable."""
    options = summary.get("run", {}).get("options", {})
    rules, prompts, trials = options.get("rules", "ours"), options.get("prompts", "ours"), int(options.get("trials", 1))
    rows = []
    for agent in sorted({agent_key(record) for record in summary["records"]}):
        records = [record for record in summary["records"] if agent_key(record) == agent]
        models = sorted({str(record.get("agent_model") or record["agent"]) for record in records})
        row = OurRow(label=f"ours: {', '.join(models)}", cells={c: _cell(_members(records, c), trials, rules)
                                                                 for c in COLUMNS})
        _explain(row, records, rules, prompts, trials)
        rows.append(row)
    return rows


def _explain(row: OurRow, records: Sequence[Record], rules: str, prompts: str, trials: int) -> None:
    variants = _ordered_variants({record["variant"] for record in records})
    bases = len({record["path"] for record in records})
    row.notes.append(f"{bases} of the paper's {PAPER_BASES} bases, variants: {', '.join(variants)}"
                     + (f", {trials} trials each" if trials > 1 else ""))
    if len(variants) < len(VARIANT_COLUMNS):
        why = (f"averages only {', '.join(variants)} (the paper's averages all 8 augmentations; "
               "set the 0_distraction_tools column against a base-only run)")
        row.mark(("avg", *CATEGORIES), why)
    row.mark([column for variant, column in VARIANT_COLUMNS.items() if variant not in variants], "not run")
    users = sorted({str(record.get("user_model") or record.get("user") or "") for record in records})
    row.notes.append(f"user simulator: {', '.join(users)} (the paper's: GPT-4o-2024-05-13)")
    if any(record.get("user_model") is None for record in records):
        row.mark(["multiple_user_turn"], "scripted user: it answers no question the agent asks, so a base that "
                 "needs the user's details is a floor")
    if rules != "reference":
        row.notes.append("our rules, not the paper's: a call to a tool not offered is answered, not a crash "
                         "scored 0; errored items are left out of the means (run with --rules reference)")
        row.mark(COLUMNS, "other rules than the paper's")
    if prompts != "reference":
        row.notes.append("our prompts, not the paper's (run with --prompts reference)")
        row.mark(COLUMNS, "other prompts than the paper's")
    errors = sum(record["outcome"] == "error" for record in records)
    if errors:
        row.notes.append(f"{errors} errored items " + ("counted as 0 (reference rules)" if rules == "reference"
                                                        else "left out of the means"))


# ------------------------------------------------------------------------------------------------ text


def _number(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def text_table(summaries: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """Both tables as text: the paper's rows, then ours (marked * where not comparable) with their item
    counts, the notes, the legend and the citation."""
    rows = [(name, row) for name, summary in summaries for row in our_rows(summary)]
    width = max([28, *(len(row.label) for _, row in rows)])
    head = f"{'model':<{width}}" + "".join(f"{SHORT[column]:>7}" for column in COLUMNS)
    lines = []
    for table, (title, measure, _) in TABLES.items():
        lines += [f"{title} — {measure}", head]
        lines += [f"{model:<{width}}" + "".join(f"{value:>7.1f}" for value in values.values())
                  for model, values in paper_rows(table)]
        for _, row in rows:
            cells = []
            for column in COLUMNS:
                cell = row.cells[column]
                value = _number(cell.similarity if table == "similarity" else cell.turns)
                cells.append(f"{value + ('*' if column in row.not_comparable else ' '):>7}")
            lines.append(f"{row.label:<{width}}" + "".join(cells))
            lines.append(f"{'  items':<{width}}" + "".join(f"{row.cells[column].items:>6} " for column in COLUMNS))
        lines.append("")
    for name, row in rows:
        lines.append(f"{row.label} ({name}):")
        lines += [f"  {note}" for note in row.notes]
        lines += [f"  * {', '.join(columns)}: {why}" for why, columns in row.reasons().items()]
    lines.append("columns: " + ", ".join(f"{SHORT[column]} = {column}" for column in COLUMNS))
    lines.append(f"paper rows: {CITATION}, Tables 5 and 11")
    return "\n".join(line.rstrip() for line in lines) + "\n"


# ------------------------------------------------------------------------------------------------ HTML


def html_section(summary: dict[str, Any]) -> str:
    """The two tables as an HTML fragment (every value from a run escaped)."""
    from pytest_toolsandbox.report.pages.escaping import escape

    rows = our_rows(summary)
    head = "<tr><th>model</th>" + "".join(f"<th title='{escape(c)}'>{escape(SHORT[c])}</th>" for c in COLUMNS) + "</tr>"
    body = []
    for table, (title, measure, _) in TABLES.items():
        lines = [f"<tr><td>{escape(model)}</td>" + "".join(f"<td class='num'>{value:.1f}</td>" for value in
                                                              values.values()) + "</tr>"
                 for model, values in paper_rows(table)]
        for row in rows:
            cells = []
            for column in COLUMNS:
                cell = row.cells[column]
                why = "; ".join(row.not_comparable.get(column, []))
                population = f"{cell.items} items, variants: {', '.join(cell.variants) or 'none'}"
                tip = population + (f" — not comparable: {why}" if why else "")
                value = _number(cell.similarity if table == "similarity" else cell.turns)
                cells.append(f"<td class='num ours{' nc' if why else ''}' title='{escape(tip)}'>{escape(value)}"
                             f"{'*' if why else ''}<small>{cell.items}</small></td>")
            lines.append(f"<tr class='ours'><td>{escape(row.label)}</td>{''.join(cells)}</tr>")
        body.append(f"<h2>{escape(title)}: {escape(measure)}</h2><table class='paper'>{head}{''.join(lines)}</table>")
    notes = []
    for row in rows:
        items = [escape(note) for note in row.notes]
        items += [f"* {escape(', '.join(columns))}: {escape(why)}" for why, columns in row.reasons().items()]
        notes.append(f"<h3>{escape(row.label)}</h3><ul>{''.join(f'<li>{item}</li>' for item in items)}</ul>")
    legend = ", ".join(f"{escape(SHORT[column])} = {escape(column)}" for column in COLUMNS)
    return (f"{''.join(body)}<p class='count'>Our rows: the small number under a value is the items its mean "
            "is over (hover for the variants); * marks a column that cannot be set against the paper's.</p>"
            f"{''.join(notes)}<p class='count'>Columns: {legend}.</p>"
            f"<p class='count'>Paper rows: {escape(CITATION)}, Tables 5 and 11.</p>")


PAPER_PAGE = "paper.html"
PAPER_STYLE = ("table.paper{border-collapse:collapse;font-size:.85rem}table.paper td,table.paper th{border:1px "
               "solid #d5d9e2;padding:.15rem .35rem}table.paper td.num{text-align:right}tr.ours td{background:"
               "#eef4ff;font-weight:600}td.nc{color:#777;font-style:italic}td small{display:block;font-size:.7rem;"
               "font-weight:400;color:#667}")


# ------------------------------------------------------------------------------------------ shipping

KEPT_FIELDS = ("id", "scenario", "path", "categories", "variant", "trial", "agent", "agent_spec", "user",
               "agent_model", "user_model", "outcome", "score", "passed", "milestone_similarity",
               "minefield_similarity", "turn_count", "max_messages", "ended_by", "tokens")
MACHINE_OPTIONS = ("report_dir", "cassette_dir", "baseline", "price_table", "resume", "scenarios")
"""Options naming paths on the recording machine: left out of shipped results."""


def _verdict(verdict: dict[str, Any] | None) -> dict[str, Any] | None:
    """Whether each milestone was reached, and where; without the texts that quote a scenario."""
    if verdict is None:
        return None
    answer, crash = verdict.get("final_answer"), verdict.get("crash")
    # a crash reason quotes the agent's call, which may quote the scenario: only where it happened is kept
    return {"passed": verdict["passed"], "fired": verdict.get("fired", []),
            "crash": crash.partition(":")[0] if isinstance(crash, str) else None,
            "milestones": [{key: milestone.get(key) for key in ("name", "reached", "index")}
                           for milestone in verdict.get("milestones", [])],
            "final_answer": {key: answer.get(key) for key in ("held", "index")} if isinstance(answer, dict) else None}


def shippable(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary reduced to scores and verdicts per item: no prompt, goal, expected target, message or
    error text (imported scenarios hold the reference's text), still readable by every summary reader."""
    run = summary.get("run", {})
    options = {key: value for key, value in run.get("options", {}).items() if key not in MACHINE_OPTIONS}
    records = [{**{key: record.get(key) for key in KEPT_FIELDS}, "verdict": _verdict(record.get("verdict"))}
               for record in summary["records"]]
    return {"format": summary.get("format", 1), "partial": summary.get("partial", False),
            "run": {**{key: run.get(key) for key in ("started", "finished", "duration", "agents", "users", "versions")},
                    "options": options},
            "counts": summary.get("counts", {}), "aggregates": summary.get("aggregates", {}), "records": records}
