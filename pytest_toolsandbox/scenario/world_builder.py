"""From a scenario to the world an episode starts in: clock, seeded ids, patched tables, first messages."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from pytest_toolsandbox.roles.prompts import AGENT_SYSTEM_PROMPT, user_instruction
from pytest_toolsandbox.scenario.errors import ScenarioError
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.timeexpr import resolve_time
from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.default_world import OWNER, OWNER_PHONE, default_tables
from pytest_toolsandbox.world.ids import IdGenerator, stable_uuid
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.tables import PRIMARY_KEYS, SCHEMAS, Table, frame
from pytest_toolsandbox.world.world import World

FIRST_USER_MESSAGE_INDEX = 2


def scenario_clock(scenario: Scenario) -> FrozenClock:
    return FrozenClock.at(scenario.now, scenario.timezone)


def _cell(table: Table, column: str, value: Any, where: str, clock: FrozenClock) -> Any:
    """A patch value (`@…` times resolved) checked against the column type."""
    kind = SCHEMAS[table][column]
    if isinstance(value, str) and value.startswith("@"):
        try:
            value = resolve_time(value, clock)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    if value is None:
        return None
    if kind == pl.Float64():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{where}: must be a number or a time such as '@tomorrow 17:00', got {value!r}")
        try:
            number = float(value)
        except OverflowError:  # an integer beyond float range
            number = math.inf
        if not math.isfinite(number):
            raise ValueError(f"{where}: must be a finite number")
        return number
    if kind == pl.Boolean():
        if not isinstance(value, bool):
            raise ValueError(f"{where}: must be true or false, got {value!r}")
        return value
    if not isinstance(value, str):
        hint = ""
        if isinstance(value, bool):
            hint = "; YAML reads unquoted yes/no/on/off/true/false as booleans, so quote the text"
        elif isinstance(value, int | float):
            hint = "; YAML reads an unquoted +14155550123 as a number, so quote phone numbers"
        raise ValueError(f"{where}: must be a string, got {value!r}{hint}")
    return value


def _row(table: Table, row: dict[str, Any], where: str, clock: FrozenClock) -> dict[str, Any]:
    unknown = [str(column) for column in row if column not in SCHEMAS[table]]
    if unknown:
        noun = "setting(s)" if table is Table.SETTINGS else "column(s)"
        raise ValueError(f"{where}: unknown {noun} {unknown}; allowed: {list(SCHEMAS[table])}")
    return {column: _cell(table, column, value, f"{where}.{column}", clock) for column, value in row.items()}


OWNER_TOOLS = ("send_message_with_phone_number",)
"""Tools that need the owner's own contact entry (is_self): messages are sent from the owner's number."""


def _link_people(row: dict[str, Any], contacts: pl.DataFrame) -> dict[str, Any]:
    """A message row names its parties by phone number; like the default world's rows it gets the
    person id of the contact with that number, unless the row gives one (or no contact has it)."""
    people = dict(zip(contacts["phone_number"].to_list(), contacts["person_id"].to_list(), strict=True))
    linked = dict(row)
    for side in ("sender", "recipient"):
        phone = row.get(f"{side}_phone_number")
        if f"{side}_person_id" not in row and phone in people:
            linked[f"{side}_person_id"] = people[phone]
    return linked


def _check_owner(scenario: Scenario, contacts: pl.DataFrame, where: str) -> None:
    """Exactly one owner entry when a tool needs it; never two."""
    owners = contacts.filter(pl.col("is_self"))["name"].to_list()
    if len(owners) > 1:
        raise ValueError(f"{where}.contacts: {len(owners)} contacts have is_self: true ({', '.join(owners)}); "
                         "only the owner may (clear: [contacts] to replace the default owner)")
    needing = [name for name in OWNER_TOOLS if name in scenario.tools and name not in scenario.deny]
    if not owners and needing:
        raise ValueError(f"{where}.clear: clearing contacts removes the owner's own entry (is_self: true), "
                         f"which {', '.join(needing)} needs as the sender of every message; add the owner "
                         f"back under world.contacts, e.g. {{name: {OWNER}, phone_number: \"{OWNER_PHONE}\", "
                         "is_self: true}")


_TABLES: dict[tuple[Any, ...], dict[Table, pl.DataFrame]] = {}
_TABLES_KEPT = 512
"""Patched tables kept per process: every variant and trial of a scenario starts from the same ones."""


def initial_tables(scenario: Scenario, clock: FrozenClock) -> dict[Table, pl.DataFrame]:
    """The default world with the scenario's patch applied (values checked, times resolved, missing ids
    seeded, message rows linked to contacts by phone number). Errors name the file and the field, e.g.
    `field world.contacts[0].phone_number`.

    The result is a new dict of shared frames (polars frames are immutable), built once per patch and
    clock: its inputs are the patch, the scenario's name (seeded ids), its tools (the owner check) and
    the clock, never the file's path, which only appears in error messages (errors are not kept)."""
    key = (scenario.name, scenario.world.model_dump_json(), tuple(scenario.tools), tuple(scenario.deny), clock)
    tables = _TABLES.get(key)  # one lookup: episodes of concurrent items may build worlds at once
    if tables is None:
        tables = _patched_tables(scenario, clock)
        if len(_TABLES) >= _TABLES_KEPT:
            _TABLES.clear()
        _TABLES[key] = tables
    return dict(tables)


