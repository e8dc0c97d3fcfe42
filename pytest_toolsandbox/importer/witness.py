"""A witness dialogue synthesised from a scenario's milestones, for scenarios that come without one.

The reference benchmark ships milestones but no dialogue. A witness is one dialogue that reaches every
milestone in our engine: for each milestone, in an order its `after`/`since`/`fill_from` allow, the
steps that make it true —

* a `tool_call`: that call, arguments filled from earlier results (`fill_from`) and, when the target
  leaves out an argument the tool needs, candidate values taken from the starting world;
* a world change (`world`, `added`, `removed`, `updated`): a call of an action tool whose parameters
  match the target row's columns, tried until the milestone holds;
* an `agent_says`: the target text with its placeholders filled (and any `contains` text appended);
* a `user_says`: a short agent question, then the user's line.

Each candidate is checked by playing the dialogue so far and scoring it; if the whole witness does not
score 1.0, the next ordering of the milestones is tried. The steps it writes are marked in the file as
synthesised (`reference_source: synthesised`), never passed off as an author's dialogue.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.result import Evaluation
from pytest_toolsandbox.scenario.loader import ScenarioError, parse_scenario
from pytest_toolsandbox.scenario.milestones import Milestone, TextMatch
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.suite.play import play_reference
from pytest_toolsandbox.tools.registry import ToolSpec
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.tables import Table
from pytest_toolsandbox.world.trajectory import Trajectory

DECLINE = "I'm sorry, I can't do that with the information and tools I have."


def decline(missing: list[str]) -> str:
    """The witness's refusal: it names what is missing when the scenario says (the verdict asks that)."""
    return f"I'm sorry, I can't do that: I don't have {missing[0]}." if missing else DECLINE
DONE = "Done."
ASK = "Could you tell me more?"
GO_ON = "Okay."
MAX_ORDERINGS = 24

Step = dict[str, Any]


@dataclass(frozen=True)
class Witness:
    """The synthesised steps and how they score in the variant they were built for."""

    steps: list[Step]
    score: float
    problem: str | None  # why the best witness found is not 1.0 (None when it is)


def call_text(tool: str, arguments: Mapping[str, Any]) -> str:
    """`tool(name=value, …)` with JSON literals, the form reference steps are written in."""
    rendered = ", ".join(f"{name}={json.dumps(value, ensure_ascii=False)}" for name, value in arguments.items())
    return f"{tool}({rendered})"


def _orderings(scenario: Scenario) -> Iterator[list[str]]:
    """Topological orders of the milestones: the declared order first, then others."""
    names = list(scenario.milestones)
    needs = {name: set(m.after) | {f.milestone for f in m.fills()} |
             ({m.since} if m.since not in (None, "initial") else set())
             for name, m in scenario.milestones.items()}

    def extend(order: list[str]) -> Iterator[list[str]]:
        if len(order) == len(names):
            yield order
            return
        for name in names:
            if name not in order and needs[name] <= set(order):
                yield from extend([*order, name])

    yield from itertools.islice(extend([]), MAX_ORDERINGS)


class _Builder:
    """Plays and scores partial witnesses of one scenario in one variant."""

    def __init__(self, data: dict[str, Any], path: Any, registry: Mapping[str, ToolSpec], variant: str) -> None:
        # played in one variant, the witness may use the tools offered there (distractions included)
        self.data, self.scenario_path = {**data, "solvable_in": [variant]}, path
        self.scenario = parse_scenario({**data, "reference": [{"agent": DONE}]}, path, registry)
        self.registry, self.variant = registry, variant

    def play(self, steps: list[Step]) -> tuple[Trajectory, Evaluation] | None:
        try:
            scenario = parse_scenario(self._data(steps), self.scenario_path, self.registry)
        except ScenarioError:
            return None
        trajectory = play_reference(scenario, self.registry, self.variant)
        return trajectory, evaluate(scenario, trajectory, self.registry)

    def _data(self, steps: list[Step]) -> dict[str, Any]:
        return {**self.data, "reference": steps or [{"agent": DONE}]}

    def reached(self, evaluation: Evaluation, name: str) -> bool:
        return any(o.name == name and o.similarity >= 1.0 for o in evaluation.milestones)


