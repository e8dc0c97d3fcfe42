"""Where the values of an imported base's answers come from, and the words that speak of its actions.

The facts of an imported text milestone or final answer (answer_facts.py, final_answers.py) are the
values its reference sentence states, judged by where each comes from: a tool result of the witness
(the answer), the user's own words (may be restated, not changed), the world the milestones prove
changed (the action a confirmation reports). This module gathers those sources from a played witness
and reads the scenario's structure (which milestones come before a text, which rows and settings they
change); it also holds the vocabulary derived facts use for actions: how a setting's state is said
and how a confirmation denies.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_toolsandbox.evaluation.facts import has_phrase
from pytest_toolsandbox.evaluation.values import Reading
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.timeexpr import resolve_time
from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.trajectory import Trajectory

Entry = Any
"""One fact entry as written in a scenario file (a phrase, or a dict such as {number: 52, unit: °F})."""

DENIALS = ("couldn't", "could not", "can't", "cannot", "unable", "wasn't able", "weren't able", "not able",
           "failed", "failure", "unsuccessful", "hasn't been", "has not been", "haven't been", "have not been",
           "not true")
"""What a confirmation must not say: the action failed or did not happen. Bare "not", "didn't" and
"won't" are left out on purpose, since correct confirmations use them: "you won't see him in your
contacts any more", "wifi is not on now", "you didn't give a time, so I used 5 PM"."""

_STATES = {True: ("on", "enabled", "activated", "active"), False: ("off", "disabled", "deactivated")}
_STATE_FORMS = ("{s} is {x}", "{s} is now {x}", "{s} are {x}", "{s} are now {x}", "{s} is turned {x}",
                "{s} are turned {x}", "{s} is switched {x}", "{s} is now turned {x}", "{s} has been turned {x}",
                "{s} have been turned {x}", "{s} was turned {x}", "{s} were turned {x}", "{s} turned {x}",
                "{s} switched {x}", "{s} {x}", "turned {x} {s}", "switched {x} {s}", "turned {s} {x}",
                "switched {s} {x}", "{x} {s}")
"""Ways a sentence ties a state word to a setting's name ("cellular service has been turned off")."""
_STATE_SHORT = ("it is {x}", "it's {x}", "it has been turned {x}", "turned it {x}", "switched it {x}")
"""The same with the setting as "it" (only where one setting is spoken of)."""
RELATIONSHIPS = ("friend", "boss", "coworker", "colleague", "manager", "enemy", "family", "partner", "spouse", "wife",
                 "husband", "mother", "father", "parent", "brother", "sister", "sibling", "son", "daughter", "cousin",
                 "neighbor", "neighbour", "roommate", "classmate", "acquaintance", "teammate")
"""Words that name a contact's relationship to the user: a confirmation that gives another one than the
action set ("they are now your coworkers" for "enemy") misreports it."""


def plural(word: str) -> str:
    """The plural of a relationship word as people write it ("enemy" → "enemies", "boss" → "bosses")."""
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "sh", "ch")) else "s")


def alternative_states() -> list[str]:
    """A state offered with its opposite ("off or on", "enabled or disabled"): no confirmation of either."""
    return [f"{first} or {second}" for on in (True, False) for first in _STATES[on] for second in _STATES[not on]]


_QUESTION_OPENINGS = frozenset({"what", "who", "whom", "whose", "which", "where", "when", "why", "how", "is",
                                "are", "am", "was", "were", "do", "does", "did", "can", "could", "will", "would",
                                "should", "has", "have", "tell", "gimme", "give", "find", "show"})
_YES_NO_OPENINGS = frozenset({"is", "are", "am", "was", "were", "do", "does", "did", "can", "could", "will",
                              "has", "have"})
TIMESTAMPS = (1e9, 4e9)
"""POSIX numbers read as moments (2001 to 2096): a holiday's timestamp, not a price or a distance."""


