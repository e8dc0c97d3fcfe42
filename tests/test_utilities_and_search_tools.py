"""Utility and search tools: results on the frozen clock, every error under every settings state, the
offline data and the backend seam."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pint
import polars as pl
import pytest

from pytest_toolsandbox.tools import backends
from pytest_toolsandbox.tools.backends import OfflineBackend, load_data, use_backend
from pytest_toolsandbox.tools.errors import describe_exception
from pytest_toolsandbox.tools.search import (
    convert_currency,
    search_lat_lon,
    search_location_around_lat_lon,
    search_stock,
    search_weather_around_lat_lon,
)
from pytest_toolsandbox.tools.utilities import (
    calculate_lat_lon_distance,
    datetime_info_to_timestamp,
    get_current_timestamp,
    search_holiday,
    seconds_to_hours_minutes_seconds,
    shift_timestamp,
    timestamp_diff,
    timestamp_to_datetime_info,
    unit_conversion,
)
from pytest_toolsandbox.world import FrozenClock, IdGenerator, Table, World
from pytest_toolsandbox.world.default_world import HOME_LATITUDE, HOME_LONGITUDE, default_tables

LA = ZoneInfo("America/Los_Angeles")
NOW = datetime(2026, 3, 12, 9, 30, tzinfo=LA)  # the default frozen clock: a Thursday

WIFI_OFF = {"wifi": False}
LOCATION_OFF = {"location_service": False}
BOTH_OFF = {"wifi": False, "location_service": False}
# What set_low_battery_mode_status(on=True) leaves behind.
LOW_BATTERY = {"low_battery_mode": True, "cellular": False, "wifi": False, "location_service": False}

WIFI_ERROR = "Wifi is not enabled"
LOCATION_ERROR = "Location service is not enabled."
PAIR_ERROR = "Latitude and Longitude must be either both provided, or both not provided"
PLACE_KEYS = {"name", "address", "latitude", "longitude", "phone_number", "category", "rating"}


def make_world(clock: FrozenClock | None = None, **settings: bool) -> World:
    clock = clock or FrozenClock.at()
    world = World(default_tables(clock), clock, IdGenerator("t"))
    if settings:
        frame = world.table(Table.SETTINGS)
        world.write(Table.SETTINGS, frame.with_columns(
            [pl.lit(value, dtype=pl.Boolean()).alias(name) for name, value in settings.items()]))
    return world


@pytest.fixture
def world() -> World:
    return make_world()


def local_ts(*parts: int) -> float:
    return datetime(*parts, tzinfo=LA).timestamp()


def serialisable(value: Any) -> Any:
    """Round-trip through strict JSON (no NaN), as results reach the agent."""
    return json.loads(json.dumps(value, allow_nan=False, sort_keys=True))


# -- time ------------------------------------------------------------------------------------------------

def test_current_timestamp_is_the_frozen_clock(world: World) -> None:
    assert get_current_timestamp(world) == NOW.timestamp() == world.clock.timestamp()


def test_timestamp_to_datetime_info_uses_the_clock_zone(world: World) -> None:
    info = timestamp_to_datetime_info(world, NOW.timestamp())
    assert info == {"year": 2026, "month": 3, "day": 12, "hour": 9, "minute": 30, "second": 0,
                    "isoweekday": 4}
    tokyo = make_world(FrozenClock.at(timezone="Asia/Tokyo"))
    assert timestamp_to_datetime_info(tokyo, NOW.timestamp())["day"] == 13
    assert timestamp_to_datetime_info(tokyo, NOW.timestamp())["hour"] == 1


@pytest.mark.parametrize(("value", "message"), [
    (0.0, "Parameter 'timestamp' is smaller than its valid range minimum of 315529200.0."),
    (3e9, "Parameter 'timestamp' is larger than its valid range maximum of 2524604400.0."),
])
def test_timestamp_range_is_checked(world: World, value: float, message: str) -> None:
    for function in (timestamp_to_datetime_info, shift_timestamp):
        with pytest.raises(ValueError) as error:
            function(world, value)
        assert str(error.value) == message


def test_datetime_info_round_trips(world: World) -> None:
    timestamp = datetime_info_to_timestamp(world, 2026, 3, 12, 9, 30, 0)
    assert timestamp == NOW.timestamp()
    assert timestamp_to_datetime_info(world, timestamp)["minute"] == 30


def test_datetime_info_rejects_impossible_dates(world: World) -> None:
    expected = r"Invalid date and time year=2026, month=2, day=30.*day is out of range"
    with pytest.raises(ValueError, match=expected):
        datetime_info_to_timestamp(world, 2026, 2, 30, 12, 0, 0)
    with pytest.raises(ValueError, match="Invalid date and time"):
        datetime_info_to_timestamp(world, 2026, 1, 1, 24, 0, 0)


def test_shift_timestamp_moves_local_wall_time(world: World) -> None:
    noon_before_dst = local_ts(2026, 3, 7, 12, 0, 0)
    shifted = shift_timestamp(world, noon_before_dst, days=1)
    assert shifted == local_ts(2026, 3, 8, 12, 0, 0)
    assert shifted - noon_before_dst == 23 * 3600  # clocks sprang forward on March 8
    assert shift_timestamp(world, NOW.timestamp(), weeks=-1, hours=2, minutes=3, seconds=4) == local_ts(
        2026, 3, 5, 11, 33, 4)
    assert shift_timestamp(world, NOW.timestamp()) == NOW.timestamp()


def test_timestamp_diff_is_a_timedelta(world: World) -> None:
    start = NOW.timestamp()
    assert timestamp_diff(world, start, start + 90_000) == {"days": 1, "seconds": 3600}
    assert timestamp_diff(world, start, start - 1) == {"days": -1, "seconds": 86399}
    with pytest.raises(ValueError, match="Parameter 'timestamp_1' is smaller"):
        timestamp_diff(world, start, 5.0)
    with pytest.raises(ValueError, match="Parameter 'timestamp_0' is larger"):
        timestamp_diff(world, 3e9, start)


def test_seconds_to_hours_minutes_seconds_is_arithmetic(world: World) -> None:
    assert seconds_to_hours_minutes_seconds(world, 3661.9) == {"hour": 1, "minute": 1, "second": 1}
    assert seconds_to_hours_minutes_seconds(world, 90_000) == {"hour": 25, "minute": 0, "second": 0}
    assert seconds_to_hours_minutes_seconds(world, 0) == {"hour": 0, "minute": 0, "second": 0}
    tokyo = make_world(FrozenClock.at(timezone="Asia/Tokyo"))
    assert seconds_to_hours_minutes_seconds(tokyo, 59) == {"hour": 0, "minute": 0, "second": 59}
    with pytest.raises(ValueError, match="must not be negative, found seconds=-1"):
        seconds_to_hours_minutes_seconds(world, -1)


# -- units and distances ---------------------------------------------------------------------------------

def test_unit_conversion(world: World) -> None:
    assert unit_conversion(world, 1, "km", "mile") == pytest.approx(0.621371, abs=1e-6)
    assert unit_conversion(world, 100, "degF", "degC") == pytest.approx(37.7778, abs=1e-4)
    assert unit_conversion(world, 2, "Kilometer", "Meter") == pytest.approx(2000)  # lower-cased retry
    assert isinstance(unit_conversion(world, 1, "pound", "kilogram"), float)


def test_unit_conversion_errors_render_as_pint_errors(world: World) -> None:
    with pytest.raises(pint.DimensionalityError) as dimension:
        unit_conversion(world, 1, "km", "kg")
    assert describe_exception(dimension.value) == (
        "DimensionalityError: Cannot convert from 'kilometer' ([length]) to 'kilogram' ([mass])")
    with pytest.raises(pint.UndefinedUnitError) as undefined:
        unit_conversion(world, 1, "Foo", "km")
    assert describe_exception(undefined.value) == (
        "UndefinedUnitError: 'foo' is not defined in the unit registry")


def test_lat_lon_distance(world: World) -> None:
    paris_london = calculate_lat_lon_distance(world, 48.8566, 2.3522, 51.5074, -0.1278)
    assert paris_london == pytest.approx(343.9, abs=1.0)
    assert calculate_lat_lon_distance(world, 10, 20, 10, 20) == 0.0


@pytest.mark.parametrize(("arguments", "message"), [
    ((91, 0, 0, 0), "Parameter 'latitude_0' is larger than its valid range maximum of 90.0."),
    ((0, -181, 0, 0), "Parameter 'longitude_0' is smaller than its valid range minimum of -180.0."),
    ((0, 0, -90.5, 0), "Parameter 'latitude_1' is smaller than its valid range minimum of -90.0."),
    ((0, 0, 0, 180.5), "Parameter 'longitude_1' is larger than its valid range maximum of 180.0."),
])
def test_lat_lon_distance_checks_ranges(world: World, arguments: tuple[float, ...], message: str) -> None:
    with pytest.raises(ValueError) as error:
        calculate_lat_lon_distance(world, *arguments)
    assert str(error.value) == message


# -- holidays --------------------------------------------------------------------------------------------

def test_search_holiday_returns_local_midnight(world: World) -> None:
    assert search_holiday(world, "Thanksgiving") == local_ts(2026, 11, 26, 0, 0, 0)
    assert search_holiday(world, "christmas") == local_ts(2026, 12, 25, 0, 0, 0)
    assert search_holiday(world, "Thanksgiving", 2024) == local_ts(2024, 11, 28, 0, 0, 0)


def test_search_holiday_prefers_the_closest_name(world: World) -> None:
    # "Independence Day (observed)" (July 3) and "Juneteenth National Independence Day" also contain it.
    assert search_holiday(world, "Independence Day") == local_ts(2026, 7, 4, 0, 0, 0)


def test_search_holiday_without_a_good_match_is_none(world: World) -> None:
    assert search_holiday(world, "Diwali") is None
    assert search_holiday(world, "???") is None


@pytest.mark.parametrize("settings", [WIFI_OFF, BOTH_OFF, LOW_BATTERY])
def test_search_holiday_needs_wifi(settings: dict[str, bool]) -> None:
    with pytest.raises(ConnectionError, match=f"^{WIFI_ERROR}$"):
        search_holiday(make_world(**settings), "Thanksgiving")


def test_search_holiday_ignores_location_service() -> None:
    assert search_holiday(make_world(**LOCATION_OFF), "Labor Day") == local_ts(2026, 9, 7, 0, 0, 0)


# -- currency --------------------------------------------------------------------------------------------

def test_convert_currency(world: World) -> None:
    assert convert_currency(world, 100, "USD", "EUR") == 92.0
    assert convert_currency(world, 100, "eur", "jpy") == pytest.approx(16250.0)
    assert convert_currency(world, 12.5, "GBP", "GBP") == 12.5


@pytest.mark.parametrize(("source", "target"), [("XYZ", "USD"), ("USD", "XYZ")])
def test_convert_currency_rejects_unknown_codes(world: World, source: str, target: str) -> None:
    with pytest.raises(ValueError) as error:
        convert_currency(world, 1, source, target)
    assert describe_exception(error.value) == "ValueError: XYZ is not a known 3 letter ISO 4217 currency code"


@pytest.mark.parametrize("settings", [WIFI_OFF, BOTH_OFF, LOW_BATTERY])
def test_convert_currency_needs_wifi(settings: dict[str, bool]) -> None:
    with pytest.raises(ConnectionError, match=f"^{WIFI_ERROR}$"):
        convert_currency(make_world(**settings), 1, "USD", "EUR")


# -- reverse geocoding -----------------------------------------------------------------------------------

def test_search_lat_lon_finds_the_nearest_address(world: World) -> None:
    assert search_lat_lon(world, HOME_LATITUDE, HOME_LONGITUDE) == "Cupertino, CA, USA"
    assert search_lat_lon(world, 37.3226, -122.0404) == "21010 Stevens Creek Blvd, Cupertino, CA 95014, USA"
    eiffel = "Champ de Mars, 5 Av. Anatole France, 75007 Paris, France"
    assert search_lat_lon(world, 48.8583, 2.2944) == eiffel


def test_search_lat_lon_far_from_everything_is_none(world: World) -> None:
    assert search_lat_lon(world, 0.0, -140.0) is None


def test_search_lat_lon_checks_ranges(world: World) -> None:
    with pytest.raises(ValueError) as error:
        search_lat_lon(world, 95.0, 0.0)
    assert str(error.value) == "Parameter 'latitude' is larger than its valid range maximum of 90.0."
    with pytest.raises(ValueError, match="Parameter 'longitude' is smaller"):
        search_lat_lon(world, 0.0, -200.0)


@pytest.mark.parametrize("settings", [WIFI_OFF, BOTH_OFF, LOW_BATTERY])
def test_search_lat_lon_needs_wifi_not_location(settings: dict[str, bool]) -> None:
    with pytest.raises(ConnectionError, match=f"^{WIFI_ERROR}$"):
        search_lat_lon(make_world(**settings), HOME_LATITUDE, HOME_LONGITUDE)
    assert search_lat_lon(make_world(**LOCATION_OFF), HOME_LATITUDE, HOME_LONGITUDE) is not None


# -- places ----------------------------------------------------------------------------------------------

def test_place_search_defaults_to_the_device_location(world: World) -> None:
    results = search_location_around_lat_lon(world, "coffee")
    assert len(results) == 4
    assert serialisable(results) == results
    assert all(set(place) == PLACE_KEYS for place in results)
    assert all(place["category"] == "coffee shop" for place in results)
    distances = [calculate_lat_lon_distance(world, HOME_LATITUDE, HOME_LONGITUDE, place["latitude"],
                                            place["longitude"]) for place in results]
    assert distances == sorted(distances)
    assert results[0]["name"] == "Blue Fern Coffee"
    assert results[0]["phone_number"].startswith("+1408555")


def test_place_search_ranks_exact_names_first(world: World) -> None:
    assert search_location_around_lat_lon(world, "Eiffel Tower")[0]["name"] == "Eiffel Tower"
    assert [p["name"] for p in search_location_around_lat_lon(world, "sushi")] == ["Umi Sushi Bar"]
    results = search_location_around_lat_lon(world, "Paris", 48.85, 2.35)
    assert results[0] == {"name": "Paris", "address": "Paris, France", "latitude": 48.8566,
                          "longitude": 2.3522, "phone_number": None, "category": "city", "rating": None}


def test_place_search_folds_accents_plurals_and_filler_words(world: World) -> None:
    assert search_location_around_lat_lon(world, "cafe lumiere")[0]["name"] == "Café Lumière"
    pharmacies = search_location_around_lat_lon(world, "pharmacies near me")
    assert {place["category"] for place in pharmacies} == {"pharmacy"}
    in_sunnyvale = search_location_around_lat_lon(world, "coffee in Sunnyvale")
    assert "Sunnyvale" in in_sunnyvale[0]["address"]


def test_place_search_keeps_category_matches_nearby(world: World) -> None:
    assert search_location_around_lat_lon(world, "coffee", 48.85, 2.35) == []
    assert search_location_around_lat_lon(world, "zzzz qqqq") == []


def test_place_search_given_position_needs_no_location_service() -> None:
    results = search_location_around_lat_lon(make_world(**LOCATION_OFF), "gas station", 37.37, -122.03)
    assert results and all(place["category"] == "gas station" for place in results)


@pytest.mark.parametrize(("latitude", "longitude"), [(37.3, None), (None, -122.0)])
def test_place_search_needs_both_or_neither_coordinate(world: World, latitude: float | None,
                                                       longitude: float | None) -> None:
    with pytest.raises(ValueError) as error:
        search_location_around_lat_lon(world, "coffee", latitude, longitude)
    assert str(error.value) == PAIR_ERROR


def test_place_search_checks_ranges(world: World) -> None:
    with pytest.raises(ValueError, match="Parameter 'latitude' is smaller"):
        search_location_around_lat_lon(world, "coffee", -100.0, 0.0)


@pytest.mark.parametrize(("settings", "error", "message"), [
    (WIFI_OFF, ConnectionError, WIFI_ERROR),
    (LOCATION_OFF, PermissionError, LOCATION_ERROR),
    (BOTH_OFF, PermissionError, LOCATION_ERROR),
    (LOW_BATTERY, PermissionError, LOCATION_ERROR),
])
def test_place_search_settings_errors(settings: dict[str, bool], error: type[Exception],
                                      message: str) -> None:
    with pytest.raises(error) as raised:
        search_location_around_lat_lon(make_world(**settings), "coffee")
    assert str(raised.value) == message


@pytest.mark.parametrize("settings", [WIFI_OFF, BOTH_OFF, LOW_BATTERY])
def test_place_search_with_position_reports_wifi(settings: dict[str, bool]) -> None:
    with pytest.raises(ConnectionError, match=f"^{WIFI_ERROR}$"):
        search_location_around_lat_lon(make_world(**settings), "coffee", 37.3, -122.0)


# -- stocks ----------------------------------------------------------------------------------------------

def test_search_stock_by_symbol_or_name(world: World) -> None:
    apple = search_stock(world, "AAPL")
    assert apple == {"symbol": "AAPL", "name": "Apple Inc.", "price": 227.5, "change": 1.84,
                     "percent_change": 0.82, "currency": "USD", "exchange": "NASDAQ"}
    assert search_stock(world, "Apple") == apple
    assert search_stock(world, "apple stock") == apple
    assert search_stock(world, "Google")["symbol"] == "GOOGL"
    assert search_stock(world, "microsoft")["symbol"] == "MSFT"
    assert search_stock(world, "t")["symbol"] == "T"
    assert serialisable(apple) == apple


def test_search_stock_without_match_is_none(world: World) -> None:
    assert search_stock(world, "Qwertyuiop Widgets") is None
    assert search_stock(world, "stock") is None


@pytest.mark.parametrize("settings", [WIFI_OFF, BOTH_OFF, LOW_BATTERY])
def test_search_stock_needs_wifi(settings: dict[str, bool]) -> None:
    with pytest.raises(ConnectionError, match=f"^{WIFI_ERROR}$"):
        search_stock(make_world(**settings), "AAPL")


# -- weather ---------------------------------------------------------------------------------------------

DAILY_KEYS = {"location", "date", "condition", "max_temperature", "min_temperature", "average_temperature",
              "max_wind_speed", "average_humidity", "average_visibility_distance", "sunrise", "sunset",
              "temperature_unit", "distance_unit"}
CURRENT_KEYS = {"current_temperature", "perceived_temperature", "humidity", "wind_speed",
                "visibility_distance", "barometric_pressure"}


def test_weather_today_at_the_device_location(world: World) -> None:
    weather = search_weather_around_lat_lon(world)
    assert set(weather) == DAILY_KEYS | CURRENT_KEYS
    assert serialisable(weather) == weather
    assert weather["location"] == "Cupertino"
    assert weather["date"] == "2026-03-12"
    assert weather["temperature_unit"] == "Celsius" and weather["distance_unit"] == "Kilometer"
    assert weather["min_temperature"] <= weather["average_temperature"] <= weather["max_temperature"]
    assert weather["min_temperature"] - 1 <= weather["current_temperature"] <= weather["max_temperature"] + 1
    assert 0 <= weather["humidity"] <= 100
    assert "07:10 AM" <= weather["sunrise"] <= "07:40 AM"  # Cupertino, mid-March, daylight saving time
    assert "07:00 PM" <= weather["sunset"] <= "07:25 PM"


def test_weather_forecast_days_have_no_current_conditions(world: World) -> None:
    tomorrow = search_weather_around_lat_lon(world, days=1)
    assert set(tomorrow) == DAILY_KEYS
    assert tomorrow["date"] == "2026-03-13"
    assert search_weather_around_lat_lon(world, days=14)["date"] == "2026-03-26"


def test_weather_is_deterministic(world: World) -> None:
    first = search_weather_around_lat_lon(world, 2, 51.5074, -0.1278)
    assert search_weather_around_lat_lon(make_world(), 2, 51.5074, -0.1278) == first
    assert search_weather_around_lat_lon(world, 2, 51.5071, -0.1281) == first  # same ~1 km cell
    assert OfflineBackend().weather(51.5074, -0.1278, NOW, 2) == first
    days = [search_weather_around_lat_lon(world, day, 51.5074, -0.1278) for day in range(8)]
    assert len({(d["average_temperature"], d["average_humidity"]) for d in days}) > 1


def test_weather_does_not_depend_on_process_hash_seed_or_zone(world: World) -> None:
    script = ("import json; from datetime import datetime; from zoneinfo import ZoneInfo; "
              "from pytest_toolsandbox.tools.backends import OfflineBackend; "
              "now = datetime(2026, 3, 12, 9, 30, tzinfo=ZoneInfo('America/Los_Angeles')); "
              "print(json.dumps(OfflineBackend().weather(35.6762, 139.6503, now, 0), sort_keys=True))")
    env = {**os.environ, "PYTHONHASHSEED": "12345", "TZ": "Pacific/Auckland"}
    output = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                            check=True)
    assert json.loads(output.stdout) == search_weather_around_lat_lon(world, 0, 35.6762, 139.6503)


def test_weather_follows_the_location_calendar_and_climate(world: World) -> None:
    tokyo = search_weather_around_lat_lon(world, 0, 35.6762, 139.6503)
    assert tokyo["location"] == "Tokyo" and tokyo["date"] == "2026-03-13"  # already tomorrow there
    singapore = search_weather_around_lat_lon(world, 0, 1.3521, 103.8198)
    reykjavik = search_weather_around_lat_lon(world, 0, 64.1466, -21.9426)
    assert singapore["average_temperature"] > reykjavik["average_temperature"] + 15


def test_weather_is_plausible_everywhere() -> None:
    backend = OfflineBackend()
    for row in load_data("places.json")[::7]:
        for days in (0, 7, 14):
            weather = backend.weather(row["latitude"], row["longitude"], NOW, days)
            low, mean, high = (weather[f"{kind}_temperature"] for kind in ("min", "average", "max"))
            assert -45 < low <= mean <= high < 50
            assert 0 <= weather["average_humidity"] <= 100
            assert 0 < weather["average_visibility_distance"] <= 10
            assert weather["condition"] in {"Sunny", "Partly cloudy", "Cloudy", "Light rain", "Rain", "Snow"}


def test_weather_in_polar_night_has_no_sunrise() -> None:
    december = datetime(2026, 12, 20, 12, 0, tzinfo=LA)
    weather = OfflineBackend().weather(80.0, 15.0, december, 0)
    assert weather["sunrise"] is None and weather["sunset"] is None


@pytest.mark.parametrize(("days", "message"), [
    (-1, "Days must be positive integer, found days=-1."),
    (15, "Days must be at most 14, found days=15."),
])
def test_weather_days_are_checked(world: World, days: int, message: str) -> None:
    with pytest.raises(ValueError) as error:
        search_weather_around_lat_lon(world, days)
    assert describe_exception(error.value) == f"ValueError: {message}"


def test_weather_needs_both_or_neither_coordinate(world: World) -> None:
    with pytest.raises(ValueError, match=f"^{PAIR_ERROR}$"):
        search_weather_around_lat_lon(world, 0, latitude=37.3)


@pytest.mark.parametrize(("settings", "error", "message"), [
    (WIFI_OFF, ConnectionError, WIFI_ERROR),
    (LOCATION_OFF, PermissionError, LOCATION_ERROR),
    (BOTH_OFF, PermissionError, LOCATION_ERROR),
    (LOW_BATTERY, PermissionError, LOCATION_ERROR),
])
def test_weather_settings_errors(settings: dict[str, bool], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        search_weather_around_lat_lon(make_world(**settings))
    assert str(raised.value) == message


def test_weather_with_position_needs_only_wifi() -> None:
    assert search_weather_around_lat_lon(make_world(**LOCATION_OFF), 0, 48.85, 2.35)["location"] == "Paris"
    with pytest.raises(ConnectionError, match=f"^{WIFI_ERROR}$"):
        search_weather_around_lat_lon(make_world(**LOW_BATTERY), 0, 48.85, 2.35)


# -- backend seam ----------------------------------------------------------------------------------------

class _FixedBackend(OfflineBackend):
    def stock(self, query: str) -> dict[str, Any] | None:
        return {"symbol": query}


def test_search_tools_use_the_installed_backend(world: World) -> None:
    with use_backend(_FixedBackend()) as backend:
        assert backends.current_backend() is backend
        assert search_stock(world, "ANY") == {"symbol": "ANY"}
    assert isinstance(backends.current_backend(), OfflineBackend)
    assert search_stock(world, "ANY") is None


def test_geocode_prefers_exact_names_and_cities() -> None:
    backend = OfflineBackend()
    assert backend.geocode("paris")["address"] == "Paris, France"
    assert backend.geocode("Golden Gate Bridge")["category"] == "landmark"
    assert backend.geocode("xyzzy") is None


# -- bundled data ----------------------------------------------------------------------------------------

PUBLISHED_NUMBERS = {"Apple Park"}


def test_places_data() -> None:
    places = load_data("places.json")
    assert len(places) >= 200
    assert [p["name"] for p in places] == sorted(p["name"] for p in places)
    assert len({p["name"] for p in places}) == len(places)
    cities = [p for p in places if p["category"] == "city"]
    local = [p for p in places if p["phone_number"]]
    assert len(cities) >= 120
    assert len(places) - len(cities) - len(local) >= 20  # landmarks
    assert len(local) >= 70
    assert len({p["phone_number"] for p in local}) == len(local)
    world = make_world()
    for place in local:
        # invented places get fictional 555 numbers; a real landmark keeps its published number (the
        # reference benchmark's scenarios ask for Apple Park's)
        fictional = place["phone_number"].startswith("+1408555")
        assert (fictional or place["name"] in PUBLISHED_NUMBERS) and len(place["phone_number"]) == 12
        assert calculate_lat_lon_distance(world, HOME_LATITUDE, HOME_LONGITUDE, place["latitude"],
                                          place["longitude"]) < 15
    for place in places:
        ZoneInfo(place["timezone"])
        assert -90 <= place["latitude"] <= 90 and -180 <= place["longitude"] <= 180


def test_stock_and_currency_data() -> None:
    stocks = load_data("stocks.json")
    assert len(stocks) >= 50
    assert [s["symbol"] for s in stocks] == sorted({s["symbol"] for s in stocks})
    assert all(s["price"] > 0 and s["price"] - s["change"] > 0 for s in stocks)
    currencies = load_data("currencies.json")
    assert len(currencies) >= 30
    codes = [c["code"] for c in currencies]
    assert codes == sorted(set(codes)) and all(len(code) == 3 and code.isupper() for code in codes)
    assert {"USD": 1.0}.items() <= {c["code"]: c["per_usd"] for c in currencies}.items()


# -- review: reference check order, DST, pathological input ------------------------------------------------

def test_currency_codes_are_checked_before_wifi() -> None:
    with pytest.raises(ValueError, match=r"^XYZ is not a known 3 letter ISO 4217 currency code$"):
        convert_currency(make_world(**WIFI_OFF), 1, "XYZ", "USD")


def test_coordinate_ranges_are_checked_before_the_pair_and_days_after_the_position() -> None:
    with pytest.raises(ValueError, match=r"^Parameter 'latitude' is larger than its valid range maximum"):
        search_location_around_lat_lon(make_world(), "coffee", 95.0, None)
    with pytest.raises(ValueError, match=r"^Parameter 'longitude' is smaller than its valid range minimum"):
        search_weather_around_lat_lon(make_world(), 0, None, -200.0)
    with pytest.raises(PermissionError, match=f"^{LOCATION_ERROR}$"):
        search_weather_around_lat_lon(make_world(**LOCATION_OFF), -1)


def test_lat_lon_distance_checks_both_latitudes_first(world: World) -> None:
    with pytest.raises(ValueError, match=r"^Parameter 'latitude_1' is smaller"):
        calculate_lat_lon_distance(world, 0, -200, -95, 0)


def test_timestamp_diff_is_the_inverse_of_shift_across_daylight_saving(world: World) -> None:
    before_dst = local_ts(2026, 3, 7, 9, 30, 0)  # clocks sprang forward on March 8
    assert timestamp_diff(world, before_dst, NOW.timestamp()) == {"days": 5, "seconds": 0}
    assert timestamp_diff(world, before_dst, shift_timestamp(world, before_dst, days=1)) == {"days": 1, "seconds": 0}
    assert timestamp_diff(world, NOW.timestamp(), before_dst) == {"days": -5, "seconds": 0}


@pytest.mark.parametrize("unit", ["m*2**2**2**2**2**2", "m**(9**9**9)", "((10**999))**999**999 m", "m**99999",
                                  "m" * 201])
def test_unit_conversion_refuses_expressions_that_never_finish(unit: str) -> None:
    """pint evaluates integer power towers exactly: without a guard this call never returns."""
    script = ("from pytest_toolsandbox.tools.utilities import unit_conversion; "
              "from pytest_toolsandbox.world import FrozenClock, IdGenerator, World; "
              "from pytest_toolsandbox.world.default_world import default_tables; import sys; "
              "clock = FrozenClock.at(); world = World(default_tables(clock), clock, IdGenerator('t'))\n"
              "try:\n    unit_conversion(world, 1.0, sys.argv[1], 'm')\n"
              "except ValueError as error:\n    print(error)\n")
    output = subprocess.run([sys.executable, "-c", script, unit], capture_output=True, text=True, timeout=60,
                            check=True).stdout
    assert output.startswith("Parameter 'from_unit' ")


def test_unit_conversion_still_takes_ordinary_powers(world: World) -> None:
    assert unit_conversion(world, 1, "km^2", "m**2") == pytest.approx(1e6)
    assert unit_conversion(world, 1, "m²", "square centimeter") == pytest.approx(1e4)
    assert unit_conversion(world, 1, "(m/s)**2", "m**2/s**-2 / s**4") == pytest.approx(1)


def test_very_long_place_and_stock_queries_are_refused_quickly(world: World) -> None:
    query = "coffee " * 20_000
    with pytest.raises(ValueError, match=r"^Parameter 'location' is too long: 140000 characters, at most 1000"):
        search_location_around_lat_lon(world, query)
    with pytest.raises(ValueError, match=r"^Parameter 'query' is too long"):
        search_stock(world, query)


def test_sunrise_does_not_follow_the_process_locale() -> None:
    """strftime's %p is empty under de_DE; the forecast must read the same on every machine."""
    import locale

    expected = OfflineBackend().weather(HOME_LATITUDE, HOME_LONGITUDE, NOW, 0)
    saved = locale.setlocale(locale.LC_TIME)
    try:
        locale.setlocale(locale.LC_TIME, "de_DE.UTF-8")
    except locale.Error:
        pytest.skip("the de_DE.UTF-8 locale is not installed")
    try:
        assert OfflineBackend().weather(HOME_LATITUDE, HOME_LONGITUDE, NOW, 0) == expected
    finally:
        locale.setlocale(locale.LC_TIME, saved)
    assert expected["sunrise"].endswith(" AM") and expected["sunset"].endswith(" PM")
