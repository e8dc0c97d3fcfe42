"""Facts for the imported text milestones, derived from the reference's own sentence and the witness.

The reference judges an answer by its ROUGE-L similarity to one sentence, so a correct answer in other
words fails and a wrong one that reuses the words passes. Our verdict asks for facts instead
(evaluation/facts.py); for an imported base nobody writes them, so they are derived here from what the
reference sentence states and where each stated value comes from:

* a value a tool result of the witness gives (the converted temperature, the contact's name, the
  stock symbol, the days until a holiday) is the answer: the fact requires it, in any wording, unit or
  format the fact machinery reads ("fifty-two degrees Fahrenheit", "(408) 996-1010");
* a value the user gave (the phone number of a contact to remove, the coordinates asked about) need
  not be repeated, but if repeated must be right (`required: false`, or `allow` for numbers);
* a value nothing gives is not turned into a fact: the sentence is reported with the reason, unless a
  tool result of a milestone it follows is within 1 % (offline data that places a landmark a little
  apart from the reference's coordinates); then the fact accepts both, and the import says so.

Three kinds of sentence get facts of another shape:

* a *confirmation*, a sentence after a milestone that proves its action in the world (a row added,
  updated or removed; a setting the sentence names switched): the world already proves the action, so
  the sentence is judged by the details it states (`required: false`) and by denying nothing ("I
  couldn't …") and naming no other contact — a bare "Done." confirms;
* a *decline* in an insufficient-information base: it must say the task cannot be done;
* an on/off state (a setting asked about or switched): the state word bound to the setting's name, so
  "low battery mode is off and wifi on" is not read as "wifi off".
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_toolsandbox.evaluation.explanation import INSUFFICIENT
from pytest_toolsandbox.evaluation.facts import has_phrase, phrase_spans
from pytest_toolsandbox.evaluation.units import UNIT_AFTER, unit_named
from pytest_toolsandbox.evaluation.values import Mention, Reading
from pytest_toolsandbox.scenario.milestones import Milestone, TextMatch
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.timeexpr import resolve_time
from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.trajectory import Trajectory

Entry = Any
"""One fact entry as written in a scenario file (a phrase, or a dict such as {number: 52, unit: °F})."""

DENIALS = ("couldn't", "could not", "can't", "cannot", "unable", "wasn't able", "weren't able", "not able",
           "failed", "didn't", "did not", "wasn't", "was not", "hasn't been", "has not been", "haven't",
           "have not", "not true", "no longer possible", "error")
"""What a confirmation must not say: the action failed or did not happen. Bare "not" and "won't" are
left out on purpose: "you won't see him in your contacts any more" and "wifi is not on now, it's off"
confirm correctly."""

CONFIRMS = ("done", "added", "removed", "deleted", "updated", "changed", "sent", "turned", "switched", "set",
            "saved", "created", "now", "has been", "have been", "taken care", "enabled", "disabled", "completed",
            "successfully", "moved", "postponed", "rescheduled", "texted", "messaged", "no longer", "is on", "is off",
            "are on", "are off")
"""How a confirmation says the action happened: a confirmation must say one of them (a bare "Done." does,
silence or "Okay." does not); which action, the world's milestone already proves."""

CANNOT = ("can't", "cannot", "can not", "couldn't", "could not", "unable", "not able", "don't have",
          "do not have", "not available", "unavailable", "no access", "not possible", "impossible")
"""How a decline says the task cannot be done (the explanation check also asks it to name what is
missing; evaluation/explanation.py)."""

_STATES = {True: ("on", "enabled", "activated", "active"), False: ("off", "disabled", "deactivated")}
_STATE_FORMS = ("{s} is {x}", "{s} is now {x}", "{s} are {x}", "{s} are now {x}", "{s} is turned {x}",
                "{s} are turned {x}", "{s} is switched {x}", "{s} is now turned {x}", "{s} has been turned {x}",
                "{s} have been turned {x}", "{s} was turned {x}", "{s} were turned {x}", "{s} turned {x}",
                "{s} switched {x}", "{s} {x}", "turned {x} {s}", "switched {x} {s}", "turned {s} {x}",
                "switched {s} {x}", "{x} {s}")
