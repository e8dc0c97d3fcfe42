"""Facts: what makes an agent's answer right, checked on its text.

ROUGE-L measures wording, so a correct paraphrase scores 0.8–0.9 while a wrong answer that reuses the
reference's words scores higher. A milestone's verdict therefore rests on facts, small checks a human
judge would make: the phrase "off" is said, no phrase "couldn't" is, the number 5.63 is stated, the
answer is yes, Fredrik Thordendal is named, the phone number, the date, the time or the duration is
given.

A judge reads claims, not strings, and so do facts (clauses.py, values.py):

- a value counts only where the answer asserts it: "No, it is not true that X", "I could not send
  it" and "it is not 5:45" assert nothing; forbidden phrases ignore quotations and denied clauses;
- a value is exclusive: an answer that also gives another value of the same kind ("5:57 or 5:45",
  "between £557 and £597", "possibly Thursday") fails, unless that value belongs to another fact of
  the milestone or to the fact's `allow` list (the user's own figures, a feels-like temperature);
- a value is bound to what it names: with `unit` a value in another unit of the same quantity is
  another claim (14.2 °F is not 14.2 °C; a correct conversion is fine), and with `label` a value
  written next to another fact's label ("Sunday's high") belongs to that fact;
- a value the answer only guesses ("possibly", "not sure", "one of") is not stated.

Entries as written in scenario files:

    off                                   the phrase is said
    {any: [off, disabled]}                at least one of the phrases is said
    {none: [on, "couldn't", unable]}      none of the phrases is said (outside quotes and denials)
    {number: 5.63, tolerance: 0.05}       the number is stated (unit, label and allow optional)
    {yes: true} / {yes: false}            the text answers yes (resp. no)
    {name: Fredrik Thordendal}            the person is named (full, first or last name)
    {phone: "+12453344098"}               the phone number is given, in any common formatting
    {date: 2026-05-25}                    the date is given ("May 25", "25th of May", "5/25", ISO)
    {time: "17:00"}                       the time of day is given ("5 pm", "five in the afternoon")
    {duration: 2 h 25 min}                the duration is given ("2 hours and 25 minutes", "145 minutes")
    {coordinates: [37.323, -122.0322]}    the position is given, sign-aware ("122.0322° W" is negative)
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from pytest_toolsandbox.evaluation.clauses import Layout, layout
from pytest_toolsandbox.evaluation.units import comparable, convert, unit_named
from pytest_toolsandbox.evaluation.values import (
    UNIFORM,
    Mention,
    Reading,
    clock_minutes,
    duration_seconds,
    weekday_name,
)

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_HYPHENS = frozenset("-‐‑")


@lru_cache(maxsize=4096)
def words(text: str) -> tuple[str, ...]:
    """Lower-case words (any script); an apostrophe inside a word keeps it whole ("couldn't" is not
    "not"); a hyphen separates ("Wi-Fi" is "wi", "fi")."""
    return tuple(_WORD.findall(text.lower().translate(UNIFORM)))


@lru_cache(maxsize=4096)
def _token_forms(text: str) -> tuple[tuple[tuple[str, int, int], ...], ...]:
    """The text's words with their spans, and the same with words joined across a hyphen between
    letters ("Wi-Fi" also as "wifi", spanning "Wi-Fi")."""
    lowered = text.lower().translate(UNIFORM)
    tokens = tuple((match.group(0), match.start(), match.end()) for match in _WORD.finditer(lowered))
    joined: list[tuple[str, int, int]] = []
    for word, start, end in tokens:
        previous = joined[-1] if joined else None
        if (previous and start == previous[2] + 1 and lowered[previous[2]] in _HYPHENS
                and previous[0][-1].isalpha() and word[0].isalpha()):
            joined[-1] = (previous[0] + word, previous[1], end)
        else:
            joined.append((word, start, end))
    return (tokens,) if tuple(joined) == tokens else (tokens, tuple(joined))


def _word_matches(found: str, wanted: str) -> bool:
    return found == wanted or found == wanted + "'s"  # "Fredrik's" names Fredrik


def phrase_spans(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where in `text` the words of `phrase` occur consecutively (the last may be possessive), with or
    without hyphens between letters: "wifi" matches "Wi-Fi" and "wi-fi" matches "wifi"."""
    found = set()
    for wanted in {tuple(word for word, _, _ in form) for form in _token_forms(phrase)} - {()}:
        width = len(wanted)
        for tokens in _token_forms(text):
            for first in range(len(tokens) - width + 1):
                if all(tokens[first + offset][0] == wanted[offset] for offset in range(width - 1)) and \
                        _word_matches(tokens[first + width - 1][0], wanted[-1]):
                    found.add((tokens[first][1], tokens[first + width - 1][2]))
    return sorted(found)


