"""Every device tool (settings, contacts, messaging, reminders, user) under every settings state.

Calls go through the execution environment, so the assertions are on exactly what an agent reads.
"""

from __future__ import annotations

import json

import polars as pl
import pytest

from pytest_toolsandbox.tools.execution import Toolbox, run_call
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world import Table, ToolCall, World
from pytest_toolsandbox.world.default_world import contact_id
from tests.support import SETTINGS_STATES, make_world

REGISTRY = all_tools()
TOOLBOX = Toolbox([OfferedTool.from_spec(spec) for spec in REGISTRY.values()], REGISTRY)
RADIOS = {"cellular": ("cellular_service", "Cellular service"), "wifi": ("wifi", "Wifi"),
          "location_service": ("location_service", "Location service")}


def call(world: World, tool_name: str, /, **arguments: object):
    return run_call(world, TOOLBOX, ToolCall(id="t", name=tool_name, arguments=json.dumps(arguments)))


def settings_of(world: World) -> dict:
    return world.table(Table.SETTINGS).row(0, named=True)


@pytest.mark.parametrize("state", SETTINGS_STATES)
@pytest.mark.parametrize("column", ["cellular", "wifi", "location_service", "low_battery_mode"])
def test_getters_report_the_setting(state: str, column: str) -> None:
    world = make_world(**SETTINGS_STATES[state])
    name = "get_cellular_service_status" if column == "cellular" else f"get_{column}_status"
    outcome = call(world, name)
    assert outcome.exception is None
    assert outcome.trace.result is settings_of(world)[column]


# A world patch may leave radios on in low battery mode; the reference checks low battery first.
RADIO_STATES = {**SETTINGS_STATES, "low_battery_radios_left_on": {"low_battery_mode": True}}


@pytest.mark.parametrize("state", RADIO_STATES)
@pytest.mark.parametrize("column", list(RADIOS))
@pytest.mark.parametrize("on", [True, False])
def test_radio_setters(state: str, column: str, on: bool) -> None:
    world = make_world(**RADIO_STATES[state])
    before = settings_of(world)
    tool_stem, label = RADIOS[column]
    outcome = call(world, f"set_{tool_stem}_status", on=on)
    if on and before["low_battery_mode"]:
        assert outcome.exception == f"PermissionError: {label} cannot be turned on in low battery mode"
    elif before[column] == on:
        assert outcome.exception == f"ValueError: {column} already {'enabled' if on else 'disabled'}"
    else:
        assert outcome.exception is None
        assert settings_of(world)[column] is on
        return
    assert settings_of(world) == before, "a failed setter must not change the world"


@pytest.mark.parametrize("state", SETTINGS_STATES)
@pytest.mark.parametrize("on", [True, False])
def test_low_battery_mode_switches_radios_off_and_never_back_on(state: str, on: bool) -> None:
    world = make_world(**SETTINGS_STATES[state])
    before = settings_of(world)
    outcome = call(world, "set_low_battery_mode_status", on=on)
    if before["low_battery_mode"] == on:
        assert outcome.exception == f"ValueError: low_battery_mode already {'enabled' if on else 'disabled'}"
        return
    assert outcome.exception is None
    after = settings_of(world)
    assert after["low_battery_mode"] is on
    for column in RADIOS:
        assert after[column] is (False if on else before[column])


def test_nested_dependency_low_battery_blocks_then_releases_wifi() -> None:
    world = make_world()
    assert call(world, "set_low_battery_mode_status", on=True).exception is None
    assert call(world, "set_wifi_status", on=True).exception == (
        "PermissionError: Wifi cannot be turned on in low battery mode")
    assert call(world, "set_low_battery_mode_status", on=False).exception is None
    assert call(world, "set_wifi_status", on=True).exception is None
    assert settings_of(world)["wifi"] is True


@pytest.mark.parametrize("state", SETTINGS_STATES)
def test_current_location_needs_location_service(state: str) -> None:
    world = make_world(**SETTINGS_STATES[state])
    outcome = call(world, "get_current_location")
    if settings_of(world)["location_service"]:
        assert outcome.trace.result == {"latitude": 37.323, "longitude": -122.0322}
    else:
        assert outcome.exception == "PermissionError: Location service is not enabled."