"""Ways a sentence ties a state word to a setting's name ("cellular service has been turned off")."""
_STATE_SHORT = ("it is {x}", "it's {x}", "it has been turned {x}", "turned it {x}", "switched it {x}")
"""The same with the setting as "it" (only where one setting is spoken of)."""

_QUESTION_OPENINGS = frozenset({"what", "who", "whom", "whose", "which", "where", "when", "why", "how", "is",
                                "are", "am", "was", "were", "do", "does", "did", "can", "could", "will", "would",
                                "should", "has", "have", "tell", "gimme", "give", "find", "show"})
_YES_NO_OPENINGS = frozenset({"is", "are", "am", "was", "were", "do", "does", "did", "can", "could", "will",
                              "has", "have"})
TIMESTAMPS = (1e9, 4e9)
"""POSIX numbers read as moments (2001 to 2096): a holiday's timestamp, not a price or a distance."""
RELATIVE_SLACK = 0.01
"""How far a tool result may lie from a number the reference states for the two to be one value
measured from slightly different data (the offline gazetteer's landmark vs the reference's)."""


class UnderivableSentence(ValueError):
    """A reference sentence that yields no facts; the message names the milestone and the reason."""


@dataclass
class Derived:
    """What the derivation found for one base."""

    facts: dict[str, list[Entry]] = field(default_factory=dict)
    """Per text milestone, its facts."""
    final_answer: list[Entry] = field(default_factory=list)
    answer_required: Required | None = None
    """The value the user asked for that the reference never states (the import summary lists it)."""
    notes: list[str] = field(default_factory=list)
    """Values taken otherwise than from the witness's own results, each with why."""
    problems: list[str] = field(default_factory=list)
    """Sentences the derivation could not turn into facts, each with why."""
    explained: list[str] = field(default_factory=list)
    """Values of the sentences that no witness result says, explained by a note."""


# ------------------------------------------------------------------------------------------------ sources


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass
class Sources:
    """Where a stated value may come from: the witness's tool results, the world, the user's words."""

    results: list[tuple[str, Any]]
    """(milestone or tool, result) of each call the witness made, in order."""
    user: str
    contacts: list[dict[str, Any]]
    clock: FrozenClock
    times: list[float] = field(default_factory=list)
    """Timestamps of the rows the milestones add or update (a reminder's time)."""

    @classmethod
    def of(cls, scenario: Scenario, trajectory: Trajectory) -> Sources:
        results = [(message.tool_trace.tool, message.tool_trace.result) for message in trajectory.messages
                   if message.tool_trace is not None and message.tool_trace.result is not None]
        # the goal counts only where the user is meant to share it (multiple user turns); elsewhere it
        # often holds the answer for the simulator to check
        told = [scenario.user.goal] if "multiple_user_turn" in scenario.categories else []
        contacts = [dict(row) for row in scenario.world.contacts or []]
        clock = FrozenClock.at(scenario.now, scenario.timezone)
        times = [resolve_time(value, clock) if isinstance(value, str) else float(value)
                 for row in _action_rows(scenario, scenario.milestones) for column, value in row.items()
                 if "timestamp" in column and not column.startswith("creation") and value is not None]
        return cls(results, "\n".join([scenario.user.first_message, *told]), contacts, clock, times)

    def result_numbers(self, tools: Iterable[str] | None = None) -> list[float]:
        wanted = None if tools is None else set(tools)
        return [float(leaf) for tool, result in self.results if wanted is None or tool in wanted
                for leaf in _leaves(result) if _is_number(leaf)]

    def result_strings(self) -> list[str]:
        return [leaf for _, result in self.results for leaf in _leaves(result) if isinstance(leaf, str)]

    def user_numbers(self) -> list[float]:
        return [mention.values[0] for mention in Reading(self.user).numbers]

    def moments(self) -> list[datetime.datetime]:
        """The local times the witness's results and the world's rows hold (POSIX numbers in the range of
        timestamps, and timestamp columns), for dates and times a sentence states."""
        stamps = [number for number in self.result_numbers() if TIMESTAMPS[0] <= number <= TIMESTAMPS[1]]
        stamps += [float(value) for value in self.times]
        return [self.clock.local(stamp) for stamp in stamps]

    def user_said(self, text: str) -> bool:
        return has_phrase(self.user, text) or text in self.user