def trace_value(trajectory: Trajectory, evaluation: Evaluation, milestone: str, path: str) -> Any:
    """The value at `path` (`result.<key>…`, `arguments.<name>`) of the trace `milestone` mapped to."""
    outcome = next((o for o in evaluation.milestones if o.name == milestone), None)
    if outcome is None or outcome.index is None:
        return None
    trace = trajectory.messages[outcome.index].tool_trace
    if trace is None:
        return None
    head, *rest = path.split(".")
    value: Any = trace.result if head == "result" else trace.arguments
    for key in rest:
        try:
            value = value[int(key)] if isinstance(value, list) else value[key]
        except (KeyError, IndexError, ValueError, TypeError):
            return None
    return value


def _filled(milestone: Milestone, played: tuple[Trajectory, Evaluation] | None) -> tuple[dict[str, Any], str]:
    """The values `fill_from` would take from the dialogue so far, and the first format to print them."""
    values: dict[str, Any] = {}
    form = "{}"
    for fill in milestone.fills():
        form = fill.formats[0]
        for name, path in fill.values.items():
            if played is not None:
                values[name] = trace_value(*played, fill.milestone, path)
    return values, form


def _format(form: str, value: Any) -> str:
    if value is None:
        return ""
    try:
        return form.format(value)
    except (TypeError, ValueError):  # a format for numbers, a value that is not one
        return str(value)


def _text(milestone: Milestone, played: tuple[Trajectory, Evaluation] | None) -> str:
    values, form = _filled(milestone, played)
    formatted = {name: _format(form, value) for name, value in values.items()}
    texts = [(said.text, said.match) if isinstance(said, TextMatch) else (said, "rouge")
             for said in milestone.said("agent_says")]
    texts = [(text.format(**formatted) if formatted else text, match) for text, match in texts]
    main = next((text for text, match in texts if match not in ("contains", "any")), None)
    pieces = [main] if main is not None else []
    for text, match in texts:
        if match == "contains" and not any(text in piece for piece in pieces):
            pieces.append(text)
    return " ".join(pieces) or DONE


def _world_values(scenario: Scenario, table: Table, column: str) -> list[Any]:
    """Values of a column in the starting world (for arguments a target leaves open)."""
    from pytest_toolsandbox.scenario.world_builder import initial_tables, scenario_clock

    frame = initial_tables(scenario, scenario_clock(scenario))[table]
    if column not in frame.columns:
        return []
    return [value for value in frame[column].to_list() if value is not None][:1]


def _target_times(scenario: Scenario) -> list[float]:
    """Every time a milestone or minefield names (`@…` values), resolved, in order of appearance."""
    from pytest_toolsandbox.scenario.timeexpr import resolve_time
    from pytest_toolsandbox.scenario.world_builder import scenario_clock

    clock = scenario_clock(scenario)
    found: list[float] = []

    def walk(value: Any) -> None:
        if isinstance(value, str) and value.startswith("@"):
            found.append(resolve_time(value, clock))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for event in (*scenario.milestones.values(), *scenario.minefields.values()):
        walk(event.model_dump(exclude_none=True))
    return list(dict.fromkeys(found))


def _phrases(scenario: Scenario) -> list[str]:
    """Names in the user's first message: runs of capitalised words, longest first, then the whole text."""
    import re

    words = re.findall(r"[\w'&.-]+", scenario.user.first_message)
    runs: list[str] = []
    current: list[str] = []
    for word in [*words, ""]:
        if word[:1].isupper() or (current and word.lower() in ("on", "of", "at", "the") and word):
            current.append(word)
            continue
        while current and current[-1].lower() in ("on", "of", "at", "the"):
            current.pop()
        if current:
            runs.append(" ".join(current).rstrip("."))
        current = []
    return list(dict.fromkeys([*sorted(runs, key=len, reverse=True), scenario.user.first_message]))