def has_phrase(text: str, phrase: str) -> bool:
    """Whether the phrase occurs in the text at all (asserted or not); see `phrase_spans`."""
    return bool(phrase_spans(text, phrase))


def _stated(text: str, span: tuple[int, int]) -> bool:
    """Whether the words at `span` are stated by the answer: not denied, not guessed in their clause
    ("might be off"), not one of alternatives ("partner or neighbor")."""
    spans, (start, end) = layout(text), span
    return spans.asserted(start) and not spans.hedged_clause(start) and not spans.alternative(start, end)


def _asserted(text: str, phrase: str) -> bool:
    return any(_stated(text, span) for span in phrase_spans(text, phrase))


def _said_outright(text: str, phrase: str) -> bool:
    """Said by the answer itself: outside quotations, and not denied ("wifi is off, not on")."""
    spans = layout(text)
    return any(spans.asserted(start) and not spans.quoted(start) for start, _ in phrase_spans(text, phrase))


def _quoted(phrases: Sequence[str]) -> str:
    return ", ".join(f'"{phrase}"' for phrase in phrases)


@lru_cache(maxsize=1024)
def reading(text: str) -> Reading:
    """The values of a text, read once for all the facts checked on it."""
    return Reading(text)


class _Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def holds(self, text: str, siblings: Sequence[Fact] = ()) -> bool:
        """Whether the fact holds on `text`; `siblings` are the other facts of its milestone."""
        return self.failure(text, siblings) is None

    def failure(self, text: str, siblings: Sequence[Fact] = ()) -> str | None:
        """Why the fact fails on `text`, as a verb phrase (`does not say "off"`), or None if it holds."""
        raise NotImplementedError

    def describe(self) -> str:
        """What the fact requires, as a verb phrase: `say "off"`, `answer yes`."""
        raise NotImplementedError


class Phrase(_Fact):
    """A plain string: the phrase is said, not denied ("I couldn't turn it off" does not say "off")."""

    phrase: str = Field(min_length=1)

    def failure(self, text: str, siblings: Sequence[Fact] = ()) -> str | None:
        return None if _asserted(text, self.phrase) else f"does not {self.describe()}"

    def describe(self) -> str:
        return f'say "{self.phrase}"'


class Stated(_Fact):
    """A `contains` text target, read as a claim: the text occurs (case-sensitive, anywhere, as the
    target says) at least once where the answer states it: not denied, not guessed, not one of
    alternatives ("400 Broad St or 400 Pine St"). Made by the compiler, not written in scenario files."""

    contains: str = Field(min_length=1)

    def failure(self, text: str, siblings: Sequence[Fact] = ()) -> str | None:
        found = [(match.start(), match.end()) for match in re.finditer(re.escape(self.contains), text)]
        return None if any(_stated(text, span) for span in found) else f"does not {self.describe()}"

    def describe(self) -> str:
        return f'state "{self.contains}"'


class AnyOf(_Fact):
    """`{any: [...]}`: at least one of the phrases is said (synonyms, e.g. off / disabled)."""

    any: list[str] = Field(min_length=1)

    def failure(self, text: str, siblings: Sequence[Fact] = ()) -> str | None:
        return None if any(_asserted(text, phrase) for phrase in self.any) else f"does not {self.describe()}"

    def describe(self) -> str:
        return f"say one of {_quoted(self.any)}"


