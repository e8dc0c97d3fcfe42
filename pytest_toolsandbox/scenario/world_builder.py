"""From a scenario to the world an episode starts in: clock, seeded ids, patched tables, first messages."""

from __future__ import annotations

import polars as pl

from pytest_toolsandbox.roles.prompts import AGENT_SYSTEM_PROMPT, user_instruction
from pytest_toolsandbox.scenario.loader import ScenarioError
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.timeexpr import TimeExpressionError, resolve_times
from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.default_world import default_tables
from pytest_toolsandbox.world.ids import IdGenerator, stable_uuid
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.tables import PRIMARY_KEYS, SCHEMAS, Table, frame
from pytest_toolsandbox.world.world import World

FIRST_USER_MESSAGE_INDEX = 2


def scenario_clock(scenario: Scenario) -> FrozenClock:
    return FrozenClock.at(scenario.now, scenario.timezone)


def initial_tables(scenario: Scenario, clock: FrozenClock) -> dict[Table, pl.DataFrame]:
    """The default world with the scenario's patch applied (times resolved, missing ids seeded)."""
    tables = default_tables(clock)
    patch = scenario.world
    where = f"{scenario.path or scenario.name}: field world"
    try:
        settings = resolve_times(patch.settings, clock)
        unknown = set(settings) - set(SCHEMAS[Table.SETTINGS])
        if unknown:
            raise ValueError(f"unknown setting(s) {sorted(unknown)}; allowed: {list(SCHEMAS[Table.SETTINGS])}")
        if settings:
            row = {**tables[Table.SETTINGS].row(0, named=True), **settings}
            tables[Table.SETTINGS] = frame(Table.SETTINGS, [row])
        for name in patch.clear:
            tables[Table(name)] = tables[Table(name)].clear()
        for table in (Table.CONTACTS, Table.MESSAGING, Table.REMINDERS):
            rows = resolve_times(getattr(patch, str(table)), clock)
            key = PRIMARY_KEYS[table]
            rows = [{key: stable_uuid(scenario.name, str(table), str(position)), **row}
                    for position, row in enumerate(rows)]
            if rows:
                tables[table] = pl.concat([tables[table], frame(table, rows)], how="vertical")
    except (ValueError, TimeExpressionError, pl.exceptions.PolarsError, TypeError) as error:
        raise ScenarioError(f"{where}: {error}") from None
    return tables


def build_world(scenario: Scenario) -> World:
    """A fresh world for one episode of `scenario`, with the system prompts and first user message."""
    clock = scenario_clock(scenario)
    world = World(initial_tables(scenario, clock), clock, IdGenerator(scenario.name))
    world.post(sender=Role.SYSTEM, recipient=Role.AGENT, content=AGENT_SYSTEM_PROMPT)
    world.post(sender=Role.SYSTEM, recipient=Role.USER, content=user_instruction(scenario.user))
    world.post(sender=Role.USER, recipient=Role.AGENT, content=scenario.user.first_message)
    assert world.messages[FIRST_USER_MESSAGE_INDEX].sender is Role.USER
    return world