# ------------------------------------------------------------------------------------------------ helpers


def _unit_written(read: Reading, mention: Mention) -> str | None:
    """The unit as the sentence writes it after the number ("kilometers", "degrees Fahrenheit"), if known."""
    after = UNIT_AFTER.match(read.text, mention.end)
    written = after.group(1) if after else None
    if written is None and mention.unit is not None:
        before = read.text[max(0, mention.start - 4):mention.start].strip()
        written = before[-1:] if before else None
    try:
        return written if written is not None and unit_named(written) == mention.unit else None
    except ValueError:
        return None


def _half_place(decimals: int) -> float:
    """Half a unit in the last place the sentence writes: 52 → 0.5, 67.86 → 0.005 (its own rounding)."""
    return 0.5 * 10.0 ** -decimals


def _rounded(slack: float) -> float:
    """`slack` rounded up to two significant digits, so the file carries a readable tolerance."""
    if slack <= 0:
        return 0.0
    digits = -math.floor(math.log10(slack)) + 1
    return math.ceil(slack * 10 ** digits) / 10 ** digits


def _possible_phone(value: str) -> bool:
    """Whether a number can be dialled as written (the reference's "+1234560987" is one digit short): an
    answer restating it would be read as no phone number, so it makes no detail to check."""
    import phonenumbers

    try:
        return phonenumbers.is_possible_number(phonenumbers.parse(value, None))
    except phonenumbers.NumberParseException:
        return False


def _phone_written(text: str, mention: Mention) -> str:
    """The phone number as the sentence writes it, digits only ("+10000000000" keeps its zeros, which
    the parsed national number drops); a number without "+" gets the parsed country code."""
    written = re.sub(r"[^\d+]", "", text[mention.start:mention.end])
    return written if written.startswith("+") else f"+{mention.values[0][0]}{written}"


def _inside(mention: Mention, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start <= mention.start < end for start, end in spans)


def is_question(text: str) -> bool:
    """Whether the user's first message asks for information ("How much is …", "What's …?", "Tell me …")."""
    words = re.findall(r"[a-z']+", text.lower())
    return text.rstrip().endswith("?") or (bool(words) and (words[0].split("'")[0] in _QUESTION_OPENINGS))


def is_yes_no_question(text: str) -> bool:
    words = re.findall(r"[a-z']+", text.lower())
    return bool(words) and words[0] in _YES_NO_OPENINGS


# ---------------------------------------------------------------------------------------- the milestones


def _predecessors(scenario: Scenario, name: str) -> list[str]:
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


def setting_phrases(column: str) -> list[str]:
    """How people name a setting column: `location_service` → "location service", "location services",
    "location"; `cellular` → "cellular", "cellular service"."""
    name = column.replace("_", " ")
    phrases = [name, f"{name}s" if name.endswith("service") else f"{name} service"]
    first = name.split()[0]
    return list(dict.fromkeys([*phrases, first] if first != name else phrases))


def state_phrases(column: str, on: bool, short: bool) -> list[str]:
    """Phrases that tie the state `on` to the setting `column` ("cellular service has been turned off")."""
    found = [form.format(s=subject, x=word) for subject in setting_phrases(column) for word in _STATES[on]
             for form in _STATE_FORMS]
    if short:
        found += [form.format(x=word) for word in _STATES[on] for form in _STATE_SHORT]
    return list(dict.fromkeys(found))


def _settings_spoken_of(sentence: str, settings: dict[str, bool]) -> dict[str, bool]:
    return {column: state for column, state in settings.items()
            if any(has_phrase(sentence, phrase) for phrase in setting_phrases(column))}


def _action_settings(scenario: Scenario, names: Iterable[str]) -> dict[str, bool]:
    """Settings the milestones `names` set (a `world` target on settings)."""
    found: dict[str, bool] = {}
    for name in names:
        world = scenario.milestones[name].world or {}
        settings = world.get("settings")
        if isinstance(settings, dict):
            found.update({column: value for column, value in settings.items() if isinstance(value, bool)})
    return found