def _call_candidates(scenario: Scenario, registry: Mapping[str, ToolSpec], tool: str, arguments: dict[str, Any],
                     played: tuple[Trajectory, Evaluation] | None) -> list[dict[str, Any]]:
    """The target's arguments, then the same with open parameters set from what the dialogue knows:
    one parameter from the starting world (a column of that name), a number from an earlier tool result,
    or calendar fields (year, month, …) from a time some milestone names."""
    from pytest_toolsandbox.scenario.world_builder import scenario_clock

    spec = registry.get(tool)
    if spec is None:
        return [arguments]
    candidates = [arguments]
    open_parameters = [parameter for parameter in spec.parameters if parameter.name not in arguments]
    from_world: dict[str, Any] = {}
    for parameter in open_parameters:
        for table in sorted(spec.reads, key=str):
            for value in _world_values(scenario, table, parameter.name):
                candidates.append({**arguments, parameter.name: value})
                from_world[parameter.name] = value
    if len(from_world) > 1:  # parameters that go together (a position's latitude and longitude)
        candidates.append({**arguments, **from_world})
    results = [m.tool_trace.result for m in (played[0].messages if played else []) if m.tool_trace is not None]
    numbers = [r for r in results if isinstance(r, int | float) and not isinstance(r, bool)]
    for parameter in open_parameters:
        if parameter.hint is float:
            candidates += [{**arguments, parameter.name: number} for number in reversed(numbers)]
    texts = [p for p in open_parameters if p.required and p.hint is str]
    if len(texts) == 1:  # a query only the user's words can supply: the names they mention
        phrases = _phrases(scenario)
        candidates += [{**arguments, texts[0].name: phrase} for phrase in phrases]
        candidates += [{**arguments, **from_world, texts[0].name: phrase} for phrase in phrases if from_world]
    calendar = [p.name for p in open_parameters if p.required]
    if calendar and all(name in ("year", "month", "day", "hour", "minute", "second") for name in calendar):
        clock = scenario_clock(scenario)
        for moment in map(clock.local, _target_times(scenario)):
            candidates.append({**arguments, **{name: getattr(moment, name) for name in calendar}})
    required = {p.name for p in spec.parameters if p.required}
    return [c for c in candidates if required <= set(c)] or candidates


def _action_candidates(registry: Mapping[str, ToolSpec], scenario: Scenario, table: Table,
                       row: dict[str, Any]) -> list[Step]:
    """Calls of action tools writing `table` whose parameters the target row fills."""
    offered = set(scenario.tools)
    found = []
    for name, spec in registry.items():
        if not spec.action or table not in spec.writes or spec.visible_to is not Role.AGENT:
            continue
        arguments: dict[str, Any] = {}
        for parameter in spec.parameters:
            column = next((c for c in row if c == parameter.name or c.endswith("_" + parameter.name)), None)
            if column is not None:
                arguments[parameter.name] = row[column]
        booleans = [value for value in row.values() if isinstance(value, bool)]
        open_required = [p for p in spec.parameters if p.required and p.name not in arguments]
        if len(open_required) == 1 and len(booleans) == 1 and len(row) == 1 and open_required[0].hint is bool:
            column = next(iter(row))
            if column.split("_")[0] not in name:  # set_wifi_status for wifi, not for cellular
                continue
            arguments[open_required[0].name] = booleans[0]
            open_required = []
        if open_required or not arguments:
            continue
        found.append((name not in offered, name, arguments))
    return [{"tool": name, "arguments": arguments} for _, name, arguments in sorted(found, key=lambda f: f[:2])]


def _steps_for(builder: _Builder, milestone: Milestone,
               played: tuple[Trajectory, Evaluation] | None) -> list[list[Step]]:
    """Candidate step lists that make `milestone` true after the steps played so far (`played`)."""
    scenario, registry = builder.scenario, builder.registry
    candidates: list[list[Step]] = []
    if milestone.tool_call is not None:
        values, _ = _filled(milestone, played)
        for tool, arguments in milestone.tool_call_alternatives():
            merged = {**arguments, **{k: v for k, v in values.items() if v is not None}}
            options = _call_candidates(scenario, registry, tool, merged, played)
            candidates += [[{"tool": tool, "arguments": option}] for option in options]
    settings_now = played[0].snapshots.get("settings", [])[-1].rows[0] if played and played[0].snapshots.get(
        "settings") else {}
    changes: list[list[Step]] = []
    for kind in ("world", "added", "removed", "updated"):
        for table_name, rows in (getattr(milestone, kind) or {}).items():
            table = Table(table_name)
            rows = [rows] if isinstance(rows, dict) else rows
            for row in rows:
                if table is Table.SETTINGS:
                    for column, value in row.items():
                        if settings_now.get(column) != value:
                            changes.append(_action_candidates(registry, scenario, table, {column: value}))
                else:
                    changes.append(_action_candidates(registry, scenario, table, row))
    if changes:
        # one call per changed row or setting; candidates are tried per position, the first fitting one kept
        candidates.append([options[0] for options in changes if options])
        for position, options in enumerate(changes):
            for option in options[1:]:
                alternative = [o[0] for o in changes if o]
                alternative[position] = option
                candidates.append(alternative)
    if milestone.agent_says is not None:
        text_step = {"agent": _text(milestone, played)}
        candidates = [[*c, text_step] for c in candidates] if candidates else [[text_step]]
    if milestone.user_says is not None:
        lines = [said.text if isinstance(said, TextMatch) else said for said in milestone.said("user_says")]
        candidates = [[*c, {"agent": ASK}, {"user": " ".join(lines)}] for c in (candidates or [[]])]
    return candidates or [[]]


