"""Compiling milestone declarations into constraints, including the automatic guardrails.

A scenario file says what should happen in words close to the domain (`tool_call`, `added`,
`agent_says`); scoring needs one shape: which table, which comparison (snapshot, addition, removal,
update), which target rows, which column measures, and which earlier moment (reference) it is
measured against. Time expressions are resolved against the scenario's clock here, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx

from pytest_toolsandbox.evaluation.columns import (
    Close,
    ColumnMeasure,
    Exact,
    TraceMatch,
    compatible,
    default_measure,
    freeze_call,
    measure_from_name,
)
from pytest_toolsandbox.evaluation.sandbox import SANDBOX_SCHEMA
from pytest_toolsandbox.scenario.milestones import CloseMatch, Milestone, TextMatch
from pytest_toolsandbox.scenario.timeexpr import resolve_times
from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.tables import SCHEMAS, WORLD_TABLES, Table

INITIAL = "initial"
"""Reference to the world as it was when the user's first message arrived."""

Comparison = Literal["snapshot", "addition", "removal", "update"]


@dataclass(frozen=True)
class Fill:
    """Values copied from the tool trace of the message `source` was mapped to."""

    source: str
    values: tuple[tuple[str, str], ...]
    formats: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Constraint:
    """One comparison of a table (or of one message) with target rows."""

    label: str
    table: Table
    comparison: Comparison
    rows: tuple[dict[str, Any], ...]
    measures: dict[str, ColumnMeasure]
    reference: str | None = None
    fill: Fill | None = None

    @property
    def depends_on(self) -> str | None:
        """The milestone whose position this constraint's similarity depends on, if any."""
        if self.fill is not None:
            return self.fill.source
        return self.reference if self.reference not in (None, INITIAL) else None


@dataclass(frozen=True, eq=False)
class EventSpec:
    """A compiled milestone or minefield: constraints plus its guardrails."""

    name: str
    constraints: tuple[Constraint, ...]
    after: tuple[str, ...]
    guarded: tuple[Table, ...]
    guard_against: tuple[str, ...]

    @property
    def refs(self) -> tuple[str, ...]:
        """Milestones the base similarity depends on, in first-use order."""
        return tuple(dict.fromkeys(c.depends_on for c in self.constraints if c.depends_on is not None))


def _measures(table: Table, columns: set[str], overrides: Mapping[str, Any], where: str) -> dict[str, ColumnMeasure]:
    measures: dict[str, ColumnMeasure] = {}
    for column in sorted(columns):
        override = overrides.get(column)
        if isinstance(override, CloseMatch):
            if table is Table.SANDBOX or not SCHEMAS[table][column].is_numeric():
                raise ValueError(f"{where}.match: {column!r} is not a numeric column, so 'close' cannot apply")
            measures[column] = Close(override.close)
        elif isinstance(override, str):
            measures[column] = measure_from_name(override)
        else:
            measures[column] = default_measure(table, column)
    return measures


def _rows(where: str, table: Table, value: Any, clock: FrozenClock) -> tuple[dict[str, Any], ...]:
    rows = [value] if isinstance(value, dict) else list(value)
    rows = resolve_times(rows, clock)
    for row in rows:
        unknown = set(row) - set(SCHEMAS[table])
        if unknown:
            raise ValueError(f"{where}: unknown column(s) {sorted(unknown)} for table '{table}'; "
                             f"allowed: {list(SCHEMAS[table])}")
        if not row:
            raise ValueError(f"{where}: a target row needs at least one column")
        for column, cell in row.items():
            if cell is not None and not compatible(SCHEMAS[table][column], cell):
                raise ValueError(f"{where}: column {column!r} holds {SCHEMAS[table][column]} values, got "
                                 f"{cell!r} ({type(cell).__name__}); quote strings such as phone numbers")
    return tuple(rows)


def _text(name: str, sender: Role, recipient: Role, said: str | TextMatch, milestone: Milestone,
          fill: Fill | None, where: str) -> Constraint:
    text, match = (said.text, said.match) if isinstance(said, TextMatch) else (said, None)
    content = (measure_from_name(match) if match
               else _measures(Table.SANDBOX, {"content"}, milestone.match, where)["content"])
    return Constraint(name, Table.SANDBOX, "snapshot",
                      ({"sender": str(sender), "recipient": str(recipient), "content": text},),
                      {"sender": Exact(), "recipient": Exact(), "content": content}, fill=fill)


