"""The countable facts of one scenario that `stats` aggregates, each with a definition a reader can check.

- nested state dependency: a `state_dependency` scenario whose world starts in low battery mode (which
  blocks wifi, cellular and location until it is switched off).
- parallel calls: the reference has a `{parallel: […]}` step.
- order-dependent calls: some milestone that needs an action (a world change or a tool call) comes
  `after` another such milestone, so the calls must happen in that order.
- world differs substantially from the default: a table is cleared, or at least
  `SUBSTANTIAL_ROWS` rows are added, or at least `SUBSTANTIAL_SETTINGS` settings differ from the default.
- paths: a scenario exercises "add/modify/remove/search" of contacts, messages or reminders when its
  reference calls that operation's tool or a milestone names it.
- tool use: tools a milestone's or minefield's `tool_call` or `attempted_call` names; action tools whose
  effect a milestone checks (the reference calls the tool and a milestone's world/added/removed/updated
  constrains a table the tool writes — `validate` makes sure such a milestone needs its step); and tools
  the reference calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from pytest_toolsandbox.tools.registry import ToolSpec
from pytest_toolsandbox.world.default_world import default_tables
from pytest_toolsandbox.world.tables import Table

SUBSTANTIAL_ROWS = 3
SUBSTANTIAL_SETTINGS = 2

PATH_TOOLS: dict[str, dict[str, str | None]] = {
    "contacts": {"add": "add_contact", "modify": "modify_contact", "remove": "remove_contact",
                 "search": "search_contacts"},
    "messages": {"add": "send_message_with_phone_number", "modify": None, "remove": None,
                 "search": "search_messages"},
    "reminders": {"add": "add_reminder", "modify": "modify_reminder", "remove": "remove_reminder",
                  "search": "search_reminder"},
}
"""Per table and operation, the tool that performs it (None: no such tool exists)."""

ACTION_KINDS = ("world", "added", "removed", "updated", "tool_call")


@dataclass(frozen=True)
class Features:
    path: str
    categories: tuple[str, ...]
    milestones: int
    minefields: int
    steps: int
    calls: int
    user_turns: int
    named_tools: frozenset[str]
    effect_tools: frozenset[str]
    reference_tools: frozenset[str]
    nested: bool
    parallel: bool
    order_dependent: bool
    world_differs: bool
    paraphrase_of: str | None
    paths: frozenset[tuple[str, str]] = field(default_factory=frozenset)


def _settings_changed(scenario: Scenario) -> int:
    defaults = default_tables(scenario_clock(scenario))[Table.SETTINGS].row(0, named=True)
    return sum(1 for name, value in scenario.world.settings.items() if defaults.get(name) != value)


def _order_dependent(scenario: Scenario) -> bool:
    acts = {name for name, event in scenario.milestones.items()
            if any(getattr(event, kind) is not None for kind in ACTION_KINDS)}
    return any(before in acts for name in acts for before in scenario.milestones[name].after)


def features(scenario: Scenario, registry: Mapping[str, ToolSpec]) -> Features:
    """The facts of one loaded scenario."""
    patch = scenario.world
    named = {kind: {tool for event in events.values()
                    for tool, _ in [*event.tool_call_alternatives(), *event.attempted_call_alternatives()]}
             for kind, events in (("milestones", scenario.milestones), ("minefields", scenario.minefields))}
    reference_tools = {call.tool for step in scenario.reference for call in step.calls}
    used = reference_tools | named["milestones"]
    checked = {table for event in scenario.milestones.values() for table in event.constrained_tables()}
    effect = {tool for tool in reference_tools if registry[tool].action and registry[tool].writes & checked}
    paraphrase = None
    if scenario.paraphrase_of is not None and scenario.path:
        paraphrase = str((Path(scenario.path).parent / scenario.paraphrase_of).resolve())
    return Features(
        path=scenario.path,
        categories=tuple(scenario.categories),
        milestones=len(scenario.milestones),
        minefields=len(scenario.minefields),
        steps=len(scenario.reference),
        calls=sum(len(step.calls) for step in scenario.reference),
        user_turns=len(scenario.user_lines),
        named_tools=frozenset(named["milestones"] | named["minefields"]),
        effect_tools=frozenset(effect),
        reference_tools=frozenset(reference_tools),
        nested="state_dependency" in scenario.categories and patch.settings.get("low_battery_mode") is True,
        parallel=any(len(step.calls) > 1 for step in scenario.reference),
        order_dependent=_order_dependent(scenario),
        world_differs=bool(patch.clear)
        or len(patch.contacts) + len(patch.messaging) + len(patch.reminders) >= SUBSTANTIAL_ROWS
        or _settings_changed(scenario) >= SUBSTANTIAL_SETTINGS,
        paraphrase_of=paraphrase,
        paths=frozenset((table, operation) for table, operations in PATH_TOOLS.items()
                        for operation, tool in operations.items() if tool is not None and tool in used),
    )