class NoneOf(_Fact):
    """`{none: [...]}`: none of the phrases is said by the answer itself: a quotation ("Priya wrote
    'I can't'") or a denied clause ("off, not on") does not count."""

    none: list[str] = Field(min_length=1)
    quotes: bool = False
    """Also judge quoted text: where what the answer quotes is its claim ("she wrote: '…lunch…'")."""

    def failure(self, text: str, siblings: Sequence[Fact] = ()) -> str | None:
        said = _asserted if self.quotes else _said_outright
        offending = next((phrase for phrase in self.none if said(text, phrase)), None)
        return None if offending is None else f'says "{offending}"'

    def describe(self) -> str:
        return f"say none of {_quoted(self.none)}"


_AFFIRMATIVE = frozenset({"yes", "yeah", "yep", "yup", "affirmative", "correct", "indeed"})
_NEGATIVE = frozenset({"no", "nope", "nah", "negative"})
_NOT_AN_ANSWER = frozenset({("no", "problem"), ("no", "worries")})
_NEGATIVE_OPENINGS = frozenset({("not", "at"), ("not", "really"), ("certainly", "not"), ("absolutely", "not"),
                                ("definitely", "not"), ("of", "course", "not")})
_ANSWER_CLAUSE_END = re.compile(r"[.,;:!?—–()\n]|\s-\s")
_DENIED_ANSWER = re.compile(
    r"\b(?:not|n't)\s+(?:true|the\s+case|correct|right)\s+that\s+(?:yes|no|yeah|nope|indeed)\b"
    r"|\b(?:false|incorrect|wrong|untrue)\s+that\s+(?:yes|no|yeah|nope|indeed)\b", re.IGNORECASE)


_BOTH_ANSWERS = re.compile(r"\b(?:yes|no)\s*(?:,\s*)?(?:or|and|/)\s*(?:yes|no)\b", re.IGNORECASE)


def yes_or_no(text: str) -> bool | None:
    """The answer a text gives to a yes/no question: True (yes), False (no) or None (neither).

    The first clause (text between punctuation) that starts with an answer word decides: "Yes, it
    is on." and "Let me check. No, it is off." answer; "There are no messages." does not (its clause
    starts with "there"), nor does "No problem, ..." (a politeness, not an answer). An answer word
    followed by "not" is a no ("Indeed not.", "Certainly not."). A text that denies an answer word
    ("No, it is not true that no, …") takes both sides and so answers nothing.
    """
    if _DENIED_ANSWER.search(text.translate(UNIFORM)):
        return None
    for clause in _ANSWER_CLAUSE_END.split(text):
        clause_words = words(clause)
        if not clause_words:
            continue
        if any(clause_words[:len(negative)] == negative for negative in _NEGATIVE_OPENINGS):
            return False
        first = clause_words[0]
        if first in _AFFIRMATIVE:
            return not (len(clause_words) > 1 and clause_words[1] == "not")
        if first in _NEGATIVE and clause_words[:2] not in _NOT_AN_ANSWER:
            return False
    return None


class YesNo(_Fact):
    """`{yes: true}` / `{yes: false}`: the text answers yes (resp. no); see `yes_or_no`."""

    yes: bool
    required: bool = True
    """False: the answer need not say yes or no ("Low battery mode is on."), but if it does, rightly."""

    def failure(self, text: str, siblings: Sequence[Fact] = ()) -> str | None:
        if _BOTH_ANSWERS.search(text):
            return "answers both yes and no"
        answer = yes_or_no(text)
        if answer is self.yes or (answer is None and not self.required):
            return None
        return "does not answer yes or no" if answer is None else f"answers {'yes' if answer else 'no'}"

    def describe(self) -> str:
        return "answer yes" if self.yes else "answer no"