def _tool_call(milestone: Milestone, clock: FrozenClock, fill: Fill | None) -> Constraint:
    alternatives = tuple(freeze_call(tool, resolve_times(arguments, clock))
                         for tool, arguments in milestone.tool_call_alternatives())
    trace = TraceMatch(tuple(sorted(milestone.tolerance.items())))
    row = {"sender": str(Role.EXECUTION_ENVIRONMENT), "recipient": str(Role.AGENT), "tool_trace": alternatives}
    return Constraint("tool_call", Table.SANDBOX, "snapshot", (row,),
                      {"sender": Exact(), "recipient": Exact(), "tool_trace": trace}, fill=fill)


def compile_event(name: str, milestone: Milestone, events: Mapping[str, Milestone], clock: FrozenClock,
                  where: str = "") -> EventSpec:
    """One declaration → constraints and guardrails (`events` are its siblings, for guardrails)."""
    where = where or name
    known = set(SANDBOX_SCHEMA) | {column for table in WORLD_TABLES for column in SCHEMAS[table]}
    for column in milestone.match:
        if column not in known:
            raise ValueError(f"{where}.match: unknown column {column!r}")
    since = milestone.since or (milestone.after[0] if milestone.after else INITIAL)
    constraints: list[Constraint] = []
    for kind, comparison in (("world", "snapshot"), ("added", "addition"), ("removed", "removal"),
                             ("updated", "update")):
        for table_name, value in (getattr(milestone, kind) or {}).items():
            table = Table(table_name)
            rows = _rows(f"{where}.{kind}.{table_name}", table, value, clock)
            columns = {column for row in rows for column in row}
            constraints.append(Constraint(
                f"{kind}.{table_name}", table, comparison, rows, _measures(table, columns, milestone.match, where),
                reference=None if comparison == "snapshot" else since))
    fill = None
    if milestone.fill_from is not None:
        fill = Fill(milestone.fill_from.milestone, tuple(milestone.fill_from.values.items()),
                    tuple(milestone.fill_from.formats))
    if milestone.tool_call is not None:
        constraints.append(_tool_call(milestone, clock, fill))
    if milestone.agent_says is not None:
        constraints.append(_text("agent_says", Role.AGENT, Role.USER, milestone.agent_says, milestone, fill, where))
    if milestone.user_says is not None:
        constraints.append(_text("user_says", Role.USER, Role.AGENT, milestone.user_says, milestone, fill, where))
    references = [c.reference for c in constraints if c.reference is not None]
    references += [c.fill.source for c in constraints if c.fill is not None]
    guard_against = tuple(dict.fromkeys([*milestone.after, *references]))
    constrained = set(milestone.constrained_tables())
    for other in guard_against:
        if other != INITIAL:
            constrained |= events[other].constrained_tables()
    allowed = [Table(t) for t in milestone.guardrails] if milestone.guardrails is not None else list(WORLD_TABLES)
    excluded = {Table(t) for t in milestone.no_guardrails}
    guarded = tuple(t for t in allowed if t not in excluded and t not in constrained)
    return EventSpec(name, tuple(constraints), tuple(milestone.after), guarded if guard_against else (),
                     guard_against if guarded else ())


def compile_events(events: Mapping[str, Milestone], clock: FrozenClock, kind: str = "milestones") -> list[EventSpec]:
    """All milestones (or minefields) of a scenario, in declaration order; dependencies must not cycle."""
    specs = [compile_event(name, milestone, events, clock, f"{kind}.{name}") for name, milestone in events.items()]
    graph = nx.DiGraph([(other, spec.name) for spec in specs for other in (*spec.after, *spec.refs)])
    if not nx.is_directed_acyclic_graph(graph):
        cycle = [u for u, _ in nx.find_cycle(graph)]
        raise ValueError(f"{kind}: dependencies (after, since, fill_from) form a cycle: "
                         f"{' → '.join([*cycle, cycle[0]])}")
    return specs
