"""What each milestone expected, in words a reader can compare with the conversation.

The scorer works on compiled constraints (tables, comparisons, frozen tool calls); a failure
message or a trajectory page needs the same targets as short text: `settings: wifi=false`,
`convert_currency(amount=100, …)`, `agent says "…"`. A `fill_from` target is shown as it was filled
from the message its source milestone matched (the computed amount, not `{amount}`), so the reader
sees the value the agent should have produced.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_toolsandbox.evaluation.constraints import INITIAL, Constraint, EventSpec, compile_events
from pytest_toolsandbox.evaluation.result import EventOutcome
from pytest_toolsandbox.evaluation.similarity import ConstraintScorer, filled_rows
from pytest_toolsandbox.evaluation.state import EpisodeState
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from pytest_toolsandbox.world.trajectory import Trajectory


@dataclass(frozen=True)
class Expectation:
    """A milestone's targets as text, and the guardrails that can zero it."""

    targets: dict[str, str]
    guarded: tuple[str, ...] = ()
    """World tables that must stay unchanged since each of `guard_against`."""
    guard_against: tuple[str, ...] = field(default=())
    blocked_at: int | None = None
    """A message that met the milestone's own constraints after its predecessors, where only the
    guardrail made it count 0 (set only for milestones that scored 0)."""

    def guardrail_text(self) -> str:
        since = ", ".join("the start" if name == INITIAL else name for name in self.guard_against)
        return f"{', '.join(self.guarded)} changed since {since}"


_VERB = {"snapshot": "", "addition": "row added ", "removal": "row removed ", "update": "row updated "}


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _row(row: dict[str, Any]) -> str:
    return ", ".join(f"{column}={_value(value)}" for column, value in row.items())


def _call(tool: str, arguments: tuple[tuple[str, Any], ...]) -> str:
    # Nested argument values are frozen as canonical JSON text already; show them unquoted.
    parts = [f"{name}={value if isinstance(value, str) and value[:1] in '[{' else _value(value)}"
             for name, value in arguments]
    return f"{tool}({', '.join(parts)})"


def _since(constraint: Constraint) -> str:
    if constraint.comparison == "snapshot" or constraint.reference is None:
        return ""
    return " since the start" if constraint.reference == INITIAL else f" since {constraint.reference}"


def describe(constraint: Constraint, rows: list[dict[str, Any]] | None = None) -> str:
    """One constraint's target as text; `rows` replaces the declared rows (filled targets)."""
    rows = list(constraint.rows) if rows is None else rows
    first = rows[0] if rows else {}
    column = constraint.call_column
    if column is not None:
        calls = " or ".join(_call(tool, arguments) for tool, arguments in first[column])
        return calls if column == "tool_trace" else f"an attempt to call {calls}"
    if "content" in first and "sender" in first:
        texts = " or ".join(_value(row["content"]) for row in rows)
        return f"{first['sender']} says {texts}"
    table = str(constraint.table)
    return "; ".join(f"{table}: {_VERB[constraint.comparison]}{_row(row)}{_since(constraint)}" for row in rows)


@functools.lru_cache(maxsize=4096)
def _declared(constraint: Constraint) -> str:
    """`describe(constraint)`, once per compiled constraint (compiled ones are shared by a scenario's items)."""
    return describe(constraint)


def _trace_at(trajectory: Trajectory, index: int | None) -> dict[str, Any] | None:
    message = next((m for m in trajectory.messages if m.index == index), None) if index is not None else None
    if message is None or message.tool_trace is None:
        return None
    return message.tool_trace.model_dump(mode="json")


_REFERENCE_POSITIONS: dict[str, tuple[Trajectory, dict[str, int | None]]] = {}