class Name(_Fact):
    """`{name: Fredrik Thordendal}`: the full name, the first name or the last name is said."""

    name: str = Field(min_length=1)

    def failure(self, text: str, siblings: Sequence[Fact] = ()) -> str | None:
        parts = self.name.split()
        full = phrase_spans(text, self.name)
        spans = [*full, *(span for part in {parts[0], parts[-1]} for span in phrase_spans(text, part)
                          if not any(start <= span[0] < end for start, end in full))]  # "Kenji" of "Kenji Watanabe"
        return None if any(_stated(text, span) for span in spans) else f"does not {self.describe()}"

    def describe(self) -> str:
        return f"name {self.name}"


Labels = str | list[str] | None


class _Value(_Fact):
    """A fact about one value the answer states: asserted, not guessed, not given with rivals, and,
    with a `label`, written next to that label rather than next to another fact's."""

    allow: list[Any] = Field(default_factory=list)
    label: Labels = None
    required: bool = True
    """False: the answer need not give the value, but a value it gives must be this one (a confirmation
    whose action a state milestone proves is judged by the details it states)."""

    _allowed_facts: tuple[_Value, ...] = PrivateAttr(default=())
    """The `allow` values as facts of this kind, parsed once here rather than at every mention judged."""

    @model_validator(mode="after")
    def _allowed_values_parse(self) -> _Value:
        # a bad entry is a load error naming its value, not a crash when judging
        self._allowed_facts = tuple(self._with_value(value) for value in self.allow)
        return self

    def _labels(self) -> tuple[str, ...]:
        return () if self.label is None else (self.label,) if isinstance(self.label, str) else tuple(self.label)

    def _mentions(self, read: Reading) -> list[Mention]:
        raise NotImplementedError

    def _matches(self, mention: Mention) -> bool:
        raise NotImplementedError

    def _rival(self, mention: Mention) -> bool:
        """Whether a mention speaks of the same kind of thing (so a different value contradicts)."""
        return True

    def _with_value(self, value: Any) -> _Value:
        raise NotImplementedError

    def _allowed(self, mention: Mention, siblings: Sequence[Fact]) -> bool:
        """Whether a different value may stand beside this one: another fact's, or listed in `allow`."""
        others = [sibling for sibling in siblings if isinstance(sibling, type(self)) and sibling is not self]
        return any(other._matches(mention) for other in (*others, *self._allowed_facts))

    def failure(self, text: str, siblings: Sequence[Fact] = ()) -> str | None:
        read = reading(text)
        spans = read.layout
        own = {label.lower() for label in self._labels()}
        labels = own | {label.lower() for sibling in siblings if isinstance(sibling, _Value)
                        for label in sibling._labels()}
        right: list[Mention] = []
        wrong: list[Mention] = []
        mentions = self._mentions(read)
        for mention in mentions:
            if not spans.asserted(mention.start):
                continue
            bound = _bound_label(read.text, spans, mention, mentions, labels)
            if bound is not None and bound not in own:
                continue  # another fact's value, judged there
            if self._matches(mention):
                right.append(mention)
            elif self._rival(mention) and not self._allowed(mention, () if bound else siblings):
                # next to its own label only `allow`ed values may differ: a sibling's value there is a swap
                wrong.append(mention)
        if not right and (self.required or wrong):
            return f"does not {self.describe()}" if not wrong else (
                f"gives {', '.join(repr(read.text[mention.start:mention.end]) for mention in wrong)} instead: "
                f"it should {self.describe()}")
        if wrong:
            given = ", ".join(f'"{read.text[mention.start:mention.end]}"' for mention in wrong)
            return f"{self.describe_value()} but also {given}"
        if any(spans.hedges(mention.start) for mention in right):
            return f"only guesses {self.describe_value().removeprefix('gives ')}"
        return None

    def describe_value(self) -> str:
        """The value as given, for a failure message: `gives 5:57 pm`."""
        return f"gives {self.describe().partition(' ')[2]}"


