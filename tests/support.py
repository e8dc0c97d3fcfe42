"""Helpers shared by the project's own tests."""

from __future__ import annotations

import polars as pl

from pytest_toolsandbox.world import FrozenClock, IdGenerator, Table, World
from pytest_toolsandbox.world.default_world import default_tables

SETTINGS_STATES: dict[str, dict[str, bool]] = {
    "all_on": {},
    "cellular_off": {"cellular": False},
    "wifi_off": {"wifi": False},
    "location_off": {"location_service": False},
    "low_battery": {"low_battery_mode": True, "cellular": False, "wifi": False, "location_service": False},
}


def make_world(**settings: bool) -> World:
    """A default world (frozen clock, seeded ids) with some settings overridden."""
    clock = FrozenClock.at()
    world = World(default_tables(clock), clock, IdGenerator("tests"))
    if settings:
        world.write(Table.SETTINGS, world.table(Table.SETTINGS).with_columns(
            [pl.lit(value).alias(name) for name, value in settings.items()]))
    return world
