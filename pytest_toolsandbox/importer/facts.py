"""Facts an imported scenario needs that no tool gives: gaps in the offline search data.

The witness says and writes what the milestones ask for word for word, so it passes whatever the
search tools return; a real agent can only use what the tools told it. The facts checked are

* in answers (`agent_says`): a `contains` target, and every word with a digit in it (a phone number,
  a distance);
* in rows the agent must add or change: every number outside a time column (a place's coordinates),
  within the milestone's `close` tolerance.

A fact is missing when neither a tool result of the witness's trajectory, nor the
user's first message, nor the starting world holds it. The user's goal counts only in
multiple-user-turn scenarios, where the user is meant to share it; elsewhere it often holds the
answer for the simulator to check, with the instruction not to tell.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_toolsandbox.scenario.milestones import CloseMatch, TextMatch
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.world.trajectory import Trajectory

_WORD = re.compile(r"[+\w][\w.,:/-]*\w|\w")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_DECIMAL = re.compile(r"-?\d+\.(\d+)")


def _text_facts(scenario: Scenario) -> list[str]:
    facts: list[str] = []
    for milestone in scenario.milestones.values():
        if milestone.fill_from is not None:  # filled from a tool result: present by construction
            continue
        for said in milestone.said("agent_says"):
            text, match = (said.text, said.match) if isinstance(said, TextMatch) else (said, "rouge")
            if match == "contains":
                facts.append(text)
            elif match == "rouge":
                facts += [word.rstrip(".,") for word in _WORD.findall(text) if any(c.isdigit() for c in word)]
    return list(dict.fromkeys(facts))


def _number_facts(scenario: Scenario) -> list[tuple[str, float, float]]:
    """(column, value, tolerance) of numbers in added or updated rows."""
    facts = []
    for milestone in scenario.milestones.values():
        for kind in ("added", "updated"):
            for rows in (getattr(milestone, kind) or {}).values():
                for row in rows:
                    for column, value in row.items():
                        if "timestamp" in column or isinstance(value, bool) or not isinstance(value, int | float):
                            continue
                        close = milestone.match.get(column)
                        facts.append((column, float(value), close.close if isinstance(close, CloseMatch) else 0.0))
    return facts


def _said(fact: str, text: str, numbers: list[float]) -> bool:
    decimal = _DECIMAL.fullmatch(fact)
    if decimal:  # "67.86" is said by a result of 67.8612 (rounded as the answer rounds it)
        places = len(decimal.group(1))
        return any(round(number, places) == float(fact) for number in numbers) or fact in text
    return fact in text


def missing_facts(scenario: Scenario, trajectory: Trajectory) -> list[str]:
    """The facts `scenario` needs that nothing the witness's `trajectory` saw provides."""
    known: list[Any] = []
    for message in trajectory.messages:
        if message.tool_trace is not None:  # results only: the witness's arguments are the targets themselves
            known.append(message.tool_trace.result)
    told = [scenario.user.goal] if "multiple_user_turn" in scenario.categories else []  # the user tells it later
    text = "\n".join([json.dumps(known, ensure_ascii=False), scenario.user.first_message, *told,
                      scenario.world.model_dump_json()])
    numbers = [float(found) for found in _NUMBER.findall(text)]
    missing = [fact for fact in _text_facts(scenario) if not _said(fact, text, numbers)]
    missing += [f"{column} {value}" for column, value, tolerance in _number_facts(scenario)
                if not any(abs(number - value) <= tolerance for number in numbers)]
    return missing