@pytest.mark.parametrize("state", SETTINGS_STATES)
def test_send_message_needs_cellular(state: str) -> None:
    world = make_world(**SETTINGS_STATES[state])
    before = world.table(Table.MESSAGING).height
    outcome = call(world, "send_message_with_phone_number", phone_number="+12453344098", content="Hi there")
    if not settings_of(world)["cellular"]:
        assert outcome.exception == "ConnectionError: Cellular service is not enabled"
        assert world.table(Table.MESSAGING).height == before
        return
    sent = world.table(Table.MESSAGING).row(-1, named=True)
    assert outcome.trace.result == sent["message_id"]
    assert sent["recipient_person_id"] == contact_id("Fredrik Thordendal")
    assert sent["content"] == "Hi there"
    assert sent["creation_timestamp"] == world.clock.timestamp()


def test_phone_number_is_checked_before_cellular() -> None:
    world = make_world(cellular=False)
    outcome = call(world, "send_message_with_phone_number", phone_number="2453344098", content="x")
    assert outcome.exception.startswith("ValueError: Parameter 'phone_number' is not a phone number")


def test_send_message_to_unknown_number_has_null_recipient_id(world: World) -> None:
    call(world, "send_message_with_phone_number", phone_number="+19995550000", content="hello")
    assert world.table(Table.MESSAGING).row(-1, named=True)["recipient_person_id"] is None


@pytest.mark.parametrize("state", SETTINGS_STATES)
def test_contact_lifecycle_is_independent_of_settings(state: str) -> None:
    world = make_world(**SETTINGS_STATES[state])
    added = call(world, "add_contact", name="Ada Byron", phone_number="+447700900123", relationship="friend")
    person_id = added.trace.result
    assert added.trace.arguments == {"name": "Ada Byron", "phone_number": "+447700900123",
                                     "relationship": "friend", "is_self": False}
    found = call(world, "search_contacts", name="ada byron").trace.result
    assert [row["person_id"] for row in found] == [person_id]
    assert call(world, "modify_contact", person_id=person_id, relationship="colleague").exception is None
    assert call(world, "search_contacts", person_id=person_id).trace.result[0]["relationship"] == "colleague"
    assert call(world, "remove_contact", person_id=person_id).exception is None
    assert call(world, "search_contacts", person_id=person_id).trace.result == []


def test_contact_errors(world: World) -> None:
    assert call(world, "search_contacts").exception.startswith("ValueError: No search criteria are given.")
    assert call(world, "modify_contact", person_id="nobody").exception.startswith(
        "ValueError: No update information given.")
    assert call(world, "modify_contact", person_id="nobody", name="X").exception == (
        "NoDataError: No contacts entry with person_id='nobody' found")
    assert call(world, "remove_contact", person_id="nobody").exception == (
        "NoDataError: No contacts entry with person_id='nobody' found")
    assert call(world, "add_contact", name="Me", phone_number="+14155550100", is_self=True).exception == (
        "DuplicateError: Self entry already exists. Cannot add another one.")
    other = contact_id("Sam Whitaker")
    assert call(world, "modify_contact", person_id=other, is_self=True).exception.startswith("DuplicateError")


def test_fuzzy_name_search_orders_by_score_and_caps_at_five(world: World) -> None:
    for number in range(7):
        call(world, "add_contact", name=f"Lindqvist {number}", phone_number=f"+4670000000{number}")
    rows = call(world, "search_contacts", name="Lindqvist").trace.result
    assert len(rows) == 5
    rows = call(world, "search_contacts", name="Lindqvist 3").trace.result
    assert rows[0]["name"] == "Lindqvist 3" and len(rows) > 1  # best score first, not table order
    assert call(world, "search_contacts", name="Fredrik Thordendal").trace.result[0]["phone_number"] == (
        "+12453344098")


