"""Diagnosis codes as the report shows them: the codes of a record, and a legend saying what each means
(every page that shows codes carries it, so a reader never has to look a code up elsewhere)."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any

MEANINGS = {
    "IFE": "invalid format: the call's arguments are not a JSON object",
    "IFN": "invalid function: the agent called a tool that is not offered",
    "IAN": "invalid argument name: an unknown argument, or a required one missing",
    "IAT": "invalid argument type: an argument of the wrong type",
    "IAV": "invalid argument value: a well-formed call to an expected tool, agreeing with none of its expected calls",
    "RAC": "repeated action call: the same call again, with nothing changed in the world in between",
    "IAC": "incomplete action calls: milestones needing a call or a world change were never reached",
    "ORDER": "out of order: a milestone's event happened, but before its prerequisite or after its successor",
    "MINEFIELD": "a minefield (something that must not happen) matched",
    "PREMATURE_END": "the conversation ended with milestones still unreached",
    "CLAIMED_UNMADE": "the agent said a change was made although nothing changed",
}
"""Short meanings of the codes of evaluation/diagnosis.py (details: docs/scoring.md)."""


def diagnosis_codes(record: dict[str, Any]) -> list[str]:
    """The record's codes in finding order, each once."""
    return list(dict.fromkeys(str(finding.get("code")) for finding in record.get("diagnosis") or []
                              if isinstance(finding, dict) and finding.get("code")))


def legend_html(codes: Iterable[str] | None = None) -> str:
    """A compact legend of `codes` (all codes when None); empty when there is nothing to explain."""
    wanted = None if codes is None else set(codes)
    shown = [code for code in MEANINGS if wanted is None or code in wanted]
    if not shown:
        return ""
    entries = "".join(f"<dt>{escape(code)}</dt><dd>{escape(MEANINGS[code])}</dd>" for code in shown)
    return (f"<details class='ts-legend' open><summary>Diagnosis codes</summary><dl class='ts-codes'>{entries}</dl>"
            "</details>")
