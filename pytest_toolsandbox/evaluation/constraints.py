"""Compiling milestone declarations into constraints, including the automatic guardrails.

A scenario file says what should happen in words close to the domain (`tool_call`, `added`,
`agent_says`); scoring needs one shape: which table, which comparison (snapshot, addition, removal,
update), which target rows, which column measures, and which earlier moments (a reference, or the
milestones whose tool traces fill the target) it is measured against. Time expressions are resolved
against the scenario's clock here, once; an error names the exact field.
"""

from __future__ import annotations

import dataclasses
import graphlib
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pytest_toolsandbox.evaluation.columns import (
    Close,
    ColumnMeasure,
    Contains,
    Exact,
    Rouge,
    TraceMatch,
    compatible,
    default_measure,
    freeze_call,
    measure_from_name,
)
from pytest_toolsandbox.evaluation.facts import Fact, Stated, words
from pytest_toolsandbox.evaluation.memo import ContentCache
from pytest_toolsandbox.evaluation.sandbox import SANDBOX_SCHEMA
from pytest_toolsandbox.scenario.milestones import CloseMatch, Milestone, TextMatch
from pytest_toolsandbox.scenario.timeexpr import resolve_time
from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.tables import SCHEMAS, WORLD_TABLES, Table

INITIAL = "initial"
"""Reference to the world as it was when the user's first message arrived."""

Comparison = Literal["snapshot", "addition", "removal", "update"]

CALL_COLUMNS = ("tool_trace", "attempt")
"""Message-log columns holding a call: the executed trace of a reply, or the agent's attempted call."""
SPEAKERS: tuple[tuple[Literal["agent_says", "user_says"], Role, Role], ...] = (
    ("agent_says", Role.AGENT, Role.USER), ("user_says", Role.USER, Role.AGENT))
"""Each text field of a milestone, with who says it to whom."""


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
    fills: tuple[Fill, ...] = ()
    level: float = 1.0
    """The similarity at which the constraint counts as reached for the verdict: 1.0 for state, call
    and `contains` constraints, a text's ROUGE `floor`, 0.0 for wording whose milestone states facts."""
    facts: tuple[Fact, ...] = ()
    """Facts that must hold on the message's text for the verdict (the milestone's `facts`)."""
    context: tuple[Fact, ...] = ()
    """The facts of the scenario's other text milestones: an answer may state their values beside this
    one's ("Saturday 8.1°C, Sunday 13.4°C"), and their labels say which value belongs to which fact."""

    @property
    def is_text(self) -> bool:
        """An `agent_says` / `user_says` constraint (a message's content)."""
        return self.table is Table.SANDBOX and "content" in self.rows[0]

    @property
    def depends_on(self) -> tuple[str, ...]:
        """The milestones whose positions this constraint's similarity depends on (one axis each)."""
        if self.fills:
            return tuple(fill.source for fill in self.fills)
        return (self.reference,) if self.reference not in (None, INITIAL) else ()

    @property
    def call_column(self) -> str | None:
        """`tool_trace` or `attempt` when this constraint targets a call, else None."""
        return next((column for column in CALL_COLUMNS if column in self.rows[0]), None)


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
        return tuple(dict.fromkeys(name for c in self.constraints for name in c.depends_on))


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