def _bound_label(text: str, spans: Layout, mention: Mention, mentions: Sequence[Mention],
                 labels: set[str]) -> str | None:
    """The label a value is written next to: the nearest in its clause ("Saturday's high is 8.1 °C and
    Sunday's is 13.4 °C"); else, in its sentence, the nearest label between it and its neighbouring
    values, looking first the way the sentence runs: backwards where labels come first ("On
    Saturday, 8.1 °C, and on Sunday, 13.4 °C"), forwards where values do ("at 2:30 PM, dig out the
    tent, and at 3:30 PM, send the report"). A label in another value's clause is that value's ("$121.75,
    up $3.12": "up" is the change's). None when its sentence names no label for it."""
    if not labels:
        return None
    clause, sentence = spans.clause_of(mention.start), spans.sentence_of(mention.start)
    taken = {spans.clause_of(other.start) for other in mentions if other is not mention}
    places = sorted((start, label) for label in labels for start, _ in phrase_spans(text, label)
                    if sentence[0] <= start < sentence[1]
                    and (spans.clause_of(start) == clause or spans.clause_of(start) not in taken))
    in_clause = [(abs(start - mention.start), label) for start, label in places if clause[0] <= start < clause[1]]
    if in_clause:
        return min(in_clause)[1]
    following = min((other.start for other in mentions if other.start > mention.start), default=sentence[1])
    preceding = max((other.end for other in mentions if other.end <= mention.start), default=sentence[0])
    after = [label for start, label in places if mention.end <= start < following]
    before = [label for start, label in places if preceding <= start < mention.start]
    in_sentence = [other.start for other in mentions if sentence[0] <= other.start < sentence[1]]
    labels_lead = bool(places) and places[0][0] < min(in_sentence)  # the value itself is in its sentence
    nearest = [before[-1:], after[:1]] if labels_lead else [after[:1], before[-1:]]
    return next((found[0] for found in nearest if found), None)


_YEAR = range(1900, 2101)


class Number(_Value):
    """`{number: 5.63, tolerance: 0.05, unit: km, label: high, allow: [3]}`: the number is stated
    within the absolute tolerance; with `unit`, in that unit or correctly converted to another of the
    same quantity. A different number of the same kind (any other unitless number, or one in a unit
    of the same quantity) contradicts it unless `allow`ed or another fact's."""

    number: float = Field(allow_inf_nan=False)
    tolerance: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    unit: str | None = None

    @field_validator("unit")
    @classmethod
    def _known_unit(cls, value: str | None) -> str | None:
        return None if value is None else unit_named(value)

    def _mentions(self, read: Reading) -> list[Mention]:
        found = read.numbers
        return found + read.small_number_words() if self.number in (0, 1, 2, 3) else found

    def _matches(self, mention: Mention) -> bool:
        value = mention.values[0]
        slack = self.tolerance + 1e-9 * max(1.0, abs(self.number))  # decimal text vs binary float
        if self.unit is None or mention.unit is None:
            return abs(value - self.number) <= slack
        if not comparable(mention.unit, self.unit):
            return False
        target = convert(self.number, self.unit, mention.unit)
        if mention.unit == self.unit:
            return abs(value - target) <= slack
        scale = abs(convert(self.number + 1.0, self.unit, mention.unit) - target)
        # converted: within the tolerance in the mention's unit, or the value rounded as written ("≈ 33 °F")
        return abs(value - target) <= self.tolerance * scale + 1e-9 or round(target, mention.decimals) == value

    def _rival(self, mention: Mention) -> bool:
        if mention.kind != "number":
            return False  # an ordinal ("the 3rd") or a small number word counts for the number, contradicts nothing
        value = mention.values[0]
        if mention.unit is None and value.is_integer() and int(value) in _YEAR and not 1000 <= self.number <= 3000:
            return False  # a year
        if self.unit is None:
            return mention.unit is None
        if mention.unit is None:
            return mention.counts is None  # "8 shares" counts shares, not pounds
        return comparable(mention.unit, self.unit)

    def _with_value(self, value: Any) -> _Value:
        # constructed, not validated: the unit is already canonical, which `unit_named` would not accept
        return Number.model_construct(number=float(value), tolerance=self.tolerance, unit=self.unit)

    def _allowed(self, mention: Mention, siblings: Sequence[Fact]) -> bool:
        positions = [sibling for sibling in siblings if isinstance(sibling, Coordinates)]
        value = mention.values[0]
        return super()._allowed(mention, siblings) or any(
            abs(abs(value) - abs(axis)) <= position.tolerance + 1e-9
            for position in positions for axis in position.coordinates)

    def describe(self) -> str:
        within = f" (±{self.tolerance:.10g})" if self.tolerance else ""
        unit = f" {self.unit}" if self.unit else ""
        label = f" for {self._labels()[0]}" if self.label else ""
        return f"state the number {self.number:.10g}{unit}{within}{label}"


