"""Answers made from a text milestone's reference answer: wrong ones that must fail, right ones that must pass.

A text milestone's examples are written by its author, who rarely thinks of the answers that game a
check: the right value beside a wrong one, two values swapped, a digit off, a denial of the right
answer. This module writes those answers mechanically, from three sources: the milestone's facts
(what values the answer must state), the reference answer (where it states them) and the world
(which other contacts exist). Each value the reference answer states is located in its text and
changed in place, so a mutant differs from a right answer in exactly one thing.

Wrong answers (the item must fail): a digit transposed or off by one; the neighbouring hour, weekday
or month; another contact's name; the opposite word (on/off); the right value followed by a wrong
alternative; two values swapped between their places; a value no fact names (a phone number, time,
number or weekday of a confirmation) moved to its near miss; the whole answer denied; a bare "Done!"
claim; silence. Right answers (the item must pass): a number spelled out or with separators, a
time in the other clock, a date or phone number in another common format, units spelled out.

Everything is deterministic: the same scenario gives the same mutants in the same order, each with
an id (`kind: detail`) that a scenario file can name to waive it (`waive:` on the milestone).
"""

from __future__ import annotations

import datetime
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pytest_toolsandbox.evaluation.facts import Name, parsed_phone
from pytest_toolsandbox.scenario.final_answer import FinalAnswer
from pytest_toolsandbox.scenario.milestones import Milestone, TextMatch

DONE_CLAIM = "Done! I've taken care of that for you."
"""A success claim that states nothing: must never reach a milestone that asks for a value."""


@dataclass(frozen=True)
class Mutant:
    """One answer put in place of the reference answer; `wrong` answers must fail, the others pass."""

    id: str
    text: str
    wrong: bool


@dataclass(frozen=True)
class Span:
    """Where the reference answer states a value of a fact, and what kind of value it is."""

    start: int
    end: int
    kind: str  # number, time, weekday, month, name, phone, date, word
    tolerance: float = 0.0

    def of(self, text: str) -> str:
        return text[self.start:self.end]


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_OPPOSITES = {"on": "off", "off": "on", "enabled": "disabled", "disabled": "enabled", "yes": "no", "no": "yes",
              "connected": "disconnected", "disconnected": "connected", "true": "false", "false": "true",
              "sunny": "rainy", "rain": "sun", "higher": "lower", "lower": "higher", "north": "south",
              "south": "north", "east": "west", "west": "east"}
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])")
_TIME = re.compile(r"\b(\d{1,2})(?=:\d{2}|\s?[AaPp]\.?[Mm]\b)(?::(\d{2}))?(?::\d{2})?"
                   r"(\s?(?:[AaPp]\.[Mm]\.|[AaPp][Mm]\b))?")
"""A clock time: "11:00", "5 PM", "4:30pm", "17:45" (a bare number is not one)."""
_UNITS = (("°F", "degrees Fahrenheit"), ("°C", "degrees Celsius"), ("km", "kilometers"), ("mi", "miles"),
          ("%", "percent"), ("oz", "ounces"), ("kg", "kilograms"), ("lb", "pounds"), ("ml", "milliliters"),
          ("g", "grams"))
"""Unit symbols written right after a number (a space between or not), and their names."""
_CURRENCIES = (("€", "euros"), ("£", "pounds"), ("¥", "yen"))
"""Currency symbols written before a number, and their names written after it."""


def _word_pattern(phrase: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(phrase)}(?![\w])", re.IGNORECASE)


def _kind_of_word(value: str) -> str:
    if _TIME.fullmatch(value.strip()):
        return "time"
    if value.capitalize() in _WEEKDAYS:
        return "weekday"
    if value.capitalize() in _MONTHS:
        return "month"
    if re.search(r"\d", value):
        return "number" if _NUMBER.fullmatch(value.strip()) else "digits"
    return "word"


def _phrase_span(text: str, phrases: Sequence[str]) -> Span | None:
    """The first of `phrases` the text says, as a span (in the order the phrases are listed)."""
    for phrase in phrases:
        found = _word_pattern(phrase).search(text)
        if found:
            return Span(found.start(), found.end(), _kind_of_word(found.group()))
    return None


def _number_span(text: str, value: float, tolerance: float) -> Span | None:
    for found in _NUMBER.finditer(text):
        if abs(float(found.group().replace(",", "")) - value) <= tolerance + 1e-9 * max(1.0, abs(value)):
            return Span(found.start(), found.end(), "number", tolerance)
    return None


