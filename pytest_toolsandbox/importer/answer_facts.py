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

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_toolsandbox.evaluation.explanation import INSUFFICIENT
from pytest_toolsandbox.evaluation.facts import has_phrase, phrase_spans
from pytest_toolsandbox.evaluation.units import UNIT_AFTER, unit_named
from pytest_toolsandbox.evaluation.values import Mention, Reading
from pytest_toolsandbox.importer.answer_sources import (
    DENIALS,
    Entry,
    Sources,
    action_rows,
    action_settings,
    is_number,
    is_yes_no_question,
    predecessors,
    settings_spoken_of,
    state_phrases,
    state_words,
)
from pytest_toolsandbox.importer.final_answers import Required, answer_beyond_reference, confirmation_details
from pytest_toolsandbox.scenario.milestones import Milestone, TextMatch
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.world.trajectory import Trajectory

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

RELATIVE_SLACK = 0.01
"""How far a tool result may lie from a number the reference states for the two to be one value
measured from slightly different data (the offline gazetteer's landmark vs the reference's)."""

_SMALL_WORDS = {"one": 1, "two": 2, "three": 3}


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
    """Sentences the derivation could not turn into facts, each with why (their milestone keeps the
    reference's exact wording)."""
    explained: list[str] = field(default_factory=list)
    """Values of the sentences that no witness result says, explained by a note."""


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


def _phone_written(text: str, mention: Mention) -> str:
    """The phone number as the sentence writes it, digits only ("+10000000000" keeps its zeros, which
    the parsed national number drops); a number without "+" gets the parsed country code."""
    written = re.sub(r"[^\d+]", "", text[mention.start:mention.end])
    return written if written.startswith("+") else f"+{mention.values[0][0]}{written}"


def _inside(mention: Mention, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start <= mention.start < end for start, end in spans)


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
                 called: Sequence[str], where: str, filled: Sequence[Any]) -> None:
    """A number the sentence states, by its source: the user's (only allowed beside the answer), a tool
    result rounded as the sentence rounds it, or within 1 % of the result of a tool `called` by a
    milestone the sentence follows (both accepted, with a note); else a problem."""
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
    results = [float(number) for number in filled if is_number(number)] + sources.result_numbers()
    exact = [number for number in results if abs(number - value) <= half + 1e-9]
    if exact:  # the tool's value, rounded as the sentence rounds it
        source = exact[0]
        sentence.add({"number": round(source, 6), "tolerance": half, **entry}, False)
        return
    near = [number for number in sources.result_numbers(called) if abs(number - value) <= RELATIVE_SLACK * abs(value)]
    if near:
        source = min(near, key=lambda number: abs(number - value))
        tolerance = _rounded(max(half, abs(source - value)))
        sentence.add({"number": value, "tolerance": tolerance, **entry}, False)
        sentence.explained.append(read.text[mention.start:mention.end])
        sentence.notes.append(f"{where}: the reference says {value:g}, the witness's call (with the milestone's "
                              f"arguments) gives {source:.4g}; the fact takes the reference's value with a tolerance "
                              f"reaching the witness's ({value:g} ± {tolerance:g}), so an agent that searches the "
                              "offline data and one that uses the milestone's arguments both pass")
        return
    sentence.problems.append(f"{where}: states {read.text[mention.start:mention.end]!r}, which no tool result "
                             "of the witness, world value or word of the user gives")


def _value_facts(sentence: _Sentence, text: str, sources: Sources, called: Sequence[str], where: str,
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
            _number_fact(sentence, read, mention, sources, called, where, filled)


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
        others = sources.other_contacts(action, named)
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
    spoken = settings_spoken_of(text, settings)
    short = len(spoken) == 1
    for column, state in spoken.items():
        if not sentence.confirmation:
            sentence.facts.append({"any": [*state_phrases(column, state, short), *state_words(state),
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
    before = predecessors(scenario, name)
    action = action_rows(scenario, before)
    switched = settings_spoken_of(text, action_settings(scenario, before))
    sentence = _Sentence(confirmation=bool(action or switched))
    if INSUFFICIENT in scenario.categories and any(has_phrase(text, phrase) for phrase in CANNOT):
        sentence.facts.append({"any": list(CANNOT)})
        sentence.required += 1
        return sentence
    contains = _contains_targets(scenario.milestones[name])
    _name_facts(sentence, text, sources, action)
    named = [fact["name"] for fact in sentence.facts if isinstance(fact, dict) and "name" in fact]
    covered = [] if sentence.confirmation else _phrase_facts(sentence, text, sources, [*named, *contains])
    called = [tool for other in before for tool, _ in scenario.milestones[other].tool_call_alternatives()]
    _value_facts(sentence, text, sources, called, where, covered, filled)
    settings = {**sources.queried_settings(), **action_settings(scenario, before)}
    _state_facts(sentence, text, settings, is_yes_no_question(scenario.user.first_message))
    if sentence.confirmation:
        sentence.facts += [{"any": list(CONFIRMS)}, {"none": list(DENIALS)}]
    elif not sentence.required and not contains and not sentence.problems:
        sentence.problems.append(f"{where}: states no value that a tool result, the world or the user gives, so "
                                 "it cannot be judged by facts")
    return sentence


def derive(scenario: Scenario, trajectory: Trajectory, texts: dict[str, tuple[str, list[Any]]],
           returns: dict[str, str]) -> Derived:
    """Every fact of one imported base: per text milestone (its witness sentence and the values filled
    into it, in `texts`) and for the final answer (final_answers.py). `returns` maps each tool to what
    its documentation says it returns."""
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
    derived.final_answer = required + confirmation_details(scenario, sources)
    return derived