def _patched_tables(scenario: Scenario, clock: FrozenClock) -> dict[Table, pl.DataFrame]:
    tables = default_tables(clock)
    patch = scenario.world
    where = f"{scenario.path or scenario.name}: field world"
    try:
        if patch.settings:
            settings = _row(Table.SETTINGS, patch.settings, f"{where}.settings", clock)
            tables[Table.SETTINGS] = frame(Table.SETTINGS, [{**tables[Table.SETTINGS].row(0, named=True),
                                                             **settings}])
        for name in patch.clear:
            tables[Table(name)] = tables[Table(name)].clear()
        for table in (Table.CONTACTS, Table.MESSAGING, Table.REMINDERS):
            key = PRIMARY_KEYS[table]
            rows = [{key: stable_uuid(scenario.name, str(table), str(position)),
                     **_row(table, row, f"{where}.{table}[{position}]", clock)}
                    for position, row in enumerate(getattr(patch, str(table)))]
            if table is Table.MESSAGING:
                rows = [_link_people(row, tables[Table.CONTACTS]) for row in rows]
            if rows:
                tables[table] = pl.concat([tables[table], frame(table, rows)], how="vertical")
            duplicated = tables[table].filter(pl.col(key).is_duplicated())[key].unique().sort().to_list()
            if duplicated:
                raise ValueError(f"{where}.{table}: {key} {duplicated} used by more than one row; ids must be "
                                 "unique (leave them out to get seeded ones)")
            if table is Table.CONTACTS:
                _check_owner(scenario, tables[table], where)
    except (ValueError, pl.exceptions.PolarsError, TypeError) as error:
        message = str(error)
        raise ScenarioError(message if message.startswith(where) else f"{where}: {message}") from None
    return tables


def build_world(scenario: Scenario, prompts: str = "ours") -> World:
    """A fresh world for one episode of `scenario`, with the system prompts and first user message.

    `prompts="reference"` uses the reference benchmark's agent prompt and user instruction imported
    beside the scenario (roles/reference_prompts.py) instead of ours."""
    clock = scenario_clock(scenario)
    world = World(initial_tables(scenario, clock), clock, IdGenerator(scenario.name))
    if prompts == "reference":
        from pytest_toolsandbox.roles.reference_prompts import reference_prompts

        reference = reference_prompts(scenario)
        agent_prompt, user_prompt = reference.agent_system_prompt, reference.user_message(scenario.user)
    else:
        agent_prompt, user_prompt = AGENT_SYSTEM_PROMPT, user_instruction(scenario.user)
    world.post(sender=Role.SYSTEM, recipient=Role.AGENT, content=agent_prompt)
    world.post(sender=Role.SYSTEM, recipient=Role.USER, content=user_prompt)
    world.post(sender=Role.USER, recipient=Role.AGENT, content=scenario.user.first_message)
    assert world.messages[FIRST_USER_MESSAGE_INDEX].sender is Role.USER
    return world