def _times(value: Any, clock: FrozenClock, where: str) -> Any:
    """Resolve every `@…` string inside `value`; a bad expression names its exact field."""
    if isinstance(value, str) and value.startswith("@"):
        try:
            return resolve_time(value, clock)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    if isinstance(value, dict):
        return {key: _times(item, clock, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [_times(item, clock, f"{where}[{position}]") for position, item in enumerate(value)]
    return value


def _rows(where: str, table: Table, value: Any, clock: FrozenClock) -> tuple[dict[str, Any], ...]:
    rows = [_times(value, clock, where)] if isinstance(value, dict) else _times(list(value), clock, where)
    if not rows:
        raise ValueError(f"{where}: list at least one target row (an empty list would check nothing)")
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


def _placeholders(text: str) -> set[str]:
    """The `{name}` fields of a text target (none when the braces do not parse)."""
    try:
        # plain names: with `fill_from` the scenario model refuses `{a.b}` and `{a[0]}` (scenario/formats.py)
        return {field for _, field, _, _ in string.Formatter().parse(text) if field}
    except ValueError:
        return set()


def _content_measure(said: str | TextMatch, milestone: Milestone, where: str) -> ColumnMeasure:
    if isinstance(said, TextMatch):
        return measure_from_name(said.match)
    return _measures(Table.SANDBOX, {"content"}, milestone.match, where)["content"]


def _text(label: str, sender: Role, recipient: Role, said: str | TextMatch, milestone: Milestone,
          fills: tuple[Fill, ...], where: str, level: float, facts: tuple[Fact, ...]) -> Constraint:
    text = said.text if isinstance(said, TextMatch) else said
    names = _placeholders(text)
    used = tuple(fill for fill in fills if names & {name for name, _ in fill.values})
    measure = _content_measure(said, milestone, where)
    if isinstance(measure, Contains) and not used and words(text):
        facts = (*facts, Stated(contains=text))  # contained is not enough: stated, not denied nor one of several
    return Constraint(label, Table.SANDBOX, "snapshot",
                      ({"sender": str(sender), "recipient": str(recipient), "content": text},),
                      {"sender": Exact(), "recipient": Exact(), "content": measure},
                      fills=used, level=level, facts=facts)


def _text_levels(milestone: Milestone, said: list[str | TextMatch], where: str) -> list[float]:
    """The verdict level of each text target: its `floor` when set; 1.0 for a `contains` / `exact`
    target (a fact in itself) unless it is filled from a tool result and the milestone states facts
    (they state the value, in any wording: "two hundred eighty-seven days" for a filled "287"); for
    ROUGE wording 0.0 when the milestone states facts (they decide) and 1.0 otherwise (the reference's
    wording exactly: scenarios from before facts existed)."""
    graded = [isinstance(_content_measure(entry, milestone, where), Rouge) for entry in said]
    states_facts = milestone.facts is not None or not all(graded)
    filled = [milestone.facts is not None and bool(_placeholders(entry.text if isinstance(entry, TextMatch) else entry))
              for entry in said]
    return [entry.floor if isinstance(entry, TextMatch) and entry.floor is not None
            else 0.0 if (rouge and states_facts) or placeheld else 1.0
            for entry, rouge, placeheld in zip(said, graded, filled, strict=True)]


def _call(kind: str, milestone: Milestone, clock: FrozenClock, fills: tuple[Fill, ...], where: str) -> Constraint:
    """A `tool_call` (the execution environment's reply carrying the executed trace) or an
    `attempted_call` (the agent's call message itself, whether or not it then failed)."""
    declared = (milestone.tool_call_alternatives() if kind == "tool_call"
                else milestone.attempted_call_alternatives())
    alternatives = tuple(freeze_call(tool, _times(arguments, clock, f"{where}.{kind}.{tool}"))
                         for tool, arguments in declared)
    trace = TraceMatch(tuple(sorted(milestone.tolerance.items())))
    if kind == "tool_call":
        sender, recipient, column = Role.EXECUTION_ENVIRONMENT, Role.AGENT, "tool_trace"
    else:
        sender, recipient, column = Role.AGENT, Role.EXECUTION_ENVIRONMENT, "attempt"
    row = {"sender": str(sender), "recipient": str(recipient), column: alternatives}
    return Constraint(kind, Table.SANDBOX, "snapshot", (row,),
                      {"sender": Exact(), "recipient": Exact(), column: trace}, fills=fills)


def _message_constraints(milestone: Milestone, clock: FrozenClock, where: str) -> list[Constraint]:
    """The call and text constraints of one milestone, with the `fill_from` sources each one uses.

    A call target takes every source's values as arguments; a text target uses the sources that
    provide one of its `{placeholders}`. A source no target uses is an authoring mistake.
    """
    fills = tuple(Fill(source.milestone, tuple(source.values.items()), tuple(source.formats))
                  for source in milestone.fills())
    constraints = [_call(kind, milestone, clock, fills, where)
                   for kind in ("tool_call", "attempted_call") if getattr(milestone, kind) is not None]
    facts = tuple(milestone.facts or ())
    for kind, sender, recipient in SPEAKERS:
        said = milestone.said(kind)
        levels = _text_levels(milestone, said, f"{where}.{kind}")
        for position, (entry, level) in enumerate(zip(said, levels, strict=True)):
            label = kind if len(said) == 1 else f"{kind}[{position}]"
            constraints.append(_text(label, sender, recipient, entry, milestone, fills, f"{where}.{label}", level,
                                     facts if position == 0 else ()))
    used = {id(fill) for constraint in constraints for fill in constraint.fills}
    for position, fill in enumerate(fills):
        if id(fill) not in used:
            field = "fill_from" if not isinstance(milestone.fill_from, list) else f"fill_from[{position}]"
            raise ValueError(f"{where}.{field}: no target uses the values {[name for name, _ in fill.values]}; "
                             "write them as {placeholders} in agent_says/user_says text, or fill a tool_call "
                             "or attempted_call")
    sources = [fill.source for fill in fills]
    for position, source in enumerate(sources):
        if source in sources[:position]:  # one message per source: its values belong in one entry
            raise ValueError(f"{where}.fill_from[{position}]: milestone {source!r} is already a source of "
                             f"fill_from[{sources.index(source)}]; list all its values in that entry")
    return constraints


def compile_event(name: str, milestone: Milestone, events: Mapping[str, Milestone], clock: FrozenClock,
                  where: str) -> EventSpec:
    """One declaration → constraints and guardrails (`events` are its siblings, for guardrails); `where`
    names it in errors (`milestones.sent`)."""
    known = set(SANDBOX_SCHEMA) | {column for table in WORLD_TABLES for column in SCHEMAS[table]}
    for column in milestone.match:
        if column not in known:
            raise ValueError(f"{where}.match: unknown column {column!r}")
    since = milestone.since or (milestone.after[0] if milestone.after else INITIAL)
    constraints: list[Constraint] = []
    comparisons: tuple[tuple[str, Comparison], ...] = (("world", "snapshot"), ("added", "addition"),
                                                      ("removed", "removal"), ("updated", "update"))
    for kind, comparison in comparisons:
        for table_name, value in (getattr(milestone, kind) or {}).items():
            table = Table(table_name)
            rows = _rows(f"{where}.{kind}.{table_name}", table, value, clock)
            columns = {column for row in rows for column in row}
            constraints.append(Constraint(
                f"{kind}.{table_name}", table, comparison, rows, _measures(table, columns, milestone.match, where),
                reference=None if comparison == "snapshot" else since))
    constraints += _message_constraints(milestone, clock, where)
    references = [c.reference for c in constraints if c.reference is not None]
    references += [fill.source for c in constraints for fill in c.fills]
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


_COMPILED: ContentCache[tuple[EventSpec, ...]] = ContentCache()
"""Compiled declarations kept per process: every item of a scenario (variants, trials, the report's
expected targets) scores against the same ones. Specs and their constraints are never mutated."""


def compile_events(events: Mapping[str, Milestone], clock: FrozenClock, kind: str = "milestones") -> list[EventSpec]:
    """All milestones (or minefields) of a scenario, in declaration order; dependencies must not cycle.

    Compiled once per content (the declarations as JSON, the clock and the kind); errors are raised
    every time, never kept."""
    key = (kind, clock, tuple((name, milestone.model_dump_json()) for name, milestone in events.items()))
    return list(_COMPILED.get(key, lambda: tuple(_compile(events, clock, kind))))


def _with_context(specs: list[EventSpec]) -> list[EventSpec]:
    """Each text constraint with the facts of the other events' text constraints as its context."""
    def context(spec: EventSpec) -> tuple[Fact, ...]:
        return tuple(fact for other in specs if other is not spec for constraint in other.constraints
                     for fact in constraint.facts)

    return [dataclasses.replace(spec, constraints=tuple(
        dataclasses.replace(constraint, context=context(spec)) if constraint.facts else constraint
        for constraint in spec.constraints)) for spec in specs]


def _compile(events: Mapping[str, Milestone], clock: FrozenClock, kind: str) -> list[EventSpec]:
    specs = _with_context([compile_event(name, milestone, events, clock, f"{kind}.{name}")
                           for name, milestone in events.items()])
    # the standard library's graphlib, not networkx: this runs while scenarios are collected, and
    # networkx's import alone was a sixth of collecting 25 scenario files
    sorter = graphlib.TopologicalSorter({spec.name: {*spec.after, *spec.refs} for spec in specs})
    try:
        sorter.prepare()
    except graphlib.CycleError as error:
        raise ValueError(f"{kind}: dependencies (after, since, fill_from) form a cycle: "
                         f"{' → '.join(error.args[1])}") from None
    return specs