def _name_span(text: str, name: str) -> Span | None:
    parts = name.split()
    return next((Span(found.start(), found.end(), "name") for candidate in dict.fromkeys([name, *parts])
                 if (found := _word_pattern(candidate).search(text))), None)


def _phone_span(text: str, phone: str) -> Span | None:
    import phonenumbers

    target = parsed_phone(phone)
    region = phonenumbers.region_code_for_number(target) or "US"
    for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.POSSIBLE):
        if match.number.national_number == target.national_number:
            return Span(match.start, match.end, "phone")
    return None


def _date_forms(date: datetime.date) -> list[str]:
    month = _MONTHS[date.month - 1]
    return [f"{month} {date.day}", f"{date.day} {month}", f"{month[:3]} {date.day}", date.isoformat(),
            f"{date.month}/{date.day}"]


def _date_span(text: str, date: datetime.date) -> Span | None:
    for form in _date_forms(date):
        found = re.search(rf"(?<![\w/]){re.escape(form)}(?:st|nd|rd|th)?(?![\w/])", text, re.IGNORECASE)
        if found:
            return Span(found.start(), found.end(), "date")
    return None


def _clock(hour: int, minute: int, suffix: str | None) -> int:
    """Minutes after midnight of a clock time as written (12 AM is midnight, 12 PM noon)."""
    if suffix:
        hour = hour % 12 + (12 if suffix.strip().lower().startswith("p") else 0)
    return hour * 60 + minute


def _time_span(text: str, value: str) -> Span | None:
    wanted = _TIME.fullmatch(value.strip())
    if wanted is None:
        return None
    target = _clock(int(wanted.group(1)), int(wanted.group(2) or 0), wanted.group(3))
    for found in _TIME.finditer(text):
        written = _clock(int(found.group(1)), int(found.group(2) or 0), found.group(3))
        if written == target or (found.group(3) is None and written % 720 == target % 720):
            return Span(found.start(), found.end(), "time")
    return None


def fact_spans(fact: Any, text: str) -> list[Span | None]:
    """Where `text` states the value of one fact. A fact is read by its value field, so kinds written
    later (a time, coordinates, a `contains` claim) are mutated like the first ones."""
    fields = fact.model_dump(exclude_none=True) if hasattr(fact, "model_dump") else {}
    if "number" in fields:
        return [_number_span(text, fields["number"], fields.get("tolerance") or 0.0)]
    if "coordinates" in fields:
        slack = fields.get("tolerance") or 0.0
        return [_number_span(text, value, slack) or _number_span(text, abs(value), slack)  # "122.03° W"
                for value in fields["coordinates"]]
    if "phone" in fields:
        return [_phone_span(text, fields["phone"])]
    if "date" in fields:
        return [_date_span(text, fields["date"])]
    if "time" in fields:
        return [_time_span(text, str(fields["time"]))]
    if "name" in fields:
        return [_name_span(text, fields["name"])]
    if "any" in fields:
        return [_phrase_span(text, fields["any"])]
    for key in ("phrase", "contains"):
        if key in fields:
            return [_phrase_span(text, [fields[key]])]
    return []


def value_spans(milestone: Milestone | FinalAnswer, text: str) -> list[Span]:
    """Where `text` states each value the milestone's facts (or `contains` targets) ask for, in order; a
    final answer's facts alike (it has no text targets)."""
    spans = [span for fact in milestone.facts or [] for span in fact_spans(fact, text)]
    for said in milestone.said("agent_says") if isinstance(milestone, Milestone) else ():
        if isinstance(said, TextMatch) and said.match == "contains":
            spans.append(_phrase_span(text, [said.text]))
    unique: dict[tuple[int, int], Span] = {}
    for span in spans:
        if span is not None and not any(span.start < other.end and other.start < span.end for other in unique.values()):
            unique[(span.start, span.end)] = span
    return sorted(unique.values(), key=lambda span: span.start)


def _digit_positions(value: str) -> list[int]:
    return [position for position, char in enumerate(value) if char.isdigit()]


def _transposed(value: str) -> str | None:
    """The rightmost pair of adjacent, different digits swapped (92 → 29, 629.37 → 629.73; never across a
    separator, so 92.0 → 29.0)."""
    digits = _digit_positions(value)
    for left, right in reversed(list(itertools.pairwise(digits))):
        if right == left + 1 and value[left] != value[right]:
            chars = list(value)
            chars[left], chars[right] = chars[right], chars[left]
            return "".join(chars)
    return None


