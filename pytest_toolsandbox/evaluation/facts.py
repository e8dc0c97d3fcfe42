"""Facts: what makes an agent's answer right, checked on its text.

ROUGE-L measures wording, so a correct paraphrase scores 0.8–0.9 while a wrong answer that reuses the
reference's words scores higher. A milestone's verdict therefore rests on facts, small checks a human
judge would make: the phrase "off" occurs, no phrase "couldn't" occurs, the number 5.63 is stated,
the answer is yes, Fredrik Thordendal is named, the phone number or the date is given.

Every check is case-insensitive and works on words, not characters: "on" matches "turned on" but not
"phone" or "one". Entries as written in scenario files:

    off                                   the phrase occurs
    {any: [off, disabled]}                at least one of the phrases occurs
    {none: [on, "couldn't", unable]}      none of the phrases occurs
    {number: 5.63, tolerance: 0.05}       some number in the text is within the tolerance (default 0)
    {yes: true} / {yes: false}            the text answers yes (resp. no)
    {name: Fredrik Thordendal}            the person is named (full, first or last name)
    {phone: "+12453344098"}               the phone number appears, in any common formatting
    {date: 2026-05-25}                    the date appears ("May 25", "25th of May", "5/25", ISO)
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import phonenumbers
from pydantic import BaseModel, ConfigDict, Field

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_HYPHEN = re.compile(r"(?<=[^\W\d_])[-‐‑](?=[^\W\d_])")


@lru_cache(maxsize=4096)
def words(text: str) -> tuple[str, ...]:
    """Lower-case words (any script); an apostrophe inside a word keeps it whole ("couldn't" is not
    "not"); a hyphen separates ("Wi-Fi" is "wi", "fi")."""
    return tuple(_WORD.findall(text.lower().translate(_APOSTROPHES)))


def _forms(text: str) -> tuple[tuple[str, ...], ...]:
    """The text's words, and its words with hyphens between letters dropped ("Wi-Fi" as "wifi")."""
    joined = _HYPHEN.sub("", text)
    return (words(text),) if joined == text else (words(text), words(joined))


def _word_matches(found: str, wanted: str) -> bool:
    return found == wanted or found == wanted + "'s"  # "Fredrik's" names Fredrik


def _in_sequence(text_words: Sequence[str], wanted: Sequence[str]) -> bool:
    width = len(wanted)
    for start in range(len(text_words) - width + 1):
        if all(text_words[start + offset] == wanted[offset] for offset in range(width - 1)) and _word_matches(
                text_words[start + width - 1], wanted[-1]):
            return True
    return False


def has_phrase(text: str, phrase: str) -> bool:
    """Whether the words of `phrase` occur consecutively in `text` (the last may be possessive), with
    or without hyphens between letters: "wifi" matches "Wi-Fi" and "wi-fi" matches "wifi"."""
    return any(_in_sequence(text_words, wanted) for wanted in _forms(phrase) if wanted
               for text_words in _forms(text))


def _quoted(phrases: Sequence[str]) -> str:
    return ", ".join(f'"{phrase}"' for phrase in phrases)


class _Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def holds(self, text: str) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        """What the fact requires, as a verb phrase: `say "off"`, `answer yes`."""
        raise NotImplementedError


class Phrase(_Fact):
    """A plain string: the phrase occurs."""

    phrase: str = Field(min_length=1)

    def holds(self, text: str) -> bool:
        return has_phrase(text, self.phrase)

    def describe(self) -> str:
        return f'say "{self.phrase}"'


class AnyOf(_Fact):
    """`{any: [...]}`: at least one of the phrases occurs (synonyms, e.g. off / disabled)."""

    any: list[str] = Field(min_length=1)

    def holds(self, text: str) -> bool:
        return any(has_phrase(text, phrase) for phrase in self.any)

    def describe(self) -> str:
        return f"say one of {_quoted(self.any)}"