def test_search_messages_by_bounds_and_content(world: World) -> None:
    now = world.clock.timestamp()
    recent = call(world, "search_messages", creation_timestamp_lowerbound=now - 3600).trace.result
    assert {row["content"] for row in recent} == {
        "Climbing gym tonight at 7?", "Just finished mixing the new track, want a preview?"}
    assert call(world, "search_messages", content="camping tent").trace.result[0]["content"].startswith(
        "Can I borrow your camping tent")
    assert call(world, "search_messages", creation_timestamp_upperbound=1.0).exception == (
        "ValueError: Parameter 'creation_timestamp_upperbound' is smaller than its valid range minimum "
        "of 315529200.0.")


@pytest.mark.parametrize("state", SETTINGS_STATES)
def test_reminder_lifecycle(state: str) -> None:
    world = make_world(**SETTINGS_STATES[state])
    due = world.clock.shifted(days=10)
    added = call(world, "add_reminder", content="Water the plants", reminder_timestamp=due)
    reminder_id = added.trace.result
    assert added.trace.arguments == {"content": "Water the plants", "reminder_timestamp": due,
                                     "latitude": None, "longitude": None}
    found = call(world, "search_reminder", reminder_timestamp_lowerbound=due).trace.result
    assert [row["reminder_id"] for row in found] == [reminder_id]
    assert call(world, "modify_reminder", reminder_id=reminder_id, latitude=37.3, longitude=-122.0).exception is None
    assert call(world, "search_reminder", latitude=37.3).trace.result[0]["reminder_id"] == reminder_id
    assert call(world, "remove_reminder", reminder_id=reminder_id).exception is None
    assert world.table(Table.REMINDERS).filter(pl.col("reminder_id") == reminder_id).height == 0


def test_reminder_errors(world: World) -> None:
    assert call(world, "add_reminder", content="x", reminder_timestamp=9e9).exception == (
        "ValueError: Parameter 'reminder_timestamp' is larger than its valid range maximum of 2524604400.0.")
    assert call(world, "add_reminder", content="x", reminder_timestamp=world.clock.timestamp(),
                latitude=91.0).exception == (
        "ValueError: Parameter 'latitude' is larger than its valid range maximum of 90.0.")
    assert call(world, "modify_reminder", reminder_id="r").exception.startswith(
        "ValueError: No update information given.")
    assert call(world, "remove_reminder", reminder_id="r").exception == (
        "NoDataError: No reminders entry with reminder_id='r' found")
    assert call(world, "search_reminder").exception.startswith("ValueError: No search criteria are given.")


def test_end_conversation_only_once(world: World) -> None:
    assert call(world, "end_conversation").exception is None
    assert world.active is False
    assert call(world, "end_conversation").exception == "ValueError: Conversation already ended"


def test_declared_writes_cover_every_change() -> None:
    """Order-dependence detection trusts the declared tables, so they must be truthful."""
    scripted = {
        "add_contact": {"name": "A B", "phone_number": "+14155550999"},
        "modify_contact": {"person_id": contact_id("Sam Whitaker"), "name": "Sam W"},
        "remove_contact": {"person_id": contact_id("Sam Whitaker")},
        "send_message_with_phone_number": {"phone_number": "+12453344098", "content": "hi"},
        "add_reminder": {"content": "x", "reminder_timestamp": 1.8e9},
        "set_wifi_status": {"on": False},
        "set_low_battery_mode_status": {"on": True},
    }
    for name, arguments in scripted.items():
        world = make_world()
        before = {table: world.table(table) for table in Table if table is not Table.SANDBOX}
        assert call(world, name, **arguments).exception is None, name
        changed = {table for table, frame in before.items() if not frame.equals(world.table(table))}
        assert changed and changed <= REGISTRY[name].writes, name
        assert REGISTRY[name].action


def test_searches_check_phone_numbers_like_the_reference(world: World) -> None:
    """A phone number without country code is an error (as in the reference), not an empty result."""
    assert call(world, "search_contacts", phone_number="2453344098").exception.startswith(
        "ValueError: Parameter 'phone_number' is not a phone number")
    assert call(world, "search_contacts", phone_number="+12453344098").trace.result[0]["name"] == (
        "Fredrik Thordendal")
    for argument in ("sender_phone_number", "recipient_phone_number"):
        assert call(world, "search_messages", **{argument: "4155550134"}).exception.startswith(
            f"ValueError: Parameter '{argument}' is not a phone number")
    assert len(call(world, "search_messages", sender_phone_number="+14155550134").trace.result) == 3


