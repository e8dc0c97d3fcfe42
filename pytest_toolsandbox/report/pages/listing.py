"""Listing pages: one row per item, sortable columns and a client-side filter.

The filter (outcome, category, variant, agent, diagnosis code, free text) and the column sort are a
small plain script embedded in the page (assets/listing.js), so a listing works from file:// with
no network. Each row carries its facets as data-* attributes; the script only hides and reorders
rows, it never builds markup from run data.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from pytest_toolsandbox.report.pages.escaping import escape, relative_href
from pytest_toolsandbox.report.pages.page import number
from pytest_toolsandbox.report.results.record import Record
from pytest_toolsandbox.report.results.usage import record_cost, record_tokens, usage_known
from pytest_toolsandbox.report.text.codes import legend_html

FACETS = ("outcome", "category", "variant", "agent", "code")
_FACET_LABELS = {"outcome": "outcome", "category": "category", "variant": "variant", "agent": "agent",
                 "code": "diagnosis"}


@cache
def listing_script() -> str:
    return resources.files("pytest_toolsandbox.report.pages").joinpath("assets/listing.js").read_text(encoding="utf-8")


def _facets(record: Record) -> dict[str, list[str]]:
    return {
        "outcome": [record["outcome"]],
        "category": list(record["categories"]),
        "variant": [record["variant"]],
        "agent": [str(record.get("agent_spec") or record["agent"])],
        "code": [finding["code"] for finding in record.get("diagnosis") or []],
    }


def _filters(records: list[Record]) -> str:
    options: dict[str, list[str]] = {facet: [] for facet in FACETS}
    for record in records:
        for facet, values in _facets(record).items():
            options[facet].extend(value for value in values if value not in options[facet])
    controls = []
    for facet in FACETS:
        choices = "".join(f"<option value='{escape(value.lower())}'>{escape(value)}</option>"
                          for value in sorted(options[facet]))
        controls.append(f"<label>{_FACET_LABELS[facet]} <select data-filter='{facet}'><option value=''>any</option>"
                        f"{choices}</select></label>")
    controls.append("<label>text <input type='search' data-filter='text' placeholder='scenario, path, …'></label>")
    return f"<div class='filters'>{''.join(controls)}<span class='count'>{len(records)} items</span></div>"


def items_table(records: list[Record], root: str) -> str:
    """The filter bar and the item table (tokens and cost columns only when some item knows them)."""
    tokens_known, cost_known = usage_known(records)
    head = ["scenario", "variant", "trial", "agent", "outcome", "similarity", "turns"]
    head += ["tokens"] * tokens_known + ["cost"] * cost_known
    compared = any(record.get("change") for record in records)
    head += ["time (s)", "diagnosis"] + ["baseline"] * compared
    rows = []
    for record in records:
        name = escape(record["scenario"])
        if (href := relative_href(record.get("page"))) is not None:
            name = f"<a href='{root}{href}'>{name}</a>"
        facets = " ".join(f"data-{facet}='{escape('|'.join(values))}'" for facet, values in _facets(record).items())
        score, turns, duration = record.get("score"), record.get("turn_count"), record.get("duration")
        cells = [f"<td>{name}<br><small>{escape(record['path'])}</small></td>",
                 f"<td>{escape(record['variant'])}</td>", f"<td class='num'>{record['trial']}</td>",
                 f"<td>{escape(str(record['agent']))}</td>",
                 f"<td class='outcome-{escape(record['outcome'])}'>{escape(record['outcome'])}</td>",
                 f"<td class='num' data-sort='{'' if score is None else score}'>{number(score)}</td>",
                 f"<td class='num'>{'—' if turns is None else turns}</td>"]
        if tokens_known:
            tokens = record_tokens(record)
            cells.append(f"<td class='num' data-sort='{'' if tokens is None else tokens}'>"
                         f"{'—' if tokens is None else tokens}</td>")
        if cost_known:
            cost = record_cost(record)
            cells.append(f"<td class='num' data-sort='{'' if cost is None else cost}'>"
                         f"{'—' if cost is None else f'${cost:.4f}'}</td>")
        cells += [f"<td class='num'>{number(duration, 2)}</td>",
                  f"<td>{escape(', '.join(_facets(record)['code']))}</td>"]
        if compared:
            cells.append(f"<td>{escape(record.get('change') or '')}</td>")
        rows.append(f"<tr {facets}>{''.join(cells)}</tr>")
    header = "".join(f"<th>{escape(title)}</th>" for title in head)
    codes = {code for record in records for code in _facets(record)["code"]}
    return (_filters(records) + f"<table class='ts-items'><thead><tr>{header}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>" + legend_html(codes))