def _action_rows(scenario: Scenario, names: Iterable[str]) -> list[dict[str, Any]]:
    """Rows the milestones `names` add, update or remove (the action the world proves)."""
    return [row for name in names for kind in ("added", "updated", "removed")
            for rows in (getattr(scenario.milestones[name], kind) or {}).values() for row in rows]


def _queried_settings(sources: Sources) -> dict[str, bool]:
    """Settings a status tool of the witness reported (`get_wifi_status` → wifi: True)."""
    found = {}
    for tool, result in sources.results:
        match = re.fullmatch(r"get_(.+)_status", tool)
        if match and isinstance(result, bool):
            found[match.group(1).removesuffix("_service") if match.group(1).endswith("_service")
                  and match.group(1) != "location_service" else match.group(1)] = result
    return found


# ------------------------------------------------------------------------------------------------ values


@dataclass
class _Sentence:
    """The facts found in one sentence so far, and what could not be placed."""

    confirmation: bool
    facts: list[Entry] = field(default_factory=list)
    required: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    explained: list[str] = field(default_factory=list)
    """Stated values no witness result holds that a note explains (offline data placed a little apart)."""

    def add(self, entry: dict[str, Any], given_by_user: bool) -> None:
        optional = self.confirmation or given_by_user
        self.facts.append({**entry, "required": False} if optional else entry)
        self.required += not optional


def _number_fact(sentence: _Sentence, read: Reading, mention: Mention, sources: Sources,
                 after: Sequence[str], where: str, filled: Sequence[Any]) -> None:
    value, decimals = mention.values[0], mention.decimals
    unit = _unit_written(read, mention)
    entry: dict[str, Any] = {"unit": unit} if unit else {}
    allowed = [number for number in sources.user_numbers() if number != value]
    if allowed:
        entry["allow"] = sorted(set(allowed))
    if value in sources.user_numbers():
        return  # the user's own figure: allowed beside the answer, not the answer
    half = _half_place(decimals)
    # the value filled into the sentence first (the current temperature, not the day's average beside it)
    results = [float(number) for number in filled if _is_number(number)] + sources.result_numbers()
    exact = [number for number in results if abs(number - value) <= half + 1e-9]
    if exact:  # the tool's value, rounded as the sentence rounds it
        source = exact[0]
        sentence.add({"number": round(source, 6), "tolerance": half, **entry}, False)
        return
    near = [number for number in sources.result_numbers(after) if abs(number - value) <= RELATIVE_SLACK * abs(value)]
    if near:
        source = min(near, key=lambda number: abs(number - value))
        tolerance = _rounded(max(half, abs(source - value)))
        sentence.add({"number": value, "tolerance": tolerance, **entry}, False)
        sentence.explained.append(read.text[mention.start:mention.end])
        sentence.notes.append(f"{where}: the reference says {value:g}, the witness's tool result is {source:.4g} "
                              f"(from the milestone's own arguments); the fact accepts {value:g} ± {tolerance:g}, "
                              "both values")
        return
    sentence.problems.append(f"{where}: states {read.text[mention.start:mention.end]!r}, which no tool result "
                             "of the witness, world value or word of the user gives")


