"""Where the search tools get their facts: a small backend protocol and the bundled offline backend.

The reference benchmark answers search tools from live web APIs, so the same scenario gives different
answers from day to day and cannot run without a key. Here the tools ask `current_backend()`, which is
the offline backend unless a test or a run plugs in another one with `use_backend`. The offline
backend answers from JSON files shipped with the package (an invented but plausible gazetteer, stock
quotes and exchange rates) and derives weather from a hash of place and date, so every answer is the
same on every machine and at every hour the frozen clock allows.
"""

from __future__ import annotations

import hashlib
import json
import math
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from importlib.resources import files
from typing import Any, Protocol, TypedDict
from zoneinfo import ZoneInfo

import numpy as np
from rapidfuzz import fuzz, utils


class PlaceInfo(TypedDict):
    """A place as the agent sees it."""

    name: str
    address: str
    latitude: float
    longitude: float
    phone_number: str | None
    category: str
    rating: float | None


class SearchBackend(Protocol):
    """What the search tools need from the outside world; every method may answer "nothing found"."""

    def geocode(self, query: str) -> PlaceInfo | None:
        """The single best place for a name, wherever it is."""

    def reverse(self, latitude: float, longitude: float) -> str | None:
        """The address at (or very near) a position."""

    def places(self, query: str, latitude: float, longitude: float, limit: int) -> list[PlaceInfo]:
        """Places matching a query, most relevant and then nearest first."""

    def weather(self, latitude: float, longitude: float, now: datetime, days: int) -> dict[str, Any] | None:
        """The forecast `days` days after `now` near a position (plus current conditions for day 0)."""

    def stock(self, query: str) -> dict[str, Any] | None:
        """The quote of the stock best matching a symbol or company name."""

    def currency_rate(self, code: str) -> float | None:
        """Units of currency `code` that one US dollar buys; None for an unknown code."""


# -- data files ----------------------------------------------------------------------------------------

@cache
def load_data(name: str) -> Any:
    """A bundled JSON data file, parsed once per process."""
    return json.loads(files("pytest_toolsandbox.tools").joinpath("data").joinpath(name).read_text("utf-8"))


# -- text matching -------------------------------------------------------------------------------------

# Words that carry no meaning in a place query ("coffee near me", "the closest gas station").
_FILLER = frozenset({"a", "an", "the", "in", "at", "near", "nearby", "around", "me", "my", "closest",
                     "nearest", "best", "good", "some", "any", "to", "of", "for", "by", "place", "places"})

# A query term matches a word of a place at this rapidfuzz ratio (tolerates one typo in long words).
_TERM_SIMILARITY = 85
# A place must contain at least this share of the query's terms ("golden gate bridge" is not answered
# by every place called "Golden ...").
_MIN_COVERAGE = 0.5


def fold(text: str) -> str:
    """Lower case, accents and punctuation removed: "Café Lumière" and "cafe lumiere" fold alike."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join(utils.default_process(plain).split())


def _stem(word: str) -> str:
    """A crude plural stripper, so "pharmacies" finds "pharmacy" and "parks" finds "park"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def terms(text: str) -> tuple[str, ...]:
    return tuple(_stem(word) for word in fold(text).split())


