"""A frozen clock: every time that can reach a prompt or a score derives from it.

The reference implementation reads the wall clock everywhere, which makes timestamps (and thus
cassettes and scores) depend on when and where a scenario runs. Here each scenario pins "now" and a
time zone, so the same scenario gives the same bytes on any machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

DEFAULT_NOW = "2026-03-12T09:30:00"
DEFAULT_TIMEZONE = "America/Los_Angeles"
_CALENDAR_UNITS = ("weeks", "days")


@dataclass(frozen=True)
class FrozenClock:
    """A fixed instant in a fixed time zone; tools and scenario files ask it for "now"."""

    now: datetime

    @classmethod
    def at(cls, iso: str = DEFAULT_NOW, timezone: str = DEFAULT_TIMEZONE) -> FrozenClock:
        """Build a clock from an ISO local time (naive: interpreted in `timezone`)."""
        zone = ZoneInfo(timezone)
        moment = datetime.fromisoformat(iso)
        moment = moment.replace(tzinfo=zone) if moment.tzinfo is None else moment.astimezone(zone)
        return cls(now=moment)

    @property
    def zone(self) -> ZoneInfo:
        assert isinstance(self.now.tzinfo, ZoneInfo)
        return self.now.tzinfo

    def timestamp(self) -> float:
        """POSIX timestamp of "now"."""
        return self.now.timestamp()

    def local(self, timestamp: float) -> datetime:
        """The local datetime of a POSIX timestamp in this clock's zone."""
        return datetime.fromtimestamp(timestamp, tz=self.zone)

    def to_timestamp(self, moment: datetime) -> float:
        """POSIX timestamp of a local (naive) or aware datetime."""
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=self.zone)
        return moment.timestamp()

    def shift(self, moment: datetime, **delta: float) -> float:
        """Timestamp of `moment` moved by timedelta keywords: weeks and days on the local calendar (the
        clock time stays across a daylight saving change), hours, minutes and seconds as elapsed time
        (so "45 minutes ago" is never in the future, even just after clocks spring forward)."""
        calendar = {unit: value for unit, value in delta.items() if unit in _CALENDAR_UNITS}
        elapsed = timedelta(**{unit: value for unit, value in delta.items() if unit not in _CALENDAR_UNITS})
        wall = moment.astimezone(self.zone).replace(tzinfo=None) if moment.tzinfo else moment
        return self.to_timestamp(wall + timedelta(**calendar)) + elapsed.total_seconds()

    def shifted(self, **delta: float) -> float:
        """Timestamp of now moved by `delta` (see `shift`)."""
        return self.shift(self.now, **delta)
