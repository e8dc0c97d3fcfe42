"""Utility tools: time arithmetic on the frozen clock, unit conversion, distances and US holidays.

Every notion of "now" and of local time comes from the world's clock (the scenario's instant and time
zone), never from the machine, so a tool result is the same wherever and whenever a scenario runs.
`search_holiday` needs wifi (it stands for an online lookup); like every state dependency, its
description does not say so.

pint, holidays and geopy are imported at a tool's first call, not with this module: collecting
scenarios needs the tools' signatures only, and pint alone (with numpy) took 0.3 s of every run's
start-up. A concurrent run imports them while its episodes wait for their models (the plugin's
`WARM_UP_IMPORTS`).
"""

from __future__ import annotations

import re
import threading
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING

from rapidfuzz import fuzz, utils

from pytest_toolsandbox.tools.checks import check_latitude, check_longitude, check_timestamp, require_wifi
from pytest_toolsandbox.tools.spec import tool
from pytest_toolsandbox.world.tables import Table
from pytest_toolsandbox.world.world import World

if TYPE_CHECKING:
    import pint

# A holiday name must match this well (rapidfuzz partial ratio, exclusive) to count as found.
_HOLIDAY_CUTOFF = 90


@tool(domain="utilities")
def get_current_timestamp(world: World) -> float:
    """Get the current POSIX timestamp.

    Returns:
        The current time as seconds since the epoch.
    """
    return world.clock.timestamp()


@tool(domain="utilities")
def timestamp_to_datetime_info(world: World, timestamp: float) -> dict[str, int]:
    """Convert a POSIX timestamp to its local date and time parts.

    Args:
        timestamp: POSIX timestamp (seconds since the epoch).

    Returns:
        A dictionary with keys year, month, day, hour, minute, second and isoweekday (1 = Monday).
    """
    check_timestamp("timestamp", timestamp)
    moment = world.clock.local(timestamp)
    return {
        "year": moment.year,
        "month": moment.month,
        "day": moment.day,
        "hour": moment.hour,
        "minute": moment.minute,
        "second": moment.second,
        "isoweekday": moment.isoweekday(),
    }


@tool(domain="utilities")
def datetime_info_to_timestamp(
    world: World, year: int, month: int, day: int, hour: int, minute: int, second: int
) -> float:
    """Convert a local date and time to a POSIX timestamp.

    Args:
        year: Year, e.g. 2024.
        month: Month, 1 to 12.
        day: Day of the month, 1 to 31.
        hour: Hour, 0 to 23.
        minute: Minute, 0 to 59.
        second: Second, 0 to 59.

    Returns:
        The POSIX timestamp of that local date and time.
    """
    try:
        moment = datetime(year, month, day, hour, minute, second)
    except (ValueError, OverflowError) as error:
        raise ValueError(
            f"Invalid date and time year={year}, month={month}, day={day}, hour={hour}, minute={minute}, "
            f"second={second}: {error}") from None
    return world.clock.to_timestamp(moment)


@tool(domain="utilities")
def shift_timestamp(
    world: World, timestamp: float, weeks: int = 0, days: int = 0, hours: int = 0, minutes: int = 0,
    seconds: int = 0,
) -> float:
    """Shift a POSIX timestamp by an amount of local calendar time (negative values shift backwards).

    The shift is applied to the local wall-clock time, so "1 day later" keeps the same clock time
    across a daylight saving change.

    Args:
        timestamp: POSIX timestamp to shift.
        weeks: Number of weeks to add.
        days: Number of days to add.
        hours: Number of hours to add.
        minutes: Number of minutes to add.
        seconds: Number of seconds to add.

    Returns:
        The shifted POSIX timestamp.
    """
    check_timestamp("timestamp", timestamp)
    wall = world.clock.local(timestamp).replace(tzinfo=None)
    shift = timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)
    return world.clock.to_timestamp(wall + shift)


@tool(domain="utilities")
def timestamp_diff(world: World, timestamp_0: float, timestamp_1: float) -> dict[str, int]:
    """Compute the time elapsed from timestamp_0 to timestamp_1.

    A negative difference is expressed like Python's timedelta: days is negative and seconds stays
    between 0 and 86399.

    Args:
        timestamp_0: POSIX timestamp to subtract.
        timestamp_1: POSIX timestamp to subtract from.

    Returns:
        A dictionary with keys days and seconds of timestamp_1 - timestamp_0.
    """
    check_timestamp("timestamp_0", timestamp_0)
    check_timestamp("timestamp_1", timestamp_1)
    # Local wall-clock difference, as in the reference: the inverse of shift_timestamp, so a timestamp
    # shifted by days=5 is 5 days (not 4 days 23 hours) away across a daylight saving change.
    elapsed = (world.clock.local(timestamp_1).replace(tzinfo=None)
               - world.clock.local(timestamp_0).replace(tzinfo=None))
    return {"days": elapsed.days, "seconds": elapsed.seconds}