def _place_values(value: str) -> dict[int, float]:
    """Each digit's place value in a decimal number written in `value` (1 for digit strings)."""
    digits = _digit_positions(value)
    point = value.find(".")
    places = {}
    for position in digits:
        if point == -1:
            after = sum(1 for other in digits if other > position)
            places[position] = 10.0 ** after
        elif position < point:
            places[position] = 10.0 ** sum(1 for other in digits if position < other < point)
        else:
            places[position] = 10.0 ** -sum(1 for other in digits if point < other <= position)
    return places


def _neighbour(value: str, tolerance: float = 0.0) -> str | None:
    """One digit moved by one, at the smallest place the tolerance cannot absorb (92 ±0.5 → 93)."""
    places = _place_values(value)
    for position in sorted(places, key=lambda p: places[p]):
        if places[position] > tolerance + 1e-12:
            digit = int(value[position])
            return value[:position] + str(digit + 1 if digit < 9 else digit - 1) + value[position + 1:]
    return None


def _neighbour_hour(value: str) -> str | None:
    found = _TIME.search(value)
    if not found:
        return None
    hour = int(found.group(1))
    twelve = found.group(3) is not None
    later = hour % 12 + 1 if twelve else (hour + 1) % 24
    return value[:found.start(1)] + str(later).rjust(len(found.group(1)), "0") + value[found.end(1):]


def _next_in(names: Sequence[str], value: str) -> str:
    following = names[(next(i for i, name in enumerate(names) if name.lower() == value.lower()) + 1) % len(names)]
    return following.lower() if value.islower() else following


def _another_phone(value: str, phones: Sequence[str]) -> str | None:
    """Another contact's number (E.164 in `phones`), written the way `value` is written."""
    import phonenumbers

    digits = re.sub(r"\D", "", value)
    for phone in phones:
        number = parsed_phone(phone)
        if str(number.national_number) in digits:
            continue
        form = (phonenumbers.PhoneNumberFormat.NATIONAL if value.lstrip().startswith("(")
                else phonenumbers.PhoneNumberFormat.E164 if re.fullmatch(r"\+?\d+", value.strip())
                else phonenumbers.PhoneNumberFormat.INTERNATIONAL)
        return phonenumbers.format_number(number, form)
    return None


def wrong_values(span: Span, value: str, contacts: Sequence[str], phones: Sequence[str] = ()
                 ) -> Iterator[tuple[str, str]]:
    """(kind, wrong value) pairs for one stated value, the most telling first."""
    if span.kind == "phone" and (other_phone := _another_phone(value, phones)) is not None:
        yield "another contact's number", other_phone
    if span.kind == "time" and (hour := _neighbour_hour(value)) is not None:
        yield "neighbouring hour", hour
    if span.kind == "weekday":
        yield "neighbouring day", _next_in(_WEEKDAYS, value)
    if span.kind == "month":
        yield "neighbouring month", _next_in(_MONTHS, value)
    if span.kind == "name" or (span.kind == "word" and value in contacts):
        other = next((name for name in contacts if value.lower() not in name.lower()), None)
        if other is not None:
            yield "another contact", other if " " in value else other.split()[0]
    if span.kind == "word" and value.lower() in _OPPOSITES:
        opposite = _OPPOSITES[value.lower()]
        yield "opposite", opposite.capitalize() if value[:1].isupper() else opposite
    if span.kind == "date":
        yield from _neighbouring_date(value)
        return
    if span.kind in ("number", "digits", "time", "phone"):
        if (moved := _neighbour(value, span.tolerance)) is not None:
            yield "neighbouring digit", moved
        if (swapped := _transposed(value)) is not None and swapped != value:
            yield "transposed digits", swapped


def _neighbouring_date(value: str) -> Iterator[tuple[str, str]]:
    """The next day, written the way the answer wrote the date ("March 31" → "April 1")."""
    for month_number, month in enumerate(_MONTHS, start=1):
        found = re.fullmatch(rf"({month}|{month[:3]})\s+(\d+)(st|nd|rd|th)?", value, re.IGNORECASE)
        if found:
            day = datetime.date(2000, month_number, int(found.group(2))) + datetime.timedelta(days=1)
            name = _MONTHS[day.month - 1] if len(found.group(1)) > 3 else _MONTHS[day.month - 1][:3]
            yield "neighbouring day", f"{name} {day.day}"
            return
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        yield "neighbouring day", (datetime.date.fromisoformat(value) + datetime.timedelta(days=1)).isoformat()


@lru_cache(maxsize=1024)
def _spelled(number: float) -> str | None:
    from num2words import num2words  # loaded when a milestone states a number, not at import

    return num2words(int(number)) if number == int(number) and 0 <= number < 10_000 else None


