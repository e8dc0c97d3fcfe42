"""Time expressions in scenario files, resolved against the scenario's frozen clock.

Scenario authors write `"@now-3d"`, `"@tomorrow 17:00"` or `"@next friday 09:30"` instead of
absolute timestamps, so world data and milestone targets stay meaningful whatever "now" is.
Forms (case-insensitive): `@now`, `@now±<n>w<n>d<n>h<n>m<n>s` (any subset, in that order),
`@today|tomorrow|yesterday HH:MM`, `@next <weekday> HH:MM`, `@<ISO date or datetime>`.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from pytest_toolsandbox.world.clock import FrozenClock

_OFFSET = re.compile(r"^now(?:(?P<sign>[+-])(?:(?P<w>\d+)w)?(?:(?P<d>\d+)d)?(?:(?P<h>\d+)h)?"
                     r"(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?)?$")
_DAY = re.compile(r"^(?P<day>today|tomorrow|yesterday)(?:\s+(?P<hh>\d{1,2}):(?P<mm>\d{2}))?$")
_WEEKDAY = re.compile(r"^next\s+(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
                      r"(?:\s+(?P<hh>\d{1,2}):(?P<mm>\d{2}))?$")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


class TimeExpressionError(ValueError):
    """A string starting with @ that is not a known time expression."""


def _at(moment: datetime, hh: str | None, mm: str | None) -> datetime:
    if hh is None:
        return moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return moment.replace(hour=int(hh), minute=int(mm or 0), second=0, microsecond=0)


def resolve_time(expression: str, clock: FrozenClock) -> float:
    """The POSIX timestamp an `@…` expression denotes."""
    text = expression.strip().lstrip("@").strip().lower()
    local_now = clock.now.replace(tzinfo=None)
    if match := _OFFSET.match(text.replace(" ", "")):
        sign = -1 if match["sign"] == "-" else 1
        units = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
        try:
            return clock.shift(clock.now, **{unit: sign * int(match[key] or 0) for key, unit in units.items()})
        except OverflowError:
            raise TimeExpressionError(f"{expression!r} is too far from now") from None
    if match := _DAY.match(text) or _WEEKDAY.match(text):
        if "day" in match.re.groupindex:
            ahead = {"today": 0, "tomorrow": 1, "yesterday": -1}[match["day"]]
        else:
            ahead = (_WEEKDAYS.index(match["weekday"]) - local_now.weekday() - 1) % 7 + 1
        if match["hh"] is not None and (int(match["hh"]) > 23 or int(match["mm"]) > 59):
            raise TimeExpressionError(f"{expression!r}: {match['hh']}:{match['mm']} is not a clock time; use "
                                      "HH:MM from 00:00 to 23:59")
        return clock.to_timestamp(_at(local_now + timedelta(days=ahead), match["hh"], match["mm"]))
    try:
        return clock.to_timestamp(datetime.fromisoformat(expression.strip().lstrip("@").strip()))
    except ValueError:
        raise TimeExpressionError(
            f"{expression!r} is not a time expression; use @now, @now-3d2h, @tomorrow 17:00, "
            "@next friday 09:30 or @2026-03-14 17:00") from None


def resolve_times(value: Any, clock: FrozenClock) -> Any:
    """Resolve every `@…` string inside nested dicts/lists (other values pass through)."""
    if isinstance(value, str) and value.startswith("@"):
        return resolve_time(value, clock)
    if isinstance(value, dict):
        return {key: resolve_times(item, clock) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve_times(item, clock) for item in value]
    return value