def _reference_play(scenario: Scenario) -> tuple[Trajectory, dict[str, int | None]]:
    """The reference dialogue played and scored once per scenario content: where its milestones matched."""
    key = scenario.model_dump_json()
    if key not in _REFERENCE_POSITIONS:
        from pytest_toolsandbox.evaluation import evaluate
        from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
        from pytest_toolsandbox.running.episode import run_episode

        played = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario))
        outcomes = evaluate(scenario, played).milestones
        _REFERENCE_POSITIONS[key] = played, {outcome.name: outcome.index for outcome in outcomes}
    return _REFERENCE_POSITIONS[key]


def _fill_rows(constraint: Constraint, trajectory: Trajectory,
               positions: dict[str, int | None]) -> list[dict[str, Any]]:
    traces = [_trace_at(trajectory, positions.get(fill.source)) for fill in constraint.fills]
    if any(trace is None for trace in traces):
        return []
    return filled_rows(constraint, [trace for trace in traces if trace is not None])


def _filled(constraint: Constraint, scenario: Scenario, trajectory: Trajectory,
            positions: dict[str, int | None]) -> str:
    """The target filled from this trajectory's source messages or, when the agent never produced
    those results, from the reference dialogue's (the values a correct agent would have used)."""
    rows = _fill_rows(constraint, trajectory, positions)
    if rows:
        return describe(constraint, rows)
    rows = _fill_rows(constraint, *_reference_play(scenario))
    if rows:
        return f"{describe(constraint, rows)} (filled as in the reference dialogue)"
    sources = ", ".join(f"{', '.join(name for name, _ in fill.values)} from the result of {fill.source}"
                        for fill in constraint.fills)
    return f"{describe(constraint)} (with {sources})"


def _blocked_at(spec: EventSpec, state: EpisodeState, scorer: ConstraintScorer,
                positions: dict[str, int | None]) -> int | None:
    """The first message where `spec`'s constraints hold in part, after every predecessor, but a
    guarded table differs from a predecessor's moment: the guardrail, not the agent's words, zeroed it."""
    at = {name: (index - state.first if index is not None else 0) for name, index in positions.items()}
    at[INITIAL] = 0
    base = np.ones(state.size)
    for constraint in spec.constraints:
        values = scorer.values(constraint)
        cells: tuple[Any, ...] = (slice(None), *(at.get(name, 0) for name in constraint.depends_on))
        base = base * values[cells]
    earliest = max([at.get(name, 0) for name in (*spec.after, *spec.guard_against)], default=0)
    keys = state.guard_keys(spec.guarded)
    for position in range(earliest, state.size):
        if base[position] > 0.0 and any(keys[position] != keys[at.get(name, 0)] for name in spec.guard_against):
            return state.message_index(position)
    return None


def expectations(scenario: Scenario, trajectory: Trajectory,
                 outcomes: list[EventOutcome], kind: str = "milestones") -> dict[str, Expectation]:
    """Milestone (or minefield) name → its Expectation, fill_from values filled in.

    Filled targets use the message each source milestone was mapped to in `outcomes`; a scenario
    that cannot be compiled (already reported by scoring) yields no expectations rather than an error.
    """
    events = scenario.milestones if kind == "milestones" else scenario.minefields
    try:
        specs = compile_events(events, scenario_clock(scenario), kind)
    except ValueError:
        return {}
    positions = {outcome.name: outcome.index for outcome in outcomes}
    missed = {outcome.name for outcome in outcomes if outcome.similarity <= 0.0}
    state = EpisodeState(trajectory) if any(spec.guarded and spec.name in missed for spec in specs) else None
    scorer = ConstraintScorer(state) if state is not None else None
    found = {}
    for spec in specs:
        blocked = (_blocked_at(spec, state, scorer, positions)
                   if state is not None and scorer is not None and spec.guarded and spec.name in missed else None)
        found[spec.name] = Expectation(
            targets={constraint.label: (_filled(constraint, scenario, trajectory, positions)
                                        if constraint.fills else _declared(constraint))
                     for constraint in spec.constraints},
            guarded=tuple(str(table) for table in spec.guarded), guard_against=spec.guard_against,
            blocked_at=blocked)
    return found