def leaves(value: Any) -> Iterator[Any]:
    """The scalar values inside a tool result (dicts and lists walked), None left out."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from leaves(item)
    elif value is not None:
        yield value


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def action_rows(scenario: Scenario, names: Iterable[str]) -> list[dict[str, Any]]:
    """Rows the milestones `names` add, update or remove (the action the world proves)."""
    return [row for name in names for kind in ("added", "updated", "removed")
            for rows in (getattr(scenario.milestones[name], kind) or {}).values() for row in rows]


def action_settings(scenario: Scenario, names: Iterable[str]) -> dict[str, bool]:
    """On/off settings the milestones `names` set (a `world` target on settings)."""
    found: dict[str, bool] = {}
    for name in names:
        settings = (scenario.milestones[name].world or {}).get("settings")
        if isinstance(settings, dict):
            found.update({column: value for column, value in settings.items() if isinstance(value, bool)})
    return found


def predecessors(scenario: Scenario, name: str) -> list[str]:
    """Every milestone `name` comes after, directly or through others (its `after`, `since`, `fill_from`)."""
    seen: list[str] = []
    pending = [name]
    while pending:
        milestone = scenario.milestones[pending.pop()]
        direct = [*milestone.after, *([milestone.since] if milestone.since not in (None, "initial") else []),
                  *(fill.milestone for fill in milestone.fills())]
        for other in direct:
            if other not in seen and other in scenario.milestones:
                seen.append(other)
                pending.append(other)
    return seen


@dataclass
class Sources:
    """Where a stated value may come from: the witness's tool results, the world, the user's words."""

    results: list[tuple[str, Any]]
    """(tool, result) of each call the witness made, in order."""
    user: str
    """What the user says: the first message, and in multiple-user-turn bases the goal they share."""
    contacts: list[dict[str, Any]]
    settings: list[str]
    """The world's setting columns."""
    clock: FrozenClock
    times: list[float] = field(default_factory=list)
    """Timestamps of the rows the milestones add, update or remove (a reminder's time)."""

    @classmethod
    def of(cls, scenario: Scenario, trajectory: Trajectory) -> Sources:
        results = [(message.tool_trace.tool, message.tool_trace.result) for message in trajectory.messages
                   if message.tool_trace is not None and message.tool_trace.result is not None]
        # the goal counts only where the user is meant to share it (multiple user turns); elsewhere it
        # often holds the answer for the simulator to check
        told = [scenario.user.goal] if "multiple_user_turn" in scenario.categories else []
        clock = FrozenClock.at(scenario.now, scenario.timezone)
        times = [resolve_time(value, clock) if isinstance(value, str) else float(value)
                 for row in action_rows(scenario, scenario.milestones) for column, value in row.items()
                 if "timestamp" in column and not column.startswith("creation") and value is not None]
        return cls(results, "\n".join([scenario.user.first_message, *told]),
                   [dict(row) for row in scenario.world.contacts or []], list(scenario.world.settings), clock, times)

    def result_numbers(self, tools: Iterable[str] | None = None) -> list[float]:
        """Every number in the results (of the `tools` only, when given)."""
        wanted = None if tools is None else set(tools)
        return [float(leaf) for tool, result in self.results if wanted is None or tool in wanted
                for leaf in leaves(result) if is_number(leaf)]

    def result_strings(self) -> list[str]:
        return [leaf for _, result in self.results for leaf in leaves(result) if isinstance(leaf, str)]

    def user_numbers(self) -> list[float]:
        return [mention.values[0] for mention in Reading(self.user).numbers]

    def user_said(self, text: str) -> bool:
        return has_phrase(self.user, text) or text in self.user

    def moments(self) -> list[datetime.datetime]:
        """The local times the witness's results and the action's rows hold, for dates and times a
        sentence states."""
        stamps = [number for number in self.result_numbers() if TIMESTAMPS[0] <= number <= TIMESTAMPS[1]]
        return [self.clock.local(stamp) for stamp in [*stamps, *self.times]]

    def queried_settings(self) -> dict[str, bool]:
        """Settings a status tool of the witness reported: `get_wifi_status` → wifi: True,
        `get_cellular_service_status` → cellular (the world's column)."""
        found = {}
        for tool, result in self.results:
            match = re.fullmatch(r"get_(.+)_status", tool)
            if match and isinstance(result, bool):
                name = match.group(1)
                found[name if name in self.settings else name.removesuffix("_service")] = result
        return found

    def other_contacts(self, action: Sequence[dict[str, Any]], named: Iterable[str] = ()) -> list[str]:
        """Contacts a confirmation must not name, by full, first or last name: every one but the user, those
        `named`, and those the action concerns (named in its rows, matched there by id or phone number,
        or named or dialled by the user). A first name that is also a word of a concerned contact's name
        is left out."""
        values = {str(value) for row in action for value in row.values() if value is not None}
        others, concerned = [], set(named)
        for row in self.contacts:
            name = str(row.get("name") or "")
            keys = {name, str(row.get("person_id")), str(row.get("phone_number"))}
            phone = str(row.get("phone_number") or "")
            if values & keys or self.user_said(name) or (phone and self.user_said(phone)) or row.get("is_self"):
                concerned.add(name)
            elif name:
                others.append(name)
        kept = {word for name in concerned for word in name.split()}
        parts = [part for name in others if " " in name for part in (name.split()[0], name.split()[-1])
                 if part not in kept and len(part) > 2]  # "Thordendal" alone names Fredrik; "S" names nobody
        return sorted({*(name for name in others if name not in concerned), *parts})


def is_question(text: str) -> bool:
    """Whether the user's first message asks for information ("How much is …", "What's …?", "Tell me …")."""
    words = re.findall(r"[a-z']+", text.lower())
    return text.rstrip().endswith("?") or (bool(words) and words[0].split("'")[0] in _QUESTION_OPENINGS)


def is_yes_no_question(text: str) -> bool:
    """Whether it asks yes or no ("Is my wifi on?")."""
    words = re.findall(r"[a-z']+", text.lower())
    return bool(words) and words[0] in _YES_NO_OPENINGS


def setting_phrases(column: str) -> list[str]:
    """How people name a setting column: `location_service` → "location service", "location services",
    "location"; `cellular` → "cellular", "cellular service"."""
    name = column.replace("_", " ")
    phrases = [name, f"{name}s" if name.endswith("service") else f"{name} service"]
    first = name.split()[0]
    return list(dict.fromkeys([*phrases, first] if first != name else phrases))


def state_words(on: bool) -> tuple[str, ...]:
    return _STATES[on]


def state_phrases(column: str, on: bool, short: bool) -> list[str]:
    """Phrases that tie the state `on` to the setting `column` ("cellular service has been turned off");
    `short` adds the forms with "it", for a text that speaks of one setting only."""
    found = [form.format(s=subject, x=word) for subject in setting_phrases(column) for word in _STATES[on]
             for form in _STATE_FORMS]
    if short:
        found += [form.format(x=word) for word in _STATES[on] for form in _STATE_SHORT]
    return list(dict.fromkeys(found))


def settings_spoken_of(text: str, settings: dict[str, bool]) -> dict[str, bool]:
    """The settings among `settings` that `text` names."""
    return {column: state for column, state in settings.items()
            if any(has_phrase(text, phrase) for phrase in setting_phrases(column))}
