"""Helpers shared by the project's own tests."""

from __future__ import annotations

import functools
from pathlib import Path

import polars as pl

from pytest_toolsandbox.scenario.loader import load_scenario
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.world import FrozenClock, IdGenerator, Table, World
from pytest_toolsandbox.world.default_world import default_tables
from pytest_toolsandbox.world.trajectory import Trajectory

SHIPPED_SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "scenarios").rglob("*.yaml"))
"""The project's own scenario files (found from this file, whatever the working directory)."""


def shipped_scenario(relative: str) -> Scenario:
    """One of the project's scenarios by its path from the repository root, found whatever the working
    directory, with that relative path as its `path` (as a run from the root shows it)."""
    return load_scenario(Path(__file__).resolve().parents[1] / relative).model_copy(update={"path": relative})

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


@functools.cache
def reference_trajectories() -> tuple[tuple[Path, Trajectory], ...]:
    """Every shipped scenario's reference dialogue played with the scripted user, once per test process
    (several tests read them all)."""
    from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
    from pytest_toolsandbox.running.episode import run_episode
    from pytest_toolsandbox.scenario.loader import load_scenario

    assert SHIPPED_SCENARIOS, "no scenario file found under scenarios/"
    played = []
    for path in SHIPPED_SCENARIOS:
        scenario = load_scenario(path)
        played.append((path, run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario))))
    return tuple(played)