def _meaningful(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words without filler (all of them if nothing else is left)."""
    return tuple(word for word in words if word not in _FILLER) or words


def _term_found(term: str, words: tuple[str, ...]) -> bool:
    return any(word == term or (len(term) >= 4 and word.startswith(term))
               or fuzz.ratio(term, word) >= _TERM_SIMILARITY for word in words)


# -- places --------------------------------------------------------------------------------------------

# Reverse geocoding answers only when a known place is this close.
REVERSE_RADIUS_KM = 5.0
# A place found through a generic word ("coffee", "park") must be this close; a place the query names
# with a word of its own ("Eiffel", "Golden Gate") is returned wherever it is.
NEARBY_RADIUS_KM = 50.0


@dataclass(frozen=True)
class Place:
    """One gazetteer entry with its words pre-folded for matching."""

    name: str
    category: str
    address: str
    latitude: float
    longitude: float
    phone_number: str | None
    rating: float | None
    timezone: str
    name_terms: tuple[str, ...]
    category_terms: tuple[str, ...]
    address_terms: tuple[str, ...]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Place:
        return cls(**row, name_terms=terms(row["name"]), category_terms=terms(row["category"]),
                   address_terms=terms(row["address"]))

    def info(self) -> PlaceInfo:
        return PlaceInfo(name=self.name, address=self.address, latitude=self.latitude,
                         longitude=self.longitude, phone_number=self.phone_number, category=self.category,
                         rating=self.rating)

    def km_to(self, latitude: float, longitude: float) -> float:
        from geopy.distance import geodesic  # imported at first use: see tools/utilities.py

        return geodesic((self.latitude, self.longitude), (latitude, longitude)).km


@dataclass(frozen=True)
class Match:
    """How a place answers a query. Ranked by exact name, then by the share of query terms found;
    `named` says a query term is a word of the place's own name that no category uses."""

    exact: bool
    named: bool
    coverage: float


def match(place: Place, query_terms: tuple[str, ...]) -> Match | None:
    """None unless a query term occurs in the place's name or category and at least half the terms
    occur in its name, category or address ("coffee in Sunnyvale")."""
    if not query_terms:
        return None
    in_name = [term for term in query_terms if _term_found(term, place.name_terms)]
    if not in_name and not any(_term_found(term, place.category_terms) for term in query_terms):
        return None
    words = place.name_terms + place.category_terms + place.address_terms
    coverage = sum(_term_found(term, words) for term in query_terms) / len(query_terms)
    if coverage < _MIN_COVERAGE:
        return None
    named = any(term not in _generic_words() for term in in_name)
    return Match(exact=query_terms == _meaningful(place.name_terms), named=named, coverage=coverage)


@cache
def gazetteer() -> tuple[Place, ...]:
    return tuple(Place.from_row(row) for row in load_data("places.json"))


@cache
def _generic_words() -> frozenset[str]:
    """Every word used by some category: "coffee" in "Blue Fern Coffee" says what, not which."""
    return frozenset(word for place in gazetteer() for word in place.category_terms)


@cache
def _cities() -> tuple[Place, ...]:
    return tuple(place for place in gazetteer() if place.category == "city")


_SHORTLIST = 4


@cache
def _radians(kind: str) -> tuple[tuple[Place, ...], np.ndarray]:
    """The places of a kind ("all" or "city") with their coordinates in radians, for vectorised search."""
    places = gazetteer() if kind == "all" else _cities()
    return places, np.radians([[place.latitude, place.longitude] for place in places])


def _nearest(kind: str, latitude: float, longitude: float) -> tuple[float, Place]:
    """The closest place by geodesic distance.

    Exact geodesics cost ~0.5 ms each, so candidates are shortlisted by great-circle distance
    (vectorised; within 0.5 % of the geodesic) and only the shortlist is measured exactly.
    """
    places, coordinates = _radians(kind)
    lat, lon = math.radians(latitude), math.radians(longitude)
    haversine = (np.sin((coordinates[:, 0] - lat) / 2) ** 2
                 + np.cos(lat) * np.cos(coordinates[:, 0]) * np.sin((coordinates[:, 1] - lon) / 2) ** 2)
    shortlist = np.argsort(haversine, kind="stable")[:_SHORTLIST]
    return min(((places[i].km_to(latitude, longitude), places[i]) for i in shortlist), key=lambda pair: pair[0])


# -- weather -------------------------------------------------------------------------------------------

class _Draws:
    """Uniform numbers in [0, 1) from sha256 of a key: the same key always gives the same weather."""

    def __init__(self, key: str) -> None:
        self._digest = hashlib.sha256(key.encode()).digest()

    def __getitem__(self, index: int) -> float:
        chunk = self._digest[4 * index: 4 * index + 4]
        return int.from_bytes(chunk, "big") / 2**32


def _weather_key(latitude: float, longitude: float, day: date) -> str:
    """Positions are rounded to ~1 km so nearby requests share a forecast (+0.0 turns -0.0 into 0.0)."""
    return f"{round(latitude, 2) + 0.0:.2f},{round(longitude, 2) + 0.0:.2f},{day.isoformat()}"


def _seasonal_mean(latitude: float, day: date) -> float:
    """Daily mean temperature climatology: warm tropics, colder poles, a summer peak late in July
    (late January south of the equator) with a swing that grows with latitude."""
    annual = 27.0 - 0.4 * max(0.0, abs(latitude) - 12.0)
    peak_day = 201 if latitude >= 0 else 19
    phase = 2 * math.pi * (day.timetuple().tm_yday - peak_day) / 365.25
    return annual + 0.2 * abs(latitude) * math.cos(phase)


def _condition(wetness: float, mean_temperature: float) -> str:
    if wetness > 0.75:
        if mean_temperature < 1.0:
            return "Snow"
        return "Rain" if wetness > 0.88 else "Light rain"
    if wetness > 0.5:
        return "Cloudy"
    return "Partly cloudy" if wetness > 0.3 else "Sunny"


@dataclass(frozen=True)
class DailyWeather:
    """One day's weather at one place (Celsius, percent, km/h, km); `wetness` in [0, 1] drives
    clouds, rain and pressure."""

    mean: float
    spread: float
    humidity: float
    wetness: float
    max_wind: float
    visibility: float
    condition: str


def daily_weather(draws: _Draws, latitude: float, day: date) -> DailyWeather:
    mean = _seasonal_mean(latitude, day) + (draws[0] - 0.5) * 6.0
    humidity = 35.0 + 55.0 * draws[1]
    wetness = min(1.0, draws[2] * (0.5 + humidity / 120.0))
    condition = _condition(wetness, mean)
    overcast = condition not in ("Sunny", "Partly cloudy")
    spread = (6.0 + 6.0 * draws[3]) * (0.6 if overcast else 1.0)
    visibility = 2.0 + 6.0 * draws[5] if wetness > 0.75 else 10.0
    return DailyWeather(mean, spread, humidity, wetness, 8.0 + 32.0 * draws[4], visibility, condition)


def _apparent_temperature(temperature: float, humidity: float, wind_kph: float) -> float:
    """Steadman's apparent temperature (shade): humid air feels warmer, wind feels colder."""
    vapour_pressure = humidity / 100 * 6.105 * math.exp(17.27 * temperature / (237.7 + temperature))
    return temperature + 0.33 * vapour_pressure - 0.70 * wind_kph / 3.6 - 4.0


def _sun_times(latitude: float, longitude: float, day: date, zone: ZoneInfo) -> tuple[str | None, str | None]:
    """Sunrise and sunset as local clock times ("07:24 AM"); None during polar day or night."""
    day_of_year = day.timetuple().tm_yday
    declination = math.radians(23.44) * math.sin(2 * math.pi * (284 + day_of_year) / 365)
    phi = math.radians(latitude)
    cos_hour_angle = ((math.sin(math.radians(-0.833)) - math.sin(phi) * math.sin(declination))
                      / (math.cos(phi) * math.cos(declination)))
    if abs(cos_hour_angle) > 1:
        return None, None
    half_day = math.degrees(math.acos(cos_hour_angle)) / 15
    b = 2 * math.pi * (day_of_year - 81) / 364
    equation_of_time = 9.87 * math.sin(2 * b) - 7.53 * math.cos(b) - 1.5 * math.sin(b)
    solar_noon = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(
        hours=12 - longitude / 15 - equation_of_time / 60)
    rise, set_ = (solar_noon + timedelta(hours=sign * half_day) for sign in (-1, 1))
    return _clock_time(rise.astimezone(zone)), _clock_time(set_.astimezone(zone))


def _clock_time(moment: datetime) -> str:
    """ "07:24 AM", formatted by hand: strftime's %p follows the process locale ("" under de_DE)."""
    return f"{(moment.hour - 1) % 12 + 1:02d}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"


def _current_weather(daily: DailyWeather, draws: _Draws, local: datetime) -> dict[str, Any]:
    """Conditions at the local hour: coolest near dawn, warmest mid-afternoon, dampest at dawn."""
    hour = local.hour + local.minute / 60
    temperature = daily.mean + daily.spread / 2 * math.cos(2 * math.pi * (hour - 15) / 24)
    humidity = min(100.0, max(15.0, daily.humidity + 10 * math.cos(2 * math.pi * (hour - 5) / 24)))
    wind = daily.max_wind * (0.4 + 0.4 * draws[6])
    pressure = 1013.0 - 8.0 * daily.wetness + (draws[7] - 0.5) * 16.0
    return {
        "current_temperature": round(temperature, 1),
        "perceived_temperature": round(_apparent_temperature(temperature, humidity, wind), 1),
        "humidity": round(humidity),
        "wind_speed": round(wind, 1),
        "visibility_distance": round(daily.visibility, 1),
        "barometric_pressure": round(pressure, 1),
    }


# -- stocks --------------------------------------------------------------------------------------------

# Words that do not tell companies apart ("Apple stock", "Ford Motor Company"), stemmed like terms().
_STOCK_FILLER = frozenset({"stock", "share", "price", "quote", "ticker", "the", "inc", "corp", "corporation",
                           "company", "co", "group", "holding", "ltd", "limited"})


def _stock_rank(query_terms: tuple[str, ...], row: dict[str, Any]) -> tuple[float, int] | None:
    """(share of query terms in the company's name or an alias, length of that name) for the best
    label, or None when less than half the terms are found; shorter names win ties ("Apple Inc."
    over "Applied Materials, Inc." for "appl")."""
    ranks = []
    for label in (row["name"], *row["aliases"]):
        label_terms = tuple(word for word in terms(label) if word not in _STOCK_FILLER)
        coverage = sum(_term_found(term, label_terms) for term in query_terms) / len(query_terms)
        if coverage >= _MIN_COVERAGE:
            ranks.append((-coverage, len(label_terms)))
    return min(ranks, default=None)


def _quote(row: dict[str, Any]) -> dict[str, Any]:
    previous_close = row["price"] - row["change"]
    return {
        "symbol": row["symbol"],
        "name": row["name"],
        "price": row["price"],
        "change": row["change"],
        "percent_change": round(100 * row["change"] / previous_close, 2),
        "currency": "USD",
        "exchange": row["exchange"],
    }


# -- the backend ---------------------------------------------------------------------------------------

class OfflineBackend:
    """Answers every search from the bundled data; no network, no randomness, no wall clock."""

    def geocode(self, query: str) -> PlaceInfo | None:
        query_terms = _meaningful(terms(query))
        ranked = [(found, place) for place in gazetteer() if (found := match(place, query_terms))]
        if not ranked:
            return None
        _, best = min(ranked, key=lambda pair: (not pair[0].exact, -pair[0].coverage,
                                                pair[1].category != "city", pair[1].name))
        return best.info()

    def reverse(self, latitude: float, longitude: float) -> str | None:
        distance, place = _nearest("all", latitude, longitude)
        return place.address if distance <= REVERSE_RADIUS_KM else None

    def places(self, query: str, latitude: float, longitude: float, limit: int) -> list[PlaceInfo]:
        query_terms = _meaningful(terms(query))
        ranked = []
        for place in gazetteer():
            found = match(place, query_terms)
            if found is None:
                continue
            distance = place.km_to(latitude, longitude)
            if found.named or distance <= NEARBY_RADIUS_KM:
                ranked.append(((not found.exact, -found.coverage, distance, place.name), place))
        ranked.sort(key=lambda pair: pair[0])
        return [place.info() for _, place in ranked[:limit]]

    def weather(self, latitude: float, longitude: float, now: datetime, days: int) -> dict[str, Any] | None:
        _, city = _nearest("city", latitude, longitude)
        zone = ZoneInfo(city.timezone)
        local = (now + timedelta(days=days)).astimezone(zone)
        draws = _Draws(_weather_key(latitude, longitude, local.date()))
        daily = daily_weather(draws, latitude, local.date())
        sunrise, sunset = _sun_times(latitude, longitude, local.date(), zone)
        result: dict[str, Any] = {
            "location": city.name,
            "date": local.date().isoformat(),
            "condition": daily.condition,
            "max_temperature": round(daily.mean + daily.spread / 2, 1),
            "min_temperature": round(daily.mean - daily.spread / 2, 1),
            "average_temperature": round(daily.mean, 1),
            "max_wind_speed": round(daily.max_wind, 1),
            "average_humidity": round(daily.humidity),
            "average_visibility_distance": round(daily.visibility, 1),
            "sunrise": sunrise,
            "sunset": sunset,
            "temperature_unit": "Celsius",
            "distance_unit": "Kilometer",
        }
        if days == 0:
            result.update(_current_weather(daily, draws, local))
        return result

    def stock(self, query: str) -> dict[str, Any] | None:
        rows = load_data("stocks.json")
        symbol = query.strip().upper()
        exact = next((row for row in rows if row["symbol"] == symbol), None)
        if exact is not None:
            return _quote(exact)
        query_terms = tuple(word for word in terms(query) if word not in _STOCK_FILLER)
        if not query_terms:
            return None
        ranked = [(rank, row["symbol"], row) for row in rows if (rank := _stock_rank(query_terms, row))]
        return _quote(min(ranked, key=lambda entry: entry[:2])[2]) if ranked else None

    def currency_rate(self, code: str) -> float | None:
        rates = {row["code"]: row["per_usd"] for row in load_data("currencies.json")}
        return rates.get(code.strip().upper())


# -- the seam ------------------------------------------------------------------------------------------

_BACKEND: ContextVar[SearchBackend | None] = ContextVar("search_backend", default=None)


@cache
def _offline() -> OfflineBackend:
    return OfflineBackend()


def current_backend() -> SearchBackend:
    """The backend search tools use now: the one installed by `use_backend`, else the offline one."""
    return _BACKEND.get() or _offline()


@contextmanager
def use_backend(backend: SearchBackend) -> Iterator[SearchBackend]:
    """Route search tools to `backend` inside the block (e.g. a recorded RapidAPI backend). The choice is
    a context variable: it holds for this thread or task and whatever it starts, not for other threads."""
    token = _BACKEND.set(backend)
    try:
        yield backend
    finally:
        _BACKEND.reset(token)
