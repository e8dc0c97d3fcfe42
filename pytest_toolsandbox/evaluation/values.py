"""Values stated in an answer: numbers with their units, times of day, durations, dates, coordinates, phones.

Each value is a `Mention` (its kind, the values it may mean, where it stands and its unit), so a fact
can ask not only "is my value here?" but "which other values of my kind does the answer give, and
what does each belong to?". Number words are read by text2num ("twenty-five" is 25, "one hundred and
forty-five" is 145); phone numbers by phonenumbers' matcher; unit conversions by pint (units.py).
Everything else (clock times, durations, dates, hemispheres) is a small pattern over the text with
number words already turned into digits, so "five in the afternoon" and "5 pm" read alike.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from pytest_toolsandbox.evaluation.clauses import Layout, layout
from pytest_toolsandbox.evaluation.units import CURRENCY_BEFORE, DEGREE, UNIT_AFTER, unit_named

UNIFORM = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "−": "-", "–": "-", "\u202f": " ", "\xa0": " "})
"""One form for apostrophes, minus signs and spaces, so that "couldn’t" is "couldn't" and "−3" is "-3"."""
_SMALL = {"zero": 0, "one": 1, "two": 2, "three": 3}
_AND_A_HALF = re.compile(r"\b(\d+) and a half\b", re.IGNORECASE)
_SMALL_BEFORE_TIME = re.compile(
    r"\b(one|two|three)\b(?=\s*(?:o'clock|[ap]\.?m\b|\d{2}\b|in\s+the\b|at\s+night|this\s+(?:morning|afternoon|evening)"
    r"|tonight|hours?\b|minutes?\b|seconds?\b|h\b|min\b))|(?:(?<=\bpast\s)|(?<=\bto\s))(one|two|three)\b",
    re.IGNORECASE)


@dataclass(frozen=True)
class Mention:
    """One value in the text: `values` are what it may mean (a clock time without am/pm: two)."""

    kind: str
    values: tuple[Any, ...]
    start: int
    end: int
    unit: str | None = None
    decimals: int = 0
    counts: str | None = None
    """The word after a number without a unit, when it names what is counted ("8 shares")."""


@lru_cache(maxsize=2048)
def digits_for_words(text: str) -> str:
    """The text with number words as digits ("twenty-five" → "25"), apostrophes and minus signs unified.
    One, two and three stay words except before a clock or duration word ("two hours", "one o'clock")."""
    from text_to_num import alpha2digit  # a few milliseconds, loaded with the first answer checked

    plain = text.translate(UNIFORM)
    converted = _AND_A_HALF.sub(r"\1.5", alpha2digit(plain, "en"))
    return _SMALL_BEFORE_TIME.sub(lambda match: str(_SMALL[(match.group(1) or match.group(2)).lower()]), converted)


_NUMBER = re.compile(
    r"(?<![\w.,/:])(?P<sign>(?<![\w-])-|minus\s+)?(?P<before>(?:us\$|c\$|a\$|[€$£¥₹]|(?:eur|usd|gbp|jpy)\s?))?"
    r"(?P<sign2>-)?(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?P<ordinal>st|nd|rd|th)?(?![\d])",
    re.IGNORECASE)
_COUNTED = re.compile(r"\s+([^\W\d_]{2,})")
_NOT_COUNTED = frozenset({
    "and", "or", "to", "from", "of", "in", "on", "at", "for", "by", "with", "is", "are", "was", "were", "be",
    "than", "more", "less", "the", "a", "an", "as", "if", "but", "so", "then", "this", "that", "it", "its",
    "per", "each", "up", "down", "now", "right", "today", "tomorrow", "yesterday", "instead", "not", "no",
    "most", "likely", "maybe", "possibly", "perhaps", "probably", "either", "which", "would", "will", "could"})
"""Words after a number that do not say what it counts ("between 20 and 25", "72 on Saturday")."""
_TIME = re.compile(
    r"(?<![\d:.$€£])(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2})|\s(?P<spaced>\d{2})(?=\s*[ap]\.?m\b))?"
    r"(?:\s*(?P<meridiem>[ap])(?:\.m\.?|m)(?![a-z])"
    r"|(?=\s*(?:o'clock\s*)?(?:in\s+the\s+|this\s+)(?P<part>morning|afternoon|evening|night)|\s+(?P<night>at\s+night|tonight))"
    r"|\s*o'clock)"
    r"|(?<![\d:.$€£])(?P<h24>\d{1,2}):(?P<m24>\d{2})(?![\d:])"
    r"|\b(?P<word>noon|midday|midnight)\b"
    r"|\b(?P<quarter>half|quarter)\s+(?P<relation>past|to)\s+(?P<base>\d{1,2})\b",
    re.IGNORECASE)
_DURATION_PART = re.compile(
    r"(?<![\w.])(?P<amount>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|(?:half\s+)?an?(?=\s+(?:hour|hr)s?\b))\s*(?P<unit>hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])",
    re.IGNORECASE)
_AND_HALF = re.compile(r"\s+and\s+a\s+half\b", re.IGNORECASE)
_DURATION_GLUE = re.compile(r"\s*,\s*and\s+|\s*,\s*|\s+and\s+|\s*")
_SECONDS = {"h": 3600, "m": 60, "s": 1}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_MONTH = r"(?P<{}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DATE = re.compile(
    r"\b" + _MONTH.format("month1") + r"\s+(?P<day1>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year1>\d{4})\b)?"
    r"|\b(?P<day2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH.format("month2")
    + r"(?![a-z])(?:,?\s+(?P<year2>\d{4})\b)?"
    r"|(?<![\d/.-])(?P<month3>\d{1,2})/(?P<day3>\d{1,2})(?:/(?P<year3>\d{4}|\d{2}))?(?![\d/])"
    r"|\b(?P<year4>\d{4})-(?P<month4>\d{2})-(?P<day4>\d{2})\b",
    re.IGNORECASE)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_BEFORE = re.compile(r"\b(" + "|".join(_WEEKDAYS) + r")\b,?\s*(?:the\s+)?$", re.IGNORECASE)
_COORDINATE = re.compile(
    r"(?:\b(?P<label>latitude|lat|longitude|long|lon|lng)\b[\s:=]*(?:of\s+|is\s+)?)?"
    r"(?<![\w.])(?P<value>-?\d{1,3}\.\d+)(?:\s*(?:°|º|degrees?))?"
    r"\s*(?P<hemisphere>(?-i:[NSEW])|north|south|east|west)?(?![\w])",
    re.IGNORECASE)
"""A decimal that may be half of a position, with the label or hemisphere that says which half."""
_PAIR_GLUE = re.compile(r"\s*[,;/]?\s*")
"""What may stand between the two halves of a bare pair: "37.323, -122.0322", "37.323/-122.0322"."""
_OR_GLUE = re.compile(r"\s*,?\s*or\s+", re.IGNORECASE)
"""What puts an alternative beside a half of a position: "-122.0322 or -122.0332"."""
_OTHER_AXIS = {"latitude": "longitude", "longitude": "latitude"}


def _month_number(name: str) -> int:
    return next(position for position, month in enumerate(_MONTHS, 1) if month.startswith(name.lower()[:3]))


@dataclass
class Reading:
    """The values of one answer, read once and shared by all the facts checked on it."""

    original: str
    text: str = field(init=False)

    def __post_init__(self) -> None:
        self.text = digits_for_words(self.original)

    @cached_property
    def layout(self) -> Layout:
        return layout(self.text)

    @cached_property
    def phones(self) -> list[Mention]:
        import phonenumbers  # a tenth of a second: loaded when a phone is first looked for

        return [Mention("phone", ((match.number.country_code, match.number.national_number),), match.start, match.end)
                for match in phonenumbers.PhoneNumberMatcher(self.text, "US", leniency=phonenumbers.Leniency.POSSIBLE)
                if not _decimal(self.text, match.start, match.end)]

    @cached_property
    def dates(self) -> list[Mention]:
        found = []
        for match in _DATE.finditer(self.text):
            groups = match.groupdict()
            if groups["month1"] or groups["month2"]:
                month = _month_number(groups["month1"] or groups["month2"])
                day, year = int(groups["day1"] or groups["day2"]), groups["year1"] or groups["year2"]
            elif groups["month3"]:
                month, day, year = int(groups["month3"]), int(groups["day3"]), groups["year3"]
            else:
                month, day, year = int(groups["month4"]), int(groups["day4"]), groups["year4"]
            if not (1 <= month <= 12 and 1 <= day <= 31):
                continue
            full_year = None if year is None else int(year) + (2000 if len(year) == 2 else 0)
            weekday = _WEEKDAY_BEFORE.search(self.text[max(0, match.start() - 20):match.start()])
            found.append(Mention("date", ((month, day, full_year, weekday.group(1).lower() if weekday else None),),
                                 match.start(), match.end()))
        return found

    @cached_property
    def times(self) -> list[Mention]:
        found = []
        for match in _TIME.finditer(self.text):
            values = _clock_minutes(match)
            if values:
                found.append(Mention("time", values, match.start(), match.end()))
        return found

    @cached_property
    def durations(self) -> list[Mention]:
        found: list[Mention] = []
        position = 0
        while True:
            part = _DURATION_PART.search(self.text, position)
            if part is None:
                return found
            start, total, end = part.start(), 0.0, part.end()
            while part is not None:
                unit = _SECONDS[part.group("unit")[0].lower()]
                total += _duration_amount(part.group("amount")) * unit
                end = part.end()
                half = _AND_HALF.match(self.text, end)  # "an hour and a half"
                if half:
                    total, end = total + unit / 2, half.end()
                glue = _DURATION_GLUE.match(self.text, end)
                part = _DURATION_PART.match(self.text, glue.end()) if glue else None
            found.append(Mention("duration", (round(total),), start, end))
            position = end

    @cached_property
    def coordinates(self) -> list[Mention]:
        """The halves of positions the text gives: a decimal with its own axis (a label, "latitude
        37.323", or a hemisphere, "122.0322° W"), and bare decimals written as a pair ("37.323,
        -122.0322": latitude first) or beside a half that has its axis. A lone bare decimal ("about
        2.5 miles", "18.5 °C", "$12.50") is no position, nor is one with a unit of its own."""
        found: list[Mention] = []
        run: list[_Half] = []
        for match in _COORDINATE.finditer(self.text):
            axis = _axis(match)
            if axis is None and _measured(self.text, match):
                continue
            between = (run[-1].match.end(), match.start()) if run else None
            alternative = bool(between and _OR_GLUE.fullmatch(self.text, *between) and _is_position(run))
            if between and not alternative and not _PAIR_GLUE.fullmatch(self.text, *between):
                found += _positions(run)
                run = []
            run.append(_Half(match, axis, alternative))
        return found + _positions(run)

    @cached_property
    def taken(self) -> list[tuple[int, int]]:
        """Spans read as phones, dates or clock times: their digits are not free-standing numbers."""
        return [(mention.start, mention.end) for mention in (*self.phones, *self.dates, *self.times)]

    @cached_property
    def numbers(self) -> list[Mention]:
        found = []
        for match in _NUMBER.finditer(self.text):
            start = match.start("digits")
            if any(begin <= start < end for begin, end in self.taken):
                continue
            digits = match.group("digits").replace(",", "")
            negative = bool(match.group("sign") or match.group("sign2"))
            value = (-1 if negative else 1) * float(digits)
            decimals = len(digits.partition(".")[2])
            unit = _unit_around(self.text, match)
            kind = "ordinal" if match.group("ordinal") else "number"
            noun = _COUNTED.match(self.text, match.end()) if unit is None else None
            counts = noun.group(1).lower() if noun and noun.group(1).lower() not in _NOT_COUNTED else None
            found.append(Mention(kind, (value,), match.start(), match.end(), unit=unit, decimals=decimals,
                                 counts=counts))
        return found

    def small_number_words(self) -> list[Mention]:
        """"zero" to "three" as words (text2num leaves them, since "one" is often no number): they can
        state a number, never contradict one (kind "word")."""
        return [Mention("word", (float(_SMALL[match.group(0).lower()]),), match.start(), match.end())
                for match in re.finditer(r"\b(?:zero|one|two|three)\b", self.text, re.IGNORECASE)]


_DECIMAL = re.compile(r"\d+\.\d+")
_DECIMAL_POINT_BEFORE = re.compile(r"\d\.$")
_DECIMAL_POINT_AFTER = re.compile(r"\.\d")


def _decimal(text: str, start: int, end: int) -> bool:
    """Whether ten or more digits phonenumbers' lenient matcher takes for a phone are a decimal or its
    fractional part ("1.0000000005", the "1415926535" of "3.1415926535"): a phone is written with several
    separators or none, never with one point between digits."""
    return bool(_DECIMAL.fullmatch(text, start, end) or _DECIMAL_POINT_BEFORE.search(text, max(0, start - 2), start)
                or _DECIMAL_POINT_AFTER.match(text, end))


def _axis(match: re.Match[str]) -> str | None:
    """The axis a coordinate's own words give it: its hemisphere or its label; None for a bare decimal."""
    hemisphere = (match.group("hemisphere") or "")[:1].upper()
    label = (match.group("label") or "").lower()
    if hemisphere in ("N", "S") or label.startswith("lat"):
        return "latitude"
    return "longitude" if hemisphere in ("E", "W") or label else None


def _measured(text: str, match: re.Match[str]) -> bool:
    """Whether a decimal carries a unit of its own ("2.5 miles", "18.5 °C"; a bare "°" may be an angle).
    A currency before it needs no check: its symbol already parts it from any neighbour."""
    after = UNIT_AFTER.match(text, match.end("value"))
    return bool(after and unit_named(after.group(1)) != DEGREE)


@dataclass(frozen=True)
class _Half:
    """A decimal that may be half of a position: the axis its own words give, and whether it is offered
    with "or" as an alternative to the half before it."""

    match: re.Match[str]
    axis: str | None
    alternative: bool = False


def _is_position(run: list[_Half]) -> bool:
    """Whether a run of adjacent decimals gives a position (or half of one): a lone bare decimal does not."""
    return len(run) > 1 or any(half.axis is not None for half in run)


def _positions(run: list[_Half]) -> list[Mention]:
    """The coordinates of one run of adjacent decimals: each keeps the axis its words give; a bare one
    takes the other axis than the half before it (latitude first), or the same axis when it is that
    half's alternative ("-122.0322 or -122.0332")."""
    if not _is_position(run):
        return []
    found: list[Mention] = []
    expected = "latitude"
    for half in run:
        axis = half.axis or (found[-1].unit if half.alternative else expected)
        value = float(half.match.group("value"))
        if (half.match.group("hemisphere") or "")[:1].upper() in ("S", "W"):
            value = -abs(value)
        found.append(Mention("coordinate", (value,), half.match.start("value"), half.match.end(), unit=axis))
        expected = _OTHER_AXIS[str(axis)]
    return found


def _unit_around(text: str, match: re.Match[str]) -> str | None:
    before = match.group("before")
    if before:
        return unit_named(before.strip())
    after = UNIT_AFTER.match(text, match.end())
    if after:
        return unit_named(after.group(1))
    currency = CURRENCY_BEFORE.search(text[max(0, match.start() - 5):match.start()])
    return unit_named(currency.group(1)) if currency else None


def _duration_amount(amount: str) -> float:
    amount = amount.lower()
    if amount.startswith("half"):
        return 0.5
    return 1.0 if amount in ("a", "an") else float(amount.replace(",", ""))


def _clock_minutes(match: re.Match[str]) -> tuple[int, ...]:
    """The minutes after midnight a clock time may mean (two for "5 o'clock": 5:00 or 17:00)."""
    groups = match.groupdict()
    if groups["word"]:
        return (0,) if groups["word"].lower() == "midnight" else (12 * 60,)
    if groups["quarter"]:
        offset = 30 if groups["quarter"].lower() == "half" else 15
        minutes = int(groups["base"]) * 60 + (offset if groups["relation"].lower() == "past" else -offset)
        return minutes % 720, minutes % 720 + 720
    if groups["h24"]:
        hour, minute = int(groups["h24"]), int(groups["m24"])
        if hour > 23 or minute > 59:
            return ()
        return (hour * 60 + minute,) if hour == 0 or hour >= 12 else (hour * 60 + minute, (hour + 12) * 60 + minute)
    hour = int(groups["hour"])
    minute = int(groups["minute"] or groups["spaced"] or 0)
    if hour > 12 or minute > 59:
        return ()
    morning = hour % 12 * 60 + minute
    meridiem = (groups["meridiem"] or "").lower()
    part = (groups["part"] or "").lower()
    if meridiem == "p" or part in ("afternoon", "evening") or groups["night"] or (part == "night" and hour != 12):
        return (morning + 720,)
    if meridiem == "a" or part == "morning":
        return (morning,)
    return morning, morning + 720


_HH_MM = re.compile(r"(\d{1,2}):(\d{2})")


@lru_cache(maxsize=1024)
def clock_minutes(written: str) -> int:
    """A scenario file's time of day as minutes after midnight: "HH:MM" is 24-hour ("10:30" is
    morning), other forms as an answer would write them ("5 pm"); a ValueError if unclear. Cached: a
    time fact asks for its own value at every mention it judges."""
    twenty_four_hour = _HH_MM.fullmatch(written.strip())
    if twenty_four_hour and int(twenty_four_hour.group(1)) < 24 and int(twenty_four_hour.group(2)) < 60:
        return int(twenty_four_hour.group(1)) * 60 + int(twenty_four_hour.group(2))
    reading = Reading(written)
    values = reading.times[0].values if len(reading.times) == 1 else ()
    if len(values) != 1:
        raise ValueError(f"{written!r} is not one time of day; write it as HH:MM (24-hour), e.g. \"17:00\"")
    return int(values[0])


@lru_cache(maxsize=1024)
def duration_seconds(written: str) -> int:
    """A scenario file's duration ("2 h 25 min", "145 minutes") in seconds; a ValueError if unclear.
    Cached: a duration fact asks for its own value at every mention it judges."""
    found = Reading(written).durations
    if len(found) != 1:
        raise ValueError(f"{written!r} is not one duration; write it like \"2 h 25 min\" or \"90 seconds\"")
    return int(found[0].values[0])


def weekday_name(date: datetime.date) -> str:
    return _WEEKDAYS[date.weekday()]
