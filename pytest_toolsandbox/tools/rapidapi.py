"""The RapidAPI search backend (`--tool-backend rapidapi`, key from `RAPID_API_KEY`): live answers in
the offline backend's shapes, so tools, milestones and reports do not care which backend answered.

Requests go through httpx2: inside a scenario item, through the item's recording (the episode's
cassette), so they are recorded with the LLM traffic and replayed offline (the key header is never
recorded); outside one, straight to the service. Any
failure (no key, HTTP error, an unexpected answer) is raised as an ordinary exception, which the
execution environment turns into a tool error for the agent; it never ends the episode.

The endpoints are those the ToolSandbox benchmark uses (currency-converter18, trueway-geocoding,
maps-data, real-time-finance-data, weatherapi-com); the response fields read here follow their
published response formats.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from pytest_toolsandbox.tools.backends import PlaceInfo

KEY_VARIABLE = "RAPID_API_KEY"
URL_VARIABLE = "RAPID_API_BASE_URL"
"""Optional: one URL standing in for every RapidAPI host (a proxy or a local test server)."""
HOSTS = {
    "currency": "currency-converter18.p.rapidapi.com",
    "geocoding": "trueway-geocoding.p.rapidapi.com",
    "maps": "maps-data.p.rapidapi.com",
    "finance": "real-time-finance-data.p.rapidapi.com",
    "weather": "weatherapi-com.p.rapidapi.com",
}


class RapidAPIBackend:
    """`base_url` (default: $RAPID_API_BASE_URL) replaces every RapidAPI host; `timeout` in seconds."""

    def __init__(self, key: str | None = None, base_url: str | None = None, timeout: float = 30.0) -> None:
        self.key = key if key is not None else os.environ.get(KEY_VARIABLE)
        base_url = base_url or os.environ.get(URL_VARIABLE)
        self.base_url = base_url.rstrip("/") if base_url else None
        self.timeout = timeout

    def _get(self, api: str, path: str, params: dict[str, Any]) -> Any:
        import httpx2

        from pytest_toolsandbox.recording.episode_recording import active_recording

        host = HOSTS[api]
        url = f"{self.base_url or 'https://' + host}{path}"
        # Without a key the request still goes out: a cassette can answer it (keyless CI replays).
        headers = {"x-rapidapi-host": host, **({"x-rapidapi-key": self.key} if self.key else {})}
        active = active_recording()
        try:
            if active is None:
                response = httpx2.get(url, params=params, timeout=self.timeout, headers=headers)
            else:
                with active.http_client(self.timeout) as client:
                    response = client.get(url, params=params, headers=headers)
        except httpx2.HTTPError as error:
            raise ConnectionError(f"{api} service unreachable: {type(error).__name__}") from None
        if response.status_code in (401, 403):
            raise PermissionError(f"{api} service refused the request (HTTP {response.status_code}); is "
                                  f"{KEY_VARIABLE} set{' and valid' if self.key else ''}?")
        if response.status_code >= 400:
            raise ConnectionError(f"{api} service answered HTTP {response.status_code}")
        try:
            return response.json()
        except ValueError:
            raise ConnectionError(f"{api} service answered something that is not JSON") from None

    def currency_rate(self, code: str) -> float | None:
        if code.upper() == "USD":
            return 1.0
        answer = self._get("currency", "/api/v1/convert", {"from": "USD", "to": code.upper(), "amount": 1})
        result = answer.get("result") if isinstance(answer, dict) and answer.get("success") else None
        amount = result.get("convertedAmount") if isinstance(result, dict) else None
        return float(amount) if isinstance(amount, int | float) else None

    def geocode(self, query: str) -> PlaceInfo | None:
        answer = self._get("geocoding", "/Geocode", {"address": query, "language": "en"})
        results = answer.get("results") if isinstance(answer, dict) else None
        if not results:
            return None
        best = results[0]
        location = best.get("location") or {}
        address = str(best.get("address", ""))
        return PlaceInfo(name=address.split(",")[0] or query, address=address,
                         latitude=float(location.get("lat", 0.0)), longitude=float(location.get("lng", 0.0)),
                         phone_number=None, category=str(best.get("type") or "place"), rating=None)

    def reverse(self, latitude: float, longitude: float) -> str | None:
        answer = self._get("geocoding", "/ReverseGeocode", {"location": f"{latitude},{longitude}", "language": "en"})
        results = answer.get("results") if isinstance(answer, dict) else None
        return str(results[0].get("address")) if results and results[0].get("address") else None

    def places(self, query: str, latitude: float, longitude: float, limit: int) -> list[PlaceInfo]:
        answer = self._get("maps", "/searchmaps.php", {"query": query, "limit": limit, "country": "us", "lang": "en",
                                                       "lat": latitude, "lng": longitude})
        rows = answer.get("data") if isinstance(answer, dict) else None
        places = []
        for row in (rows or [])[:limit]:
            types = row.get("types") or []
            places.append(PlaceInfo(
                name=str(row.get("name", "")), address=str(row.get("full_address", "")),
                latitude=float(row.get("latitude", 0.0)), longitude=float(row.get("longitude", 0.0)),
                phone_number=row.get("phone_number"), category=str(types[0] if types else row.get("type", "place")),
                rating=float(row["rating"]) if isinstance(row.get("rating"), int | float) else None))
        return places

    def stock(self, query: str) -> dict[str, Any] | None:
        answer = self._get("finance", "/search", {"query": query, "language": "en"})
        data = answer.get("data") if isinstance(answer, dict) else None
        stocks = data.get("stock") if isinstance(data, dict) else None
        if not stocks:
            return None
        best = stocks[0]
        return {"symbol": str(best.get("symbol", "")).split(":")[0], "name": best.get("name"),
                "price": best.get("price"), "change": best.get("change"),
                "percent_change": best.get("change_percent"), "currency": best.get("currency"),
                "exchange": best.get("exchange")}

    def weather(self, latitude: float, longitude: float, now: datetime, days: int) -> dict[str, Any] | None:
        answer = self._get("weather", "/forecast.json", {"q": f"{latitude},{longitude}", "days": days + 1})
        forecast = ((answer.get("forecast") or {}).get("forecastday") or []) if isinstance(answer, dict) else []
        if len(forecast) <= days:
            return None
        day, astro = forecast[days].get("day") or {}, forecast[days].get("astro") or {}
        result: dict[str, Any] = {
            "location": (answer.get("location") or {}).get("name"), "date": forecast[days].get("date"),
            "condition": (day.get("condition") or {}).get("text"),
            "max_temperature": day.get("maxtemp_c"), "min_temperature": day.get("mintemp_c"),
            "average_temperature": day.get("avgtemp_c"), "max_wind_speed": day.get("maxwind_kph"),
            "average_humidity": day.get("avghumidity"), "average_visibility_distance": day.get("avgvis_km"),
            "sunrise": astro.get("sunrise"), "sunset": astro.get("sunset"),
            "temperature_unit": "Celsius", "distance_unit": "Kilometer",
        }
        if days == 0:
            current = answer.get("current") or {}
            result.update({"current_temperature": current.get("temp_c"),
                           "perceived_temperature": current.get("feelslike_c"),
                           "humidity": current.get("humidity"), "wind_speed": current.get("wind_kph"),
                           "visibility_distance": current.get("vis_km"),
                           "barometric_pressure": current.get("pressure_mb")})
        return result