def test_send_message_without_owner_uses_the_reference_message(world: World) -> None:
    assert call(world, "modify_contact", person_id=contact_id("Maya Lindqvist"), is_self=False).exception is None
    assert call(world, "send_message_with_phone_number", phone_number="+12453344098", content="hi").exception == (
        "DuplicateError: 1 and only 1 self entry should exist in contacts database, instead found 0")


READ_ARGUMENTS: dict[str, dict[str, object]] = {
    "add_contact": {"name": "A B", "phone_number": "+14155550999"},
    "modify_contact": {"person_id": contact_id("Sam Whitaker"), "name": "Sam W"},
    "remove_contact": {"person_id": contact_id("Sam Whitaker")},
    "search_contacts": {"name": "Sam"},
    "send_message_with_phone_number": {"phone_number": "+12453344098", "content": "hi"},
    "search_messages": {"content": "tent"},
    "add_reminder": {"content": "x", "reminder_timestamp": 1.8e9},
    "search_reminder": {"content": "tent"},
    "timestamp_to_datetime_info": {"timestamp": 1.8e9},
    "datetime_info_to_timestamp": {"year": 2026, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0},
    "shift_timestamp": {"timestamp": 1.8e9, "days": 1},
    "timestamp_diff": {"timestamp_0": 1.8e9, "timestamp_1": 1.9e9},
    "seconds_to_hours_minutes_seconds": {"seconds": 5},
    "unit_conversion": {"amount": 1, "from_unit": "km", "to_unit": "m"},
    "calculate_lat_lon_distance": {"latitude_0": 0, "longitude_0": 0, "latitude_1": 1, "longitude_1": 1},
    "search_holiday": {"holiday_name": "Christmas"},
    "convert_currency": {"amount": 1, "from_currency_code": "USD", "to_currency_code": "EUR"},
    "search_lat_lon": {"latitude": 37.3, "longitude": -122.0},
    "search_location_around_lat_lon": {"location": "coffee"},
    "search_stock": {"query": "AAPL"},
}


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_declared_reads_cover_every_table_a_tool_looks_at(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parallel calls are only tried in other orders when declared tables overlap: an undeclared read
    would let a race go unnoticed."""
    world = make_world()
    arguments = READ_ARGUMENTS.get(name, {"on": False} if name.startswith("set_") else {})
    if name in ("modify_reminder", "remove_reminder"):
        arguments = {"reminder_id": world.table(Table.REMINDERS)["reminder_id"][0]}
        arguments.update({"content": "y"} if name == "modify_reminder" else {})
    if name == "set_low_battery_mode_status":
        arguments = {"on": True}
    looked_at: set[Table] = set()
    original = World.table
    monkeypatch.setattr(World, "table", lambda self, table: (looked_at.add(table), original(self, table))[1])
    assert call(world, name, **arguments).exception is None
    assert looked_at <= REGISTRY[name].reads | REGISTRY[name].writes


def test_modify_moves_the_row_to_the_end_and_reminders_get_a_new_creation_time(world: World) -> None:
    """As in the reference, a modification is a removal plus an append; modify_reminder also resets
    creation_timestamp to now."""
    sam = contact_id("Sam Whitaker")
    assert call(world, "modify_contact", person_id=sam, relationship="climbing partner").exception is None
    assert world.table(Table.CONTACTS).row(-1, named=True)["person_id"] == sam
    first = world.table(Table.REMINDERS).row(0, named=True)
    assert first["creation_timestamp"] < world.clock.timestamp()
    assert call(world, "modify_reminder", reminder_id=first["reminder_id"], content="Book it").exception is None
    moved = world.table(Table.REMINDERS).row(-1, named=True)
    assert (moved["reminder_id"], moved["content"]) == (first["reminder_id"], "Book it")
    assert moved["creation_timestamp"] == world.clock.timestamp()
    assert moved["reminder_timestamp"] == first["reminder_timestamp"]
