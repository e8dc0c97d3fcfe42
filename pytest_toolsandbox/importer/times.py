"""Times read from the reference package, written back as time expressions relative to the frozen clock.

The reader freezes the reference's clock at our scenario's "now", so every time it reports is an exact
offset from that moment. Writing `@now-3d4h5m6s` or `@tomorrow 17:00` instead of a POSIX number keeps the
scenario meaningful when its `now` moves; each expression is resolved back and kept only if it lands
on the same instant (else the exact local date and time is written).
"""

from __future__ import annotations

from pytest_toolsandbox.scenario.timeexpr import resolve_time
from pytest_toolsandbox.world.clock import FrozenClock

_TOLERANCE = 1e-6


def _offset(seconds: float) -> str:
    sign = "-" if seconds < 0 else "+"
    left = round(abs(seconds))
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, left = divmod(left, size)
        if count:
            parts.append(f"{count}{unit}")
    return f"@now{sign}{''.join(parts)}"


def relative_time(seconds_from_now: float, clock: FrozenClock) -> str:
    """The shortest expression for `now + seconds_from_now` that resolves to exactly that instant."""
    local = clock.local(clock.timestamp() + seconds_from_now)  # elapsed time, not wall-clock arithmetic
    days = (local.date() - clock.now.date()).days
    candidates = []
    if seconds_from_now == 0:
        candidates.append("@now")
    if (local.hour, local.minute, local.second, local.microsecond) == (
            clock.now.hour, clock.now.minute, clock.now.second, clock.now.microsecond) and days:
        candidates.append(f"@now{'-' if days < 0 else '+'}{abs(days)}d")
    # "an hour ago" reads as an offset, "tomorrow at 17:00" as a clock time: whole hours (or less than
    # one) are written as offsets, other round clock times on nearby days as the clock time
    if float(seconds_from_now).is_integer() and (seconds_from_now % 3600 == 0 or abs(seconds_from_now) < 3600):
        candidates.append(_offset(seconds_from_now))
    if local.second == 0 and local.microsecond == 0 and days in (-1, 0, 1):
        day = {-1: "yesterday", 0: "today", 1: "tomorrow"}[days]
        candidates.append(f"@{day} {local:%H:%M}" if (local.hour, local.minute) != (0, 0) else f"@{day}")
    if float(seconds_from_now).is_integer():
        candidates.append(_offset(seconds_from_now))
    expected = clock.timestamp() + seconds_from_now
    for candidate in candidates:
        if abs(resolve_time(candidate, clock) - expected) <= _TOLERANCE:
            return candidate
    return "@" + local.replace(tzinfo=None).isoformat()


def absolute_time(timestamp: float, clock: FrozenClock) -> str:
    """`@YYYY-MM-DD HH:MM[:SS[.ffffff]]` in the clock's zone, resolving back to exactly `timestamp`."""
    local = clock.local(timestamp).replace(tzinfo=None)
    text = local.isoformat(sep=" ", timespec="minutes" if local.second == local.microsecond == 0 else "auto")
    return "@" + text
