"""The RapidAPI search backend against the loopback server: result shapes, errors as tool errors,
and recording into the item's cassette with the key left out."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from pytest_toolsandbox.tools.backends import use_backend
from pytest_toolsandbox.tools.execution import Toolbox, run_call
from pytest_toolsandbox.tools.rapidapi import RapidAPIBackend
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import ToolCall
from tests.llm_server import Reply, ScriptedServer, error
from tests.support import make_world
from tests.test_plugin_support import run, summary, write_suite, xzcat

KEY = "rapid-SECRET-42"
CONVERT = "/api/v1/convert"


def rate(amount: float) -> Reply:
    return Reply({"success": True, "validationMessage": [],
                  "result": {"from": "USD", "to": "EUR", "amountToConvert": 1, "convertedAmount": amount}})


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


def backend(server: ScriptedServer) -> RapidAPIBackend:
    return RapidAPIBackend(key=KEY, base_url=server.url)


def test_currency_rates_and_request_headers(server: ScriptedServer) -> None:
    server.push(CONVERT, rate(0.5))
    assert backend(server).currency_rate("usd") == 1.0 and backend(server).currency_rate("EUR") == 0.5
    request = server.received[0]
    assert request.headers["x-rapidapi-key"] == KEY
    assert request.headers["x-rapidapi-host"] == "currency-converter18.p.rapidapi.com"
    assert sorted(request.query.split("&")) == ["amount=1", "from=USD", "to=EUR"]


def test_weather_places_and_stock_take_the_offline_shapes(server: ScriptedServer) -> None:
    server.push("/forecast.json", Reply({
        "location": {"name": "Lisbon"}, "current": {"temp_c": 18.0, "feelslike_c": 17.0, "humidity": 60,
                                                      "wind_kph": 10.0, "vis_km": 10.0, "pressure_mb": 1015.0},
        "forecast": {"forecastday": [{"date": "2026-11-22", "day": {
            "maxtemp_c": 20.0, "mintemp_c": 12.0, "avgtemp_c": 16.0, "maxwind_kph": 20.0, "avghumidity": 70,
            "avgvis_km": 9.0, "condition": {"text": "Sunny"}},
            "astro": {"sunrise": "07:30 AM", "sunset": "05:20 PM"}}]}}))
    server.push("/searchmaps.php", Reply({"data": [{"name": "Cafe A", "full_address": "1 Main St", "latitude": 1.0,
                                                     "longitude": 2.0, "phone_number": "+1555", "rating": 4.5,
                                                     "types": ["Coffee shop"]}]}))
    server.push("/search", Reply({"data": {"stock": [{"symbol": "AAPL:NASDAQ", "name": "Apple Inc", "price": 200.0,
                                                     "change": 1.0, "change_percent": 0.5, "currency": "USD",
                                                     "exchange": "NASDAQ"}]}}))
    api = backend(server)
    now = datetime(2026, 11, 22, 12, tzinfo=UTC)
    weather = api.weather(38.7, -9.1, now, 0)
    assert (weather["location"], weather["condition"], weather["current_temperature"]) == ("Lisbon", "Sunny", 18.0)
    assert weather["temperature_unit"] == "Celsius"
    assert api.places("coffee", 1.0, 2.0, 4) == [{"name": "Cafe A", "address": "1 Main St", "latitude": 1.0,
                                                   "longitude": 2.0, "phone_number": "+1555",
                                                   "category": "Coffee shop", "rating": 4.5}]
    assert api.stock("apple")["symbol"] == "AAPL"


def test_failures_become_tool_errors_never_crashes(server: ScriptedServer) -> None:
    server.push(CONVERT, error(500))
    world = make_world()
    tools = [OfferedTool.from_spec(all_tools()["convert_currency"])]
    call = ToolCall(id="c", name="convert_currency",
                    arguments='{"amount": 10, "from_currency_code": "USD", "to_currency_code": "EUR"}')
    with use_backend(backend(server)):
        outcome = run_call(world, Toolbox(tools, all_tools()), call)
    assert outcome.exception == "ConnectionError: currency service answered HTTP 500"
    server.push(CONVERT, error(401))
    with use_backend(RapidAPIBackend(key="", base_url=server.url)):
        outcome = run_call(world, Toolbox(tools, all_tools()), call)
    assert outcome.exception.startswith("PermissionError: currency service refused the request (HTTP 401); "
                                        "is RAPID_API_KEY set?")
    assert "x-rapidapi-key" not in server.received[-1].headers


SCENARIO = """
categories: [single_tool_call, single_user_turn]
user: {goal: Convert 100 USD to EUR., first_message: "How much is 100 dollars in euros?"}
tools: [convert_currency]
milestones:
  converted: {tool_call: {convert_currency: {amount: 100, from_currency_code: USD, to_currency_code: EUR}}}
reference:
  - convert_currency(amount=100, from_currency_code="USD", to_currency_code="EUR")
  - agent: That is 50 euros.
"""


def test_rapidapi_traffic_is_recorded_and_replayed(pytester: pytest.Pytester, server: ScriptedServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("RAPID_API_KEY", KEY)
    monkeypatch.setenv("RAPID_API_BASE_URL", server.url)
    write_suite(pytester, {"scenarios/search/usd_eur.yaml": SCENARIO})
    server.push(CONVERT, rate(0.5))
    run(pytester, "--tool-backend", "rapidapi").assert_outcomes(passed=1)
    cassette = xzcat(pytester.path / "cassettes/scenarios/search/usd_eur/reference--scripted/base-t1.yaml.xz")
    assert "convertedAmount" in cassette and KEY not in cassette and not re.search("x-rapidapi-key", cassette)
    server.stop()
    monkeypatch.delenv("RAPID_API_KEY")  # replaying needs no key
    run(pytester, "--tool-backend", "rapidapi", "--ts-record-mode", "none").assert_outcomes(passed=1)
    trajectory = next((pytester.path / "toolsandbox-report" / "trajectories").rglob("*.json")).read_text()
    assert '"result": 50.0' in trajectory and summary(pytester)["records"][0]["replayed"] is True