def _value_facts(sentence: _Sentence, text: str, sources: Sources, after: Sequence[str], where: str,
                 covered: Sequence[tuple[int, int]], filled: Sequence[Any]) -> None:
    """Phones, dates, times, a position and numbers the sentence states, outside the `covered` spans
    (the parts of an address already required as phrases)."""
    read = Reading(text)
    for mention in read.phones:
        sentence.add({"phone": _phone_written(text, mention)}, sources.user_said(text[mention.start:mention.end]))
    moments = sources.moments()
    for mention in read.dates:
        month, day, year, _ = mention.values[0]
        matching = [moment for moment in moments if (moment.month, moment.day) == (month, day)
                    and year in (None, moment.year)]
        if matching:
            sentence.add({"date": matching[0].date().isoformat()}, sources.user_said(text[mention.start:mention.end]))
        else:
            sentence.problems.append(f"{where}: states the date {text[mention.start:mention.end]!r}, which no "
                                     "time of a tool result or of the action gives")
    for mention in read.times:
        matching = [moment for moment in moments if moment.hour * 60 + moment.minute in mention.values]
        if matching:
            sentence.add({"time": matching[0].strftime("%H:%M")}, sources.user_said(text[mention.start:mention.end]))
        else:
            sentence.problems.append(f"{where}: states the time {text[mention.start:mention.end]!r}, which no "
                                     "time of a tool result or of the action gives")
    coordinates = read.coordinates  # a position is a latitude and a longitude; a lone decimal is a number
    taken = list(covered)
    if [mention.unit for mention in coordinates] == ["latitude", "longitude"]:
        values = [mention.values[0] for mention in coordinates]
        given = all(sources.user_said(text[mention.start:mention.end]) for mention in coordinates)
        sentence.add({"coordinates": values, "tolerance": 1e-6}, given)
        taken += [(mention.start, mention.end) for mention in coordinates]
    for mention in read.numbers:
        if mention.kind == "number" and not _inside(mention, taken):
            _number_fact(sentence, read, mention, sources, after, where, filled)


def _involved(contacts: Sequence[dict[str, Any]], action: Sequence[dict[str, Any]], sources: Sources) -> set[str]:
    """The contacts an action concerns: named in its rows, or matched by their id or phone number there,
    or the one the user names or gives the number of."""
    values = {str(value) for row in action for value in row.values() if value is not None}
    return {str(row["name"]) for row in contacts
            if values & {str(row.get("name")), str(row.get("person_id")), str(row.get("phone_number"))}
            or sources.user_said(str(row["name"])) or (row.get("phone_number") and sources.user_said(
                str(row["phone_number"])))}


def _other_contacts(sources: Sources, action: Sequence[dict[str, Any]], named: Iterable[str]) -> list[str]:
    """Contacts a confirmation must not name: every one but the user and those the action concerns."""
    contacts = [row for row in sources.contacts if row.get("name")]
    involved = _involved(contacts, action, sources) | set(named)
    return sorted({str(row["name"]) for row in contacts if str(row["name"]) not in involved and not row.get("is_self")})


def _name_facts(sentence: _Sentence, text: str, sources: Sources, action: Sequence[dict[str, Any]]) -> None:
    """Contacts the sentence names (the answer, unless the user named them); in a confirmation, the
    contacts it must not name instead."""
    names = sorted({str(row["name"]) for row in [*sources.contacts, *action] if row.get("name")})
    named = [name for name in names if phrase_spans(text, name)]
    for name in named:
        if not sentence.confirmation and not sources.user_said(name):
            sentence.facts.append({"name": name})
            sentence.required += 1
    if sentence.confirmation and (named or action):
        others = _other_contacts(sources, action, named)
        if others:
            sentence.facts.append({"none": others})


def _address_parts(value: str) -> list[str | list[str]]:
    """The parts of an address a sentence can state in its own order: "One Apple Park Way, Cupertino, CA
    95014, USA" → ["1 Apple Park Way", "One Apple Park Way"] (a house number in digits or words),
    "Cupertino", "95014" (the state code dropped, and the country, which is written many ways)."""
    from num2words import num2words

    parts = [part.strip() for part in value.split(",")]
    found: list[str | list[str]] = []
    for position, part in enumerate(parts):
        if position == len(parts) - 1 and len(parts) > 2:
            continue  # the country
        words = part.split()
        number = Reading(words[0]).numbers if words else []
        if len(words) > 1 and (number or words[0].lower() in _SMALL_WORDS):
            house = int(number[0].values[0]) if number else _SMALL_WORDS[words[0].lower()]
            rest = " ".join(words[1:])
            found.append([f"{house} {rest}", f"{num2words(house)} {rest}"])
            continue
        if len(words) == 2 and words[0].isupper() and words[1].isdigit():
            words = words[1:]
        if words:
            found.append(" ".join(words))
    return found