@tool(domain="utilities")
def seconds_to_hours_minutes_seconds(world: World, seconds: float) -> dict[str, int]:
    """Split a duration in seconds into hours, minutes and seconds (hours are not wrapped at 24).

    Args:
        seconds: Duration in seconds, not negative.

    Returns:
        A dictionary with keys hour, minute and second.
    """
    if seconds < 0:
        raise ValueError(f"Parameter 'seconds' must not be negative, found seconds={seconds}.")
    whole = int(seconds)
    return {"hour": whole // 3600, "minute": whole % 3600 // 60, "second": whole % 60}


_UNITS: list[pint.UnitRegistry] = []
_UNITS_LOCK = threading.Lock()


def _units() -> pint.UnitRegistry:
    """pint's registry takes 0.2 s to build, so one is made on first use and shared; under a lock, as
    two episodes converting units at once on two runner threads built one each."""
    with _UNITS_LOCK:
        if not _UNITS:
            import pint

            _UNITS.append(pint.UnitRegistry())
        return _UNITS[0]


# pint evaluates unit expressions with exact integer powers, so "m*2**2**2**2**2**2" would never finish.
# Real units are short and raise to small powers ("m**2", "m²", "cubic feet"); anything else is refused.
_UNIT_MAX_LENGTH = 200
_UNSAFE_POWER = re.compile(r"\*\*(?![-+]?\d{1,3}(?:\.\d+)?(?![\d.]|\*\*))")


def _check_unit(name: str, unit: str) -> None:
    if len(unit) > _UNIT_MAX_LENGTH:
        raise ValueError(f"Parameter '{name}' is not a unit: {len(unit)} characters, at most "
                         f"{_UNIT_MAX_LENGTH} allowed.")
    from pint.util import string_preprocessor

    flat = re.sub(r"[\s()]", "", string_preprocessor(unit))
    if _UNSAFE_POWER.search(flat):
        raise ValueError(f"Parameter '{name}' may only raise units to small constant powers, e.g. m**2.")


def _convert(amount: float, from_unit: str, to_unit: str) -> float:
    return float(_units().Quantity(amount, from_unit).to(to_unit).magnitude)


@tool(domain="utilities")
def unit_conversion(world: World, amount: float, from_unit: str, to_unit: str) -> float:
    """Convert an amount from one unit to another, e.g. kilometers to miles or celsius to fahrenheit.

    Args:
        amount: The amount to convert.
        from_unit: Unit of the amount, e.g. "km", "mile", "degC", "pound".
        to_unit: Unit to convert to.

    Returns:
        The converted amount.
    """
    import pint

    _check_unit("from_unit", from_unit)
    _check_unit("to_unit", to_unit)
    try:
        return _convert(amount, from_unit, to_unit)
    except pint.UndefinedUnitError:
        return _convert(amount, from_unit.lower(), to_unit.lower())  # "Kilometer" → "kilometer"


@tool(domain="utilities")
def calculate_lat_lon_distance(
    world: World, latitude_0: float, longitude_0: float, latitude_1: float, longitude_1: float
) -> float:
    """Calculate the distance between two positions on Earth.

    Args:
        latitude_0: Latitude of the first position, -90 to 90.
        longitude_0: Longitude of the first position, -180 to 180.
        latitude_1: Latitude of the second position, -90 to 90.
        longitude_1: Longitude of the second position, -180 to 180.

    Returns:
        The geodesic distance in kilometers.
    """
    check_latitude("latitude_0", latitude_0)  # the reference's order: both latitudes, then longitudes
    check_latitude("latitude_1", latitude_1)
    check_longitude("longitude_0", longitude_0)
    check_longitude("longitude_1", longitude_1)
    from geopy.distance import geodesic

    return float(geodesic((latitude_0, longitude_0), (latitude_1, longitude_1)).km)


@lru_cache(maxsize=64)
def _us_holidays(year: int) -> tuple[tuple[date, str], ...]:
    """The US holiday calendar of a year, sorted by date: built once per year and process (the
    holidays package computes every rule again on each call)."""
    import holidays

    return tuple(sorted(holidays.country_holidays("US", years=year).items()))


def _best_holiday(holiday_name: str, year: int) -> date | None:
    """The date of the US holiday whose name best contains the query; ties go to the closer full-name
    match ("Independence Day" beats "Juneteenth National Independence Day"), then the earlier date."""
    def score(entry: tuple[date, str]) -> tuple[float, float]:
        name = entry[1]
        return (fuzz.partial_ratio(holiday_name, name, processor=utils.default_process),
                fuzz.ratio(holiday_name, name, processor=utils.default_process))

    calendar = _us_holidays(year)
    if not calendar:
        return None
    best = max(calendar, key=score)
    return best[0] if score(best)[0] > _HOLIDAY_CUTOFF else None


@tool(domain="utilities", reads=(Table.SETTINGS,))
def search_holiday(world: World, holiday_name: str, year: int | None = None) -> float | None:
    """Search for a US holiday by name and get the timestamp of its local midnight.

    Args:
        holiday_name: Name of the holiday, e.g. "Thanksgiving" or "Christmas".
        year: Year of the holiday; defaults to the current year.

    Returns:
        The POSIX timestamp of the start of the holiday, or null if no holiday matches.
    """
    require_wifi(world)
    found = _best_holiday(holiday_name, world.clock.now.year if year is None else year)
    return None if found is None else world.clock.to_timestamp(datetime.combine(found, time()))