def _between_words(text: str, span: Span) -> bool:
    """Whether the value stands between spaces with a word after it ("92 euros", not "$92" or "81%")."""
    return (span.start == 0 or text[span.start - 1] == " ") and re.match(r" [^\W\d_]", text[span.end:]) is not None


def right_values(span: Span, value: str, text: str) -> Iterator[tuple[str, str]]:
    """(kind, other form) pairs: the same value written another way a careful judge accepts."""
    if span.kind == "number":
        number = float(value.replace(",", ""))
        if (words := _spelled(number)) is not None and _between_words(text, span):
            yield "spelled out", words
        if "." in value:  # the same decimal with one zero more or fewer: 92.0 → 92, 14.2 → 14.20
            shorter = value.rstrip("0").rstrip(".")
            yield "decimal places", shorter if shorter != value else value + "0"
        if number >= 1000 and "," not in value:
            yield "thousands separator", f"{int(number):,}" + (value[value.find("."):] if "." in value else "")
    if span.kind == "time":
        yield from _other_clock(value)
    if span.kind == "phone":
        yield from _phone_forms(value)
    if span.kind == "date":
        yield from _date_forms_of(value)


def _other_clock(value: str) -> Iterator[tuple[str, str]]:
    found = _TIME.fullmatch(value.strip())
    if not found:
        return
    hour, minute, suffix = int(found.group(1)), found.group(2) or "00", found.group(3)
    if suffix:
        afternoon = suffix.strip().lower().startswith("p")
        yield "24-hour clock", f"{hour % 12 + (12 if afternoon else 0):02d}:{minute}"
    else:
        yield "12-hour clock", f"{(hour - 1) % 12 + 1}:{minute} {'PM' if hour >= 12 else 'AM'}"


def _phone_forms(value: str) -> Iterator[tuple[str, str]]:
    import phonenumbers

    try:
        number = parsed_phone(value)
    except phonenumbers.NumberParseException:
        return
    for kind, form in (("international format", phonenumbers.PhoneNumberFormat.INTERNATIONAL),
                       ("national format", phonenumbers.PhoneNumberFormat.NATIONAL),
                       ("E.164 format", phonenumbers.PhoneNumberFormat.E164)):
        written = phonenumbers.format_number(number, form)
        if written != value:
            yield kind, written


def _date_forms_of(value: str) -> Iterator[tuple[str, str]]:
    for month_number, month in enumerate(_MONTHS, start=1):
        found = re.fullmatch(rf"(?:{month}|{month[:3]})\s+(\d+)(?:st|nd|rd|th)?", value, re.IGNORECASE)
        if found:
            day = int(found.group(1))
            yield "day before month", f"{day} {month}"
            yield "numeric date", f"{month_number}/{day}"
            return


def _replace(text: str, span: Span, value: str) -> str:
    return text[:span.start] + value + text[span.end:]


_LEADING_ANSWER = re.compile(r"^(?:yes|no|done|sure|okay|ok)\b[,.!:]?\s*", re.IGNORECASE)


def _denied(text: str, names: Sequence[str]) -> str:
    """The whole answer denied: "It is not true that <the answer, without a leading yes/no/done>."; its
    first word keeps its capital when it is "I…" or part of a name."""
    claim = _LEADING_ANSWER.sub("", text).rstrip(".!")
    first = claim.split(" ", 1)[0]
    proper = (first.startswith("I") and (len(first) == 1 or first[1] == "'")) or any(
        first in name.split() for name in names)
    return f"It is not true that {claim if proper else claim[:1].lower() + claim[1:]}."


_NEAR_MISSES = ("neighbouring hour", "neighbouring day", "neighbouring digit")
"""The one mutant of a value no fact names, in order of preference."""


def _phone_spans(text: str) -> list[Span]:
    """Every phone number the text gives (a number in several groups is one value, not several)."""
    import phonenumbers

    return [Span(match.start, match.end, "phone")
            for match in phonenumbers.PhoneNumberMatcher(text, "US", leniency=phonenumbers.Leniency.POSSIBLE)]


def _other_values(text: str, spans: Sequence[Span]) -> list[Span]:
    """The phone numbers, clock times, numbers and weekdays the answer states that no fact located: a changed
    one makes the answer wrong too, so each gets one wrong mutant ("unchecked value")."""
    found = _phone_spans(text) + [Span(m.start(), m.end(), "time") for m in _TIME.finditer(text)]
    found += [Span(m.start(), m.end(), "number") for m in _NUMBER.finditer(text)]
    found += [Span(m.start(), m.end(), "weekday") for m in re.finditer("|".join(rf"\b{day}\b" for day in _WEEKDAYS),
                                                                        text)]
    taken = list(spans)
    others = []
    for span in found:
        if not any(span.start < other.end and other.start < span.end for other in taken):
            taken.append(span)
            others.append(span)
    return sorted(others, key=lambda span: span.start)