_SMALL_WORDS = {"one": 1, "two": 2, "three": 3}
def _is_unit(text: str) -> bool:
    try:
        unit_named(text)
    except ValueError:
        return False
    return True


def _phrase_facts(sentence: _Sentence, text: str, sources: Sources, already: Iterable[str]) -> list[tuple[int, int]]:
    """Strings of the witness's tool results the sentence states (a symbol, a relationship, an address's
    parts), unless the user said them, or a name, a `contains` target, a phone or a unit covers them
    (those are facts of their own kind). Returns where the sentence states an address's parts, so their
    digits are no numbers of their own."""
    covered = [phrase.lower() for phrase in already]
    spans: list[tuple[int, int]] = []
    names = {str(row["name"]).lower() for row in sources.contacts if row.get("name")}
    for value in dict.fromkeys(sources.result_strings()):
        address = value.count(",") >= 2
        for part in _address_parts(value) if address else [value]:
            forms = part if isinstance(part, list) else [part]
            stated = [form for form in forms if has_phrase(text, form)]
            if (not stated or len(forms[0]) < 2 or forms[0].startswith("+") or _is_unit(forms[0])
                    or forms[0].lower() in names or any(sources.user_said(form) for form in forms)
                    or any(form.lower() in other or other in form.lower() for form in forms for other in covered)):
                continue
            sentence.facts.append({"any": forms} if len(forms) > 1 else forms[0])
            sentence.required += 1
            covered += [form.lower() for form in forms]
            spans += [span for form in stated for span in phrase_spans(text, form)] if address else []
    return spans


def _state_facts(sentence: _Sentence, text: str, settings: dict[str, bool], yes_no: bool) -> None:
    spoken = _settings_spoken_of(text, settings)
    short = len(spoken) == 1
    for column, state in spoken.items():
        if not sentence.confirmation:
            sentence.facts.append({"any": [*state_phrases(column, state, short), *_STATES[state],
                                           *(("yes",) if yes_no and state else ())]})
            sentence.required += 1
        sentence.facts.append({"none": state_phrases(column, not state, short)})
    if yes_no and spoken:
        sentence.facts.append({"yes": all(spoken.values()), "required": False})


def _contains_targets(milestone: Milestone) -> list[str]:
    return [said.text for said in milestone.said("agent_says") if isinstance(said, TextMatch)
            and said.match == "contains"]


def sentence_facts(scenario: Scenario, name: str, text: str, sources: Sources, filled: Sequence[Any] = ()) -> _Sentence:
    """The facts of the text milestone `name`, whose reference sentence is `text` with its placeholders
    filled by the values `filled` (from the witness's tool results)."""
    where = f"{scenario.name}: milestone {name!r}"
    predecessors = _predecessors(scenario, name)
    action = _action_rows(scenario, predecessors)
    switched = _settings_spoken_of(text, _action_settings(scenario, predecessors))
    sentence = _Sentence(confirmation=bool(action or switched))
    if INSUFFICIENT in scenario.categories and any(has_phrase(text, phrase) for phrase in CANNOT):
        sentence.facts.append({"any": list(CANNOT)})
        sentence.required += 1
        return sentence
    contains = _contains_targets(scenario.milestones[name])
    _name_facts(sentence, text, sources, action)
    named = [fact["name"] for fact in sentence.facts if isinstance(fact, dict) and "name" in fact]
    covered = [] if sentence.confirmation else _phrase_facts(sentence, text, sources, [*named, *contains])
    _value_facts(sentence, text, sources, predecessors, where, covered, filled)
    settings = {**_queried_settings(sources), **_action_settings(scenario, predecessors)}
    _state_facts(sentence, text, settings, is_yes_no_question(scenario.user.first_message))
    if sentence.confirmation:
        sentence.facts += [{"any": list(CONFIRMS)}, {"none": list(DENIALS)}]
    elif not sentence.required and not contains:
        sentence.problems.append(f"{where}: states no value that a tool result, the world or the user gives, so "
                                 "it cannot be judged by facts")
    return sentence


# --------------------------------------------------------------------------------------- the final answer