class NoneOf(_Fact):
    """`{none: [...]}`: none of the phrases occurs (negations, the contradicting value)."""

    none: list[str] = Field(min_length=1)

    def holds(self, text: str) -> bool:
        return not any(has_phrase(text, phrase) for phrase in self.none)

    def describe(self) -> str:
        return f"say none of {_quoted(self.none)}"

    def offending(self, text: str) -> str | None:
        """The first forbidden phrase the text says, for the failure message."""
        return next((phrase for phrase in self.none if has_phrase(text, phrase)), None)


_SMALL_NUMBERS = {name: value for value, name in enumerate([
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_SMALL_NUMBERS |= {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                   "ninety": 90, "hundred": 100}
_NUMBER = re.compile(r"(?<![\w.])(-|−)?[$€£]?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")


def numbers_in(text: str) -> list[float]:
    """Numbers written in the text: "1,234.5", "-3", "$12", "45%", and spelled-out ones up to twenty
    (and the tens); a minus counts only where it is not a hyphen between words or digits."""
    found = [(-1 if sign else 1) * float(digits.replace(",", "")) for sign, digits in _NUMBER.findall(text)]
    found += [float(_SMALL_NUMBERS[word]) for word in words(text) if word in _SMALL_NUMBERS]
    return found


class Number(_Fact):
    """`{number: 5.63, tolerance: 0.05}`: some number in the text is within the absolute tolerance."""

    number: float
    tolerance: float = Field(default=0.0, ge=0)

    def holds(self, text: str) -> bool:
        slack = self.tolerance + 1e-9 * max(1.0, abs(self.number))  # decimal text vs binary float
        return any(abs(value - self.number) <= slack for value in numbers_in(text))

    def describe(self) -> str:
        within = f" (±{self.tolerance:g})" if self.tolerance else ""
        return f"state the number {self.number:g}{within}"


_AFFIRMATIVE = frozenset({"yes", "yeah", "yep", "yup", "affirmative", "correct", "indeed"})
_NEGATIVE = frozenset({"no", "nope", "nah", "negative"})
_NOT_AN_ANSWER = frozenset({("no", "problem"), ("no", "worries")})
_CLAUSE_END = re.compile(r"[.,;:!?—–()\n]|\s-\s")


def yes_or_no(text: str) -> bool | None:
    """The answer a text gives to a yes/no question: True (yes), False (no) or None (neither).

    The first clause (text between punctuation) that starts with an answer word decides: "Yes, it
    is on." and "Let me check. No, it is off." answer; "There are no messages." does not (its clause
    starts with "there"), nor does "No problem, ..." (a politeness, not an answer).
    """
    for clause in _CLAUSE_END.split(text):
        clause_words = words(clause)
        if not clause_words:
            continue
        first = clause_words[0]
        if first in _AFFIRMATIVE:
            return True
        if first in _NEGATIVE and tuple(clause_words[:2]) not in _NOT_AN_ANSWER:
            return False
    return None


class YesNo(_Fact):
    """`{yes: true}` / `{yes: false}`: the text answers yes (resp. no); see `yes_or_no`."""

    yes: bool

    def holds(self, text: str) -> bool:
        return yes_or_no(text) is self.yes

    def describe(self) -> str:
        return "answer yes" if self.yes else "answer no"


class Name(_Fact):
    """`{name: Fredrik Thordendal}`: the full name, the first name or the last name occurs."""

    name: str = Field(min_length=1)

    def holds(self, text: str) -> bool:
        parts = self.name.split()
        candidates = [self.name, parts[0], parts[-1]] if parts else [self.name]
        return any(has_phrase(text, candidate) for candidate in candidates)

    def describe(self) -> str:
        return f"name {self.name}"


@lru_cache(maxsize=256)
def _parsed_phone(phone: str) -> phonenumbers.PhoneNumber:
    return phonenumbers.parse(phone, None if phone.startswith("+") else "US")


class Phone(_Fact):
    """`{phone: "+12453344098"}`: the number appears, international or national, any separators."""

    phone: str = Field(min_length=1)

    def holds(self, text: str) -> bool:
        target = _parsed_phone(self.phone)
        region = phonenumbers.region_code_for_number(target) or "US"
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.POSSIBLE):
            number = match.number
            if number.national_number == target.national_number and number.country_code == target.country_code:
                return True
        national = str(target.national_number)  # digits run together or split oddly ("245 33 44 098")
        return any(re.sub(r"\D", "", run).endswith(national) and len(re.sub(r"\D", "", run)) - len(national) <= 3
                   for run in re.findall(r"\+?\d[\d\s().\-]{6,}\d", text))

    def describe(self) -> str:
        return f"give the phone number {self.phone}"


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")


class Date(_Fact):
    """`{date: 2026-05-25}`: the date appears as "May 25(th)", "25(th) (of) May", "5/25", "2026-05-25".

    A year written next to the day must be the date's year; a weekday may be present or not.
    """

    date: datetime.date

    def holds(self, text: str) -> bool:
        return _date_pattern(self.date).search(text.lower()) is not None

    def describe(self) -> str:
        return f"give the date {self.date.strftime('%B')} {self.date.day}, {self.date.year}"


@lru_cache(maxsize=256)
def _date_pattern(date: datetime.date) -> re.Pattern[str]:
    day, month, year = date.day, date.month, date.year
    full = _MONTHS[month - 1]
    month_name = rf"(?:{full}|{full[:3]}{'t' if month == 9 else ''}\.?|{full[:3]}\.?)"
    ordinal = r"(?:st|nd|rd|th)?"
    other_year = rf"(?!,?\s+(?!{year}\b)\d{{4}}\b)"
    numeric_year = rf"(?:/(?:{year}|{year % 100:02d}))?"
    forms = [
        rf"\b{month_name}\s+0?{day}{ordinal}\b{other_year}",
        rf"\b0?{day}{ordinal}\s+(?:of\s+)?{month_name}(?![a-z]){other_year}",
        rf"(?<![\d/.-])0?{month}/0?{day}{numeric_year}(?![\d/])",
        rf"\b{year}-{month:02d}-{day:02d}\b",
    ]
    return re.compile("|".join(forms))


Fact = Phrase | AnyOf | NoneOf | Number | YesNo | Name | Phone | Date

_KINDS: dict[str, type[_Fact]] = {"any": AnyOf, "none": NoneOf, "number": Number, "yes": YesNo,
                                  "name": Name, "phone": Phone, "date": Date}
FACT_FORMS = ('"phrase"', "{any: [...]}", "{none: [...]}", "{number: N, tolerance: T}", "{yes: true|false}",
              "{name: ...}", "{phone: ...}", "{date: YYYY-MM-DD}")


def parse_fact(value: Any) -> Fact:
    """One fact entry as written in a scenario file; a ValueError says which forms exist."""
    if isinstance(value, _Fact):
        return value  # type: ignore[return-value]
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is a boolean: YAML reads unquoted on/off/yes/no so; quote the phrase "
                         "(\"on\") or write {yes: true} for a yes answer")
    if isinstance(value, str | int | float):
        return Phrase(phrase=str(value))
    if isinstance(value, dict):
        kinds = [key for key in value if key in _KINDS]
        if len(kinds) == 1:
            return _KINDS[kinds[0]].model_validate(value)  # type: ignore[return-value]
    raise ValueError(f"fact {value!r} is none of: {', '.join(FACT_FORMS)}")


def missing_fact(text: str, facts: Sequence[Fact]) -> Fact | None:
    """The first fact that does not hold on `text`, or None when all do."""
    return next((fact for fact in facts if not fact.holds(text)), None)


def explain_missing(fact: Fact, text: str) -> str:
    """Why `fact` fails on `text`, for a failure message: `does not say "off"`, `says "on"`."""
    if isinstance(fact, NoneOf):
        return f'says "{fact.offending(text)}"'
    if isinstance(fact, YesNo):
        answer = yes_or_no(text)
        return "does not answer yes or no" if answer is None else f"answers {'yes' if answer else 'no'}"
    return f"does not {fact.describe()}"
