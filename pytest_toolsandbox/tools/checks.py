"""Argument checks and the implicit state dependencies shared by several tools."""

from __future__ import annotations

import phonenumbers

from pytest_toolsandbox.world.tables import Table
from pytest_toolsandbox.world.world import World

TIMESTAMP_MIN = 315529200.0  # 1980-01-01, as in the reference
TIMESTAMP_MAX = 2524604400.0  # 2050-01-01


def check_range(name: str, value: float, low: float, high: float) -> None:
    if value < low:
        raise ValueError(f"Parameter '{name}' is smaller than its valid range minimum of {low}.")
    if value > high:
        raise ValueError(f"Parameter '{name}' is larger than its valid range maximum of {high}.")


def check_timestamp(name: str, value: float | None) -> None:
    if value is not None:
        check_range(name, value, TIMESTAMP_MIN, TIMESTAMP_MAX)


def check_latitude(name: str, value: float | None) -> None:
    if value is not None:
        check_range(name, value, -90.0, 90.0)


def check_longitude(name: str, value: float | None) -> None:
    if value is not None:
        check_range(name, value, -180.0, 180.0)


def check_phone_number(name: str, value: str) -> None:
    """A phone number must parse with an explicit country code (a leading +)."""
    try:
        phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException as error:
        raise ValueError(
            f"Parameter '{name}' is not a phone number with country code (e.g. +14155550123): {error}"
        ) from None


def setting(world: World, column: str) -> object:
    return world.table(Table.SETTINGS)[column][0]


def require_cellular(world: World) -> None:
    if not setting(world, "cellular"):
        raise ConnectionError("Cellular service is not enabled")


def require_wifi(world: World) -> None:
    if not setting(world, "wifi"):
        raise ConnectionError("Wifi is not enabled")


def require_location_service(world: World) -> None:
    if not setting(world, "location_service"):
        raise PermissionError("Location service is not enabled.")