def _value_in_human_form(value: Any, returns: str, scenario: Scenario) -> tuple[list[Entry], str] | None:
    """A tool result as a person would give it, as facts and as a sentence saying it: a timestamp as its
    local date (and, if given, time), a number as itself (to the cent; whole units accepted)."""
    if _is_number(value) and "timestamp" in returns.lower():
        moment = FrozenClock.at(scenario.now, scenario.timezone).local(float(value))
        return ([{"date": moment.date().isoformat()}, {"time": moment.strftime("%H:%M"), "required": False}],
                f"That is {moment.strftime('%B')} {moment.day}, {moment.year}, at {moment.strftime('%H:%M')}.")
    if _is_number(value):
        return [{"number": round(float(value), 2), "tolerance": 0.5}], f"That is {float(value):,.2f}."
    return None


@dataclass(frozen=True)
class Required:
    """The value the user asked for that the reference never states: its facts, the sentence the
    witness closes with instead of a bare "Done.", and where it came from (for the import summary)."""

    facts: list[Entry]
    closing: str
    found: str


def answer_beyond_reference(scenario: Scenario, sources: Sources, returns: dict[str, str]) -> Required | None:
    """The value the user asked for where the reference states none: a question, no text milestone, and a
    `tool_call` milestone whose tool returns a value (the last such result is the answer)."""
    if not is_question(scenario.user.first_message):
        return None
    if any(milestone.said("agent_says") for milestone in scenario.milestones.values()):
        return None
    called = [tool for milestone in scenario.milestones.values() for tool, _ in milestone.tool_call_alternatives()]
    for tool, result in reversed(sources.results):
        human = _value_in_human_form(result, returns.get(tool, ""), scenario) if tool in called else None
        if human is not None:
            entries, closing = human
            allowed = sorted(set(sources.user_numbers()))
            if allowed and "number" in entries[0]:
                entries[0]["allow"] = allowed
            return Required(entries, closing, f"{tool} → {result!r}")
    return None


def confirmation_final_answer(scenario: Scenario, sources: Sources) -> list[Entry]:
    """For a base whose milestones prove an action in the world: the action's details as optional facts
    (a reminder's date and time, a contact's or recipient's phone) and the denials it must not say;
    other contacts it must not name where the action is about contacts or messages."""
    names = list(scenario.milestones)
    rows = _action_rows(scenario, names)
    settings = _action_settings(scenario, names)
    if not rows and not settings:
        return []
    facts: list[Entry] = []
    for moment in (sources.clock.local(stamp) for stamp in sources.times):
        facts += [{"date": moment.date().isoformat(), "required": False},
                  {"time": moment.strftime("%H:%M"), "required": False}]
    for row in rows:
        for column, value in row.items():
            if "phone_number" in column and isinstance(value, str) and _possible_phone(value):
                facts.append({"phone": value, "required": False})
    facts = list({repr(fact): fact for fact in facts}.values())
    if any("phone_number" in column or "person_id" in column for row in rows for column in row):
        others = _other_contacts(sources, rows, ())
        if others:
            facts.append({"none": others})
    short = len(settings) == 1
    for column, state in settings.items():
        facts.append({"none": state_phrases(column, not state, short)})
    facts.append({"none": list(DENIALS)})
    return facts


def derive(scenario: Scenario, trajectory: Trajectory, texts: dict[str, tuple[str, list[Any]]],
           returns: dict[str, str]) -> Derived:
    """Every fact of one imported base: per text milestone (its witness sentence and the values filled
    into it, in `texts`) and for the final answer. `returns` maps each tool to what its documentation
    says it returns."""
    sources = Sources.of(scenario, trajectory)
    derived = Derived()
    for name, (text, filled) in texts.items():
        sentence = sentence_facts(scenario, name, text, sources, filled)
        derived.problems += sentence.problems
        derived.notes += sentence.notes
        derived.explained += sentence.explained
        if sentence.facts and not sentence.problems:
            derived.facts[name] = sentence.facts
    derived.answer_required = answer_beyond_reference(scenario, sources, returns)
    required = derived.answer_required.facts if derived.answer_required else []
    derived.final_answer = required + confirmation_final_answer(scenario, sources)
    return derived
