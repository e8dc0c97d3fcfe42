"""Reminder tools."""

from __future__ import annotations

from typing import Any

from pytest_toolsandbox.tools.checks import check_latitude, check_longitude, check_timestamp
from pytest_toolsandbox.tools.spec import NOT_GIVEN, NotGiven, tool
from pytest_toolsandbox.tools.tables_ops import (
    append_row,
    check_timestamp_bounds,
    given,
    remove_row,
    replace_row,
    search_rows,
)
from pytest_toolsandbox.world.tables import Table
from pytest_toolsandbox.world.world import World

_CONTENT_CUTOFF = 50


def _check_place(latitude: float | None, longitude: float | None) -> None:
    check_latitude("latitude", latitude)
    check_longitude("longitude", longitude)


@tool(domain="reminder", action=True, reads=(Table.REMINDERS,), writes=(Table.REMINDERS,))
def add_reminder(
    world: World,
    content: str,
    reminder_timestamp: float,
    latitude: float | None = None,
    longitude: float | None = None,
) -> str:
    """Add a reminder, optionally tied to a location.

    Args:
        content: What to be reminded of.
        reminder_timestamp: When to remind, as a POSIX timestamp.
        latitude: Latitude of the place the reminder is tied to.
        longitude: Longitude of the place the reminder is tied to.

    Returns:
        The reminder_id of the new reminder.
    """
    check_timestamp("reminder_timestamp", reminder_timestamp)
    _check_place(latitude, longitude)
    reminder_id = world.ids.next_id("reminder")
    append_row(world, Table.REMINDERS, {
        "reminder_id": reminder_id, "content": content, "creation_timestamp": world.clock.timestamp(),
        "reminder_timestamp": reminder_timestamp, "latitude": latitude, "longitude": longitude,
    })
    return reminder_id


@tool(domain="reminder", action=True, reads=(Table.REMINDERS,), writes=(Table.REMINDERS,))
def modify_reminder(
    world: World,
    reminder_id: str,
    content: str | NotGiven = NOT_GIVEN,
    reminder_timestamp: float | NotGiven = NOT_GIVEN,
    latitude: float | NotGiven | None = NOT_GIVEN,
    longitude: float | NotGiven | None = NOT_GIVEN,
) -> None:
    """Modify an existing reminder. Its creation time becomes now.

    Args:
        reminder_id: The id of the reminder to modify.
        content: New content.
        reminder_timestamp: New reminder time, as a POSIX timestamp.
        latitude: New latitude, or null to remove the location.
        longitude: New longitude, or null to remove the location.
    """
    changes = given(content=content, reminder_timestamp=reminder_timestamp, latitude=latitude,
                    longitude=longitude)
    if "reminder_timestamp" in changes:
        check_timestamp("reminder_timestamp", changes["reminder_timestamp"])
    _check_place(changes.get("latitude"), changes.get("longitude"))
    if not changes:
        raise ValueError("No update information given. At least one new field should be provided among "
                         "[content, reminder_timestamp, latitude, longitude] in order to modify reminder")
    replace_row(world, Table.REMINDERS, reminder_id,
                {**changes, "creation_timestamp": world.clock.timestamp()})


@tool(domain="reminder", action=True, reads=(Table.REMINDERS,), writes=(Table.REMINDERS,))
def remove_reminder(world: World, reminder_id: str) -> None:
    """Remove a reminder.

    Args:
        reminder_id: The id of the reminder to remove.
    """
    remove_row(world, Table.REMINDERS, reminder_id)


@tool(domain="reminder", reads=(Table.REMINDERS,))
def search_reminder(
    world: World,
    reminder_id: str | NotGiven = NOT_GIVEN,
    content: str | NotGiven = NOT_GIVEN,
    creation_timestamp_lowerbound: float | NotGiven = NOT_GIVEN,
    creation_timestamp_upperbound: float | NotGiven = NOT_GIVEN,
    reminder_timestamp_lowerbound: float | NotGiven = NOT_GIVEN,
    reminder_timestamp_upperbound: float | NotGiven = NOT_GIVEN,
    latitude: float | NotGiven = NOT_GIVEN,
    longitude: float | NotGiven = NOT_GIVEN,
) -> list[dict[str, Any]]:
    """Search reminders; every given criterion must match. Content matches approximately.

    Args:
        reminder_id: Exact id of the reminder.
        content: Content of the reminder, matched approximately.
        creation_timestamp_lowerbound: Earliest creation time (POSIX timestamp, inclusive).
        creation_timestamp_upperbound: Latest creation time (POSIX timestamp, inclusive).
        reminder_timestamp_lowerbound: Earliest reminder time (POSIX timestamp, inclusive).
        reminder_timestamp_upperbound: Latest reminder time (POSIX timestamp, inclusive).
        latitude: Exact latitude of the reminder's place.
        longitude: Exact longitude of the reminder's place.

    Returns:
        The matching reminders.
    """
    arguments = {
        "reminder_id": reminder_id, "content": content,
        "creation_timestamp_lowerbound": creation_timestamp_lowerbound,
        "creation_timestamp_upperbound": creation_timestamp_upperbound,
        "reminder_timestamp_lowerbound": reminder_timestamp_lowerbound,
        "reminder_timestamp_upperbound": reminder_timestamp_upperbound,
        "latitude": latitude, "longitude": longitude,
    }
    check_timestamp_bounds(arguments)
    place = given(latitude=latitude, longitude=longitude)
    _check_place(place.get("latitude"), place.get("longitude"))
    return search_rows(world.table(Table.REMINDERS), arguments, {"content": _CONTENT_CUTOFF})
