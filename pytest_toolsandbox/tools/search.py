"""Search tools: places, weather, stocks and currencies, answered by the current search backend.

All of them need wifi. Checks run in the reference implementation's order, so the same call in the
same state fails the same way there and here: coordinate ranges, then a half-given position, then the
location service when the device's own position is needed, then the other arguments (currency codes
are checked first, weather days after the position), then wifi, and only then the lookup. With every
radio off, a tool that needs the device's position therefore reports the location service. Tool
descriptions do not mention these dependencies: finding them out from the error is what the
state-dependency scenarios measure.
"""

from __future__ import annotations

from typing import Any

from pytest_toolsandbox.tools.backends import PlaceInfo, current_backend
from pytest_toolsandbox.tools.checks import (
    check_latitude,
    check_longitude,
    require_location_service,
    require_wifi,
)
from pytest_toolsandbox.tools.spec import tool
from pytest_toolsandbox.world.tables import Table
from pytest_toolsandbox.world.world import World

# search_location_around_lat_lon returns at most this many places, like the reference's maps search.
PLACES_LIMIT = 4
# The longest forecast horizon a weather service offers.
MAX_FORECAST_DAYS = 14
# Place and stock queries are matched word by word against the whole gazetteer; a query of a hundred
# thousand characters would take seconds per call, so longer ones are refused (a search box's limit).
MAX_QUERY_LENGTH = 1000


def _check_query(name: str, query: str) -> None:
    if len(query) > MAX_QUERY_LENGTH:
        raise ValueError(f"Parameter '{name}' is too long: {len(query)} characters, at most {MAX_QUERY_LENGTH}.")


def _check_position(latitude: float | None, longitude: float | None) -> None:
    check_latitude("latitude", latitude)
    check_longitude("longitude", longitude)
    if (latitude is None) != (longitude is None):
        raise ValueError("Latitude and Longitude must be either both provided, or both not provided")


def _position(world: World, latitude: float | None, longitude: float | None) -> tuple[float, float]:
    """The given position, or the device's own when none was given (needs the location service)."""
    if latitude is not None and longitude is not None:
        return latitude, longitude
    require_location_service(world)
    settings = world.table(Table.SETTINGS)
    return settings["latitude"][0], settings["longitude"][0]


@tool(domain="search", reads=(Table.SETTINGS,))
def convert_currency(world: World, amount: float, from_currency_code: str, to_currency_code: str) -> float:
    """Convert an amount of money from one currency to another at the current exchange rate.

    Args:
        amount: The amount of money to convert.
        from_currency_code: ISO 4217 code of the currency the amount is in, e.g. "USD".
        to_currency_code: ISO 4217 code of the currency to convert to, e.g. "EUR".

    Returns:
        The converted amount, rounded to 2 decimals.
    """
    backend = current_backend()
    rates = []
    for code in (from_currency_code, to_currency_code):
        rate = backend.currency_rate(code)
        if rate is None:
            raise ValueError(f"{code} is not a known 3 letter ISO 4217 currency code")
        rates.append(rate)
    require_wifi(world)  # codes first, as in the reference
    return round(amount * rates[1] / rates[0], 2)


@tool(domain="search", reads=(Table.SETTINGS,))
def search_lat_lon(world: World, latitude: float, longitude: float) -> str | None:
    """Find the address at a latitude and longitude (reverse geocoding).

    Args:
        latitude: Latitude, -90 to 90.
        longitude: Longitude, -180 to 180.

    Returns:
        The address of the closest known place, or null if nothing is known nearby.
    """
    _check_position(latitude, longitude)
    require_wifi(world)
    return current_backend().reverse(latitude, longitude)


@tool(domain="search", reads=(Table.SETTINGS,))
def search_location_around_lat_lon(
    world: World, location: str, latitude: float | None = None, longitude: float | None = None
) -> list[PlaceInfo]:
    """Search for places (businesses, landmarks, cities) matching a query around a position, by default
    around the device's current location.

    Args:
        location: What to look for: a name, a kind of place or an address, e.g. "coffee shop".
        latitude: Latitude to search around; give it together with longitude, or neither.
        longitude: Longitude to search around; give it together with latitude, or neither.

    Returns:
        Up to 4 places, best match first and then nearest first, each with name, address, latitude,
        longitude, phone_number, category and rating.
    """
    _check_position(latitude, longitude)
    latitude, longitude = _position(world, latitude, longitude)
    _check_query("location", location)
    require_wifi(world)
    return current_backend().places(location, latitude, longitude, PLACES_LIMIT)


@tool(domain="search", reads=(Table.SETTINGS,))
def search_stock(world: World, query: str) -> dict[str, Any] | None:
    """Look up the latest quote of a stock by its ticker symbol or company name.

    Args:
        query: Ticker symbol or company name, e.g. "AAPL" or "Apple".

    Returns:
        A dictionary with keys symbol, name, price, change, percent_change, currency and exchange, or
        null if no stock matches.
    """
    _check_query("query", query)
    require_wifi(world)
    return current_backend().stock(query)


@tool(domain="search", reads=(Table.SETTINGS,))
def search_weather_around_lat_lon(
    world: World, days: int = 0, latitude: float | None = None, longitude: float | None = None
) -> dict[str, Any] | None:
    """Get the weather forecast around a position, by default the device's current location, for today
    or a number of days ahead.

    Args:
        days: Number of days from today: 0 for today (includes current conditions), 1 for tomorrow, up
            to 14.
        latitude: Latitude of the position; give it together with longitude, or neither.
        longitude: Longitude of the position; give it together with latitude, or neither.

    Returns:
        The forecast with location, date, condition, max_temperature, min_temperature,
        average_temperature, max_wind_speed, average_humidity, average_visibility_distance, sunrise and
        sunset; for today also current_temperature, perceived_temperature, humidity, wind_speed,
        visibility_distance and barometric_pressure. Temperatures are in Celsius, distances in
        kilometers, speeds in kilometers per hour.
    """
    _check_position(latitude, longitude)
    latitude, longitude = _position(world, latitude, longitude)
    if days < 0:
        raise ValueError(f"Days must be positive integer, found days={days}.")
    if days > MAX_FORECAST_DAYS:
        raise ValueError(f"Days must be at most {MAX_FORECAST_DAYS}, found days={days}.")
    require_wifi(world)
    return current_backend().weather(latitude, longitude, world.clock.now, days)