def _rendered(steps: list[Step]) -> list[Any]:
    return [call_text(step["tool"], step["arguments"]) if "tool" in step else step for step in steps]


def _closed(steps: list[Step], closing: str = DONE) -> list[Step]:
    """Agent texts in the middle get a short user reply (the scripted user would end the conversation
    there); the dialogue ends with the agent speaking to the user (`closing` when it has not)."""
    closed: list[Step] = []
    for position, step in enumerate(steps):
        closed.append(step)
        following = steps[position + 1] if position + 1 < len(steps) else None
        if "agent" in step and following is not None and "user" not in following:
            closed.append({"user": GO_ON})
    if not closed or "agent" not in closed[-1]:
        closed.append({"agent": closing})
    return closed


def synthesise(data: dict[str, Any], path: Any, registry: Mapping[str, ToolSpec], variant: str = "base") -> Witness:
    """The witness for scenario data (as it will be written, without `reference`) in `variant`."""
    builder = _Builder(data, path, registry, variant)
    scenario = builder.scenario
    if not scenario.milestones:
        declining = [{"agent": decline(scenario.missing)}]
        played = builder.play(declining)
        score = played[1].score if played else 0.0
        return Witness(declining, score, None if score >= 1.0 else "declining does not pass")
    # an insufficient-information task is closed by explaining what is missing, never by "Done."
    closing = decline(scenario.missing) if "insufficient_information" in scenario.categories else DONE
    best: Witness | None = None
    for order in _orderings(scenario):
        steps: list[Step] = []
        played = builder.play(_rendered(_closed(steps, closing)))
        for name in order:
            if played is not None and builder.reached(played[1], name):
                continue
            options = _steps_for(builder, scenario.milestones[name], played)
            chosen, chosen_play = [], None
            for option in options:
                trial = builder.play(_rendered(_closed([*steps, *option], closing)))
                if trial is not None and chosen_play is None:
                    chosen, chosen_play = option, trial  # the first that loads, unless one reaches it
                if trial is not None and builder.reached(trial[1], name):
                    chosen, chosen_play = option, trial
                    break
            steps = [*steps, *chosen]
            played = chosen_play or builder.play(_rendered(_closed(steps, closing)))
        final = _rendered(_closed(steps, closing))
        played = builder.play(final)
        score = played[1].score if played else 0.0
        problem = None if score >= 1.0 else _why(played)
        if best is None or score > best.score:
            best = Witness(final, score, problem)
        if score >= 1.0:
            break
    assert best is not None
    return best


def _why(played: tuple[Trajectory, Evaluation] | None) -> str:
    if played is None:
        return "no candidate dialogue loads"
    trajectory, evaluation = played
    short = [f"{o.name} {o.similarity:.3g}" for o in evaluation.milestones if o.similarity < 1.0]
    fired = [o.name for o in evaluation.minefields if o.similarity > 0.0]
    failed = [m.exception for m in trajectory.messages if m.exception][:1]
    parts = []
    if short:
        parts.append("milestones below 1: " + ", ".join(short))
    if fired:
        parts.append("minefields fire: " + ", ".join(fired))
    if failed:
        parts.append(f"a call failed: {failed[0]}")
    return "; ".join(parts) or "score below 1"


def replay_score(data: dict[str, Any], steps: list[Any], path: Any, registry: Mapping[str, ToolSpec],
                 variant: str) -> float:
    """The score of a finished witness in another variant."""
    builder = _Builder(data, path, registry, variant)
    played = builder.play(steps)
    return played[1].score if played else 0.0