@lru_cache(maxsize=256)
def parsed_phone(phone: str) -> Any:
    """A phone number as written in a scenario file, a world or an answer: international with "+", else a
    US number; phonenumbers' NumberParseException when it is none. The one reading of a single number, so
    facts and the mutants made from them agree on what a number is."""
    import phonenumbers  # a tenth of a second: loaded when a phone fact is first checked, not at collection

    phone = phone.strip()
    return phonenumbers.parse(phone, None if phone.startswith("+") else "US")


def _phone_key(phone: str) -> tuple[int, int]:
    number = parsed_phone(phone)
    return number.country_code, number.national_number


class Phone(_Value):
    """`{phone: "+12453344098"}`: the number is given, international or national, any separators; the
    country must agree ("+44 245 334 4098" is another number) and no other number may be given."""

    phone: str = Field(min_length=1)

    @field_validator("phone")
    @classmethod
    def _a_phone_number(cls, value: str) -> str:
        import phonenumbers

        try:
            parsed_phone(value)
        except phonenumbers.NumberParseException as error:
            raise ValueError(f"{value!r} is not a phone number ({error}); write it in international form, "
                             "e.g. +12453344098") from None
        return value

    def _mentions(self, read: Reading) -> list[Mention]:
        return read.phones

    def _matches(self, mention: Mention) -> bool:
        return mention.values[0] == _phone_key(self.phone)

    def _with_value(self, value: Any) -> _Value:
        return Phone(phone=str(value))

    def describe(self) -> str:
        return f"give the phone number {self.phone}"


class Date(_Value):
    """`{date: 2026-05-25}`: the date is given as "May 25(th)", "25(th) (of) May", "5/25", "2026-05-25".
    A year written next to it must be the date's year, a weekday before it the date's weekday."""

    date: datetime.date

    def _mentions(self, read: Reading) -> list[Mention]:
        return read.dates

    def _matches(self, mention: Mention) -> bool:
        month, day, year, weekday = mention.values[0]
        return ((month, day) == (self.date.month, self.date.day) and year in (None, self.date.year)
                and weekday in (None, weekday_name(self.date)))

    def _with_value(self, value: Any) -> _Value:
        return Date(date=value)

    def describe(self) -> str:
        return f"give the date {self.date.strftime('%B')} {self.date.day}, {self.date.year}"


class Time(_Value):
    """`{time: "17:00"}`: the time of day is given: "5 pm", "5:00 p.m.", "17:00", "five in the
    afternoon", "5 o'clock" (either half of the day), "noon", "half past 4"."""

    time: str

    @field_validator("time")
    @classmethod
    def _a_time(cls, value: str) -> str:
        clock_minutes(value)
        return value

    def _mentions(self, read: Reading) -> list[Mention]:
        return read.times

    def _matches(self, mention: Mention) -> bool:
        return clock_minutes(self.time) in mention.values

    def _with_value(self, value: Any) -> _Value:
        return Time(time=str(value))

    def describe(self) -> str:
        minutes = clock_minutes(self.time)
        return f"give the time {minutes // 60:02d}:{minutes % 60:02d}"


class Duration(_Value):
    """`{duration: 2 h 25 min}`: the length of time is given: "2 h 25 min", "2 hours and 25 minutes",
    "145 minutes" (within `tolerance` seconds)."""

    duration: str
    tolerance: float = Field(default=0.0, ge=0, allow_inf_nan=False)

    @field_validator("duration")
    @classmethod
    def _a_duration(cls, value: str) -> str:
        duration_seconds(value)
        return value

    def _mentions(self, read: Reading) -> list[Mention]:
        return read.durations

    def _matches(self, mention: Mention) -> bool:
        return abs(mention.values[0] - duration_seconds(self.duration)) <= self.tolerance

    def _with_value(self, value: Any) -> _Value:
        return Duration(duration=str(value), tolerance=self.tolerance)

    def describe(self) -> str:
        return f"give the duration {self.duration}"