def _swaps(text: str, spans: Sequence[Span]) -> Iterator[tuple[str, str]]:
    """Each stated value exchanged with another value of its kind in the answer (two values swapped
    between their labels): the two amounts of a conversion, Saturday's and Sunday's highs."""
    numbers = [Span(found.start(), found.end(), "number") for found in _NUMBER.finditer(text)]
    for span in spans:
        if span.kind != "number":
            continue
        value = span.of(text)
        other = next((o for o in numbers if o.start != span.start and o.of(text) != value
                      and not (o.start < span.end and span.start < o.end)), None)
        if other is None:
            continue
        first, second = sorted([span, other], key=lambda s: s.start)
        swapped = (text[:first.start] + second.of(text) + text[first.end:second.start] + first.of(text)
                   + text[second.end:])
        yield f"swapped values: {value} ↔ {other.of(text)}", swapped


def mutants(milestone: Milestone | FinalAnswer, reference: str, contacts: Sequence[str], phones: Sequence[str] = ()
            ) -> list[Mutant]:
    """Every mutant of one text milestone (or of a scenario's final answer) whose reference answer is
    `reference` (see the module docstring).

    `contacts` and `phones` are the world's contact names and numbers (E.164), each in a stable order
    (the "another contact" mutants).
    """
    found: dict[str, Mutant] = {}

    def add(identifier: str, text: str, wrong: bool) -> None:
        if text != reference and text not in {mutant.text for mutant in found.values()} and identifier not in found:
            found[identifier] = Mutant(identifier, text, wrong)

    spans = value_spans(milestone, reference)
    for span in spans:
        value = span.of(reference)
        wrong = list(wrong_values(span, value, contacts, phones))
        for kind, other in wrong:
            add(f"{kind}: {value} → {other}", _replace(reference, span, other), True)
        if wrong:
            add(f"right value and an alternative: {value} or {wrong[0][1]}",
                _replace(reference, span, f"{value} or {wrong[0][1]}"), True)
        for kind, other in right_values(span, value, reference):
            add(f"{kind}: {value} → {other}", _replace(reference, span, other), False)
    for identifier, text in _swaps(reference, spans):
        add(identifier, text, True)
    for span in _other_values(reference, spans):  # a value no fact names: a removed fact shows here
        value = span.of(reference)
        wrong = sorted(wrong_values(span, value, contacts, phones), key=lambda pair: _NEAR_MISSES.index(pair[0])
                       if pair[0] in _NEAR_MISSES else len(_NEAR_MISSES))
        for kind, other in wrong[:1]:  # a near miss first: the usual slip in a confirmation
            add(f"unchecked value, {kind}: {value} → {other}", _replace(reference, span, other), True)
    for identifier, text in _spelled_units(reference):
        add(identifier, text, False)
    names = [*contacts, *(fact.name for fact in milestone.facts or [] if isinstance(fact, Name))]
    add("negation", _denied(reference, names), True)
    add("done claim", DONE_CLAIM, True)
    add("silence", "", True)
    return list(found.values())


def _spelled_units(text: str) -> Iterator[tuple[str, str]]:
    """The answer with one unit or currency symbol written out: "14.2°C" → "14.2 degrees Celsius"."""
    for symbol, name in _UNITS:
        pattern = re.compile(rf"(?<=\d)\s?{re.escape(symbol)}(?![^\W\d_])")
        if pattern.search(text):
            yield f"units spelled out: {symbol} → {name}", pattern.sub(f" {name}", text)
    for symbol, name in _CURRENCIES:
        pattern = re.compile(rf"{re.escape(symbol)}\s?(\d[\d,]*(?:\.\d+)?)")
        if pattern.search(text):
            yield f"currency spelled out: {symbol} → {name}", pattern.sub(rf"\1 {name}", text)


def contact_names(world_contacts: Sequence[dict[str, Any]]) -> list[str]:
    """The world's contact names, sorted, for the "another contact" mutants."""
    return sorted({str(row["name"]) for row in world_contacts if row.get("name")})


def contact_phones(world_contacts: Sequence[dict[str, Any]]) -> list[str]:
    """The world's contact numbers in international form, sorted, for the "another contact's number" mutants."""
    return sorted({str(row["phone_number"]) for row in world_contacts
                   if str(row.get("phone_number") or "").startswith("+")})
