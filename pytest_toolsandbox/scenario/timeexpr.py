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
        parts = {key: int(match[key] or 0) for key in "wdhms"}
        delta = timedelta(weeks=parts["w"], days=parts["d"], hours=parts["h"], minutes=parts["m"],
                          seconds=parts["s"])
        return clock.to_timestamp(local_now - delta if match["sign"] == "-" else local_now + delta)
    if match := _DAY.match(text):
        shift = {"today": 0, "tomorrow": 1, "yesterday": -1}[match["day"]]
        return clock.to_timestamp(_at(local_now + timedelta(days=shift), match["hh"], match["mm"]))
    if match := _WEEKDAY.match(text):
        ahead = (_WEEKDAYS.index(match["weekday"]) - local_now.weekday() - 1) % 7 + 1
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