class Coordinates(_Fact):
    """`{coordinates: [37.323, -122.0322], tolerance: 0.001}`: latitude and longitude are given with
    their signs ("122.0322° W" and "longitude -122.0322" are negative); no other position is given."""

    coordinates: tuple[float, float]
    tolerance: float = Field(default=0.0005, ge=0, allow_inf_nan=False)
    required: bool = True
    """False: the answer need not give the position, but a position it gives must be this one."""

    @model_validator(mode="after")
    def _on_earth(self) -> Coordinates:
        latitude, longitude = self.coordinates
        if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
            raise ValueError(f"coordinates {list(self.coordinates)} are not [latitude, longitude] in degrees")
        return self

    def failure(self, text: str, siblings: Sequence[Fact] = ()) -> str | None:
        read = reading(text)
        found = [mention for mention in read.coordinates if read.layout.asserted(mention.start)]
        if not found and not self.required:
            return None
        latitude, longitude = self.coordinates
        for axis, wanted in (("latitude", latitude), ("longitude", longitude)):
            values = [mention.values[0] for mention in found if mention.unit == axis]
            if not any(abs(value - wanted) <= self.tolerance for value in values):
                return f"does not give the {axis} {wanted:.10g}"
            others = [value for value in values if abs(value - wanted) > self.tolerance]
            if others:
                return f"gives the {axis} {wanted:.10g} but also {others[0]:.10g}"
        return None

    def describe(self) -> str:
        return f"give the position {self.coordinates[0]:.10g}, {self.coordinates[1]:.10g}"


Fact = Phrase | Stated | AnyOf | NoneOf | Number | YesNo | Name | Phone | Date | Time | Duration | Coordinates

_KINDS: dict[str, type[Fact]] = {"any": AnyOf, "none": NoneOf, "number": Number, "yes": YesNo,
                                  "name": Name, "phone": Phone, "date": Date, "time": Time, "duration": Duration,
                                  "coordinates": Coordinates}
FACT_FORMS = ('"phrase"', "{any: [...]}", "{none: [...]}", "{number: N, tolerance: T, unit: U, label: L}",
              "{yes: true|false}", "{name: ...}", "{phone: ...}", "{date: YYYY-MM-DD}", "{time: HH:MM}",
              "{duration: 2 h 25 min}", "{coordinates: [LAT, LON]}")


def parse_fact(value: Any) -> Fact:
    """One fact entry as written in a scenario file; a ValueError says which forms exist."""
    if isinstance(value, Fact):
        return value
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is a boolean: YAML reads unquoted on/off/yes/no so; quote the phrase "
                         "(\"on\") or write {yes: true} for a yes answer")
    if isinstance(value, str | int | float):
        return Phrase(phrase=str(value))
    if isinstance(value, dict):
        kinds = [key for key in value if key in _KINDS]
        if len(kinds) == 1:
            return _KINDS[kinds[0]].model_validate(value)
    raise ValueError(f"fact {value!r} is none of: {', '.join(FACT_FORMS)}")


def missing_fact(text: str, facts: Sequence[Fact], context: Sequence[Fact] = ()) -> Fact | None:
    """The first fact that does not hold on `text`, or None; the milestone's other facts and the
    `context` (other milestones' facts) are its siblings: their values may stand beside its own."""
    siblings = (*facts, *context)
    return next((fact for fact in facts if not fact.holds(text, siblings)), None)


def explain_missing(fact: Fact, text: str, facts: Sequence[Fact] = ()) -> str:
    """Why `fact` fails on `text`, for a failure message: `does not say "off"`, `says "on"`."""
    return fact.failure(text, facts) or f"does not {fact.describe()}"
