"""Agents that game the checks instead of doing the task: none of them may pass an item of the shipped suite.

Each is what a careless or adversarial agent does cheaply: say nothing, claim success, invent an
answer, decline, list every value it saw, repeat the user. The always-declining agent is the built-in
`unhelpful` (roles/scripted.py). The one honest refusal, `DeclinesAndExplains`, says the task cannot be
done and names what is missing: it may pass an insufficient-information item, and only those.
`python -m pytest --agent tests.degenerate_agents:Shotgun` plays one on the suite.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser, UnhelpfulAgent
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.tools.augment import VARIANTS
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, Role


class Silent:
    """Answers every turn with an empty text."""

    name = "silent"

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        return Turn(text="")


class ClaimsSuccess:
    """Claims the task is done without doing anything."""

    name = "claims-success"

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        return Turn(text="Done! I've taken care of that for you.")


class InventsAnswer:
    """Gives a made-up value with confidence, and claims the rest is done."""

    name = "invents-answer"

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        return Turn(text="It's 42, and everything is set.")


class Echo:
    """Repeats the user's last message back (it carries the user's own values and names)."""

    name = "echo"

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        said = [m.content for m in messages if m.sender is Role.USER and m.recipient is Role.AGENT]
        return Turn(text=said[-1] if said else "")


def _scalars(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


class Shotgun:
    """Makes the reference's look-ups (never its actions) and, wherever the reference speaks, lists every
    value those look-ups returned: the right answer is somewhere in the list."""

    name = "shotgun"

    def __init__(self, scenario: Scenario) -> None:
        self.lookups = ReferenceAgent(scenario)
        actions = {name for name, spec in all_tools().items() if spec.action}
        self.lookups.steps = [step for step in self.lookups.steps
                              if not any(call.tool in actions for call in step.calls)]

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        turn = self.lookups.respond(messages, tools)
        if turn.tool_calls:
            return turn
        seen = [value for message in messages if message.tool_trace is not None
                for value in _scalars(message.tool_trace.result)]
        return Turn(text="It is one of: " + ", ".join(dict.fromkeys(seen)) + "." if seen else "It is one of many.")


class DeclinesAndExplains:
    """Declines, saying the task cannot be done for want of what the scenario lists as missing: right in
    an insufficient-information scenario, wrong everywhere else."""

    name = "declines-and-explains"

    def __init__(self, scenario: Scenario) -> None:
        missing = list(getattr(scenario, "missing", []) or [])
        self.text = (f"I'm sorry, I can't do that: I don't have {missing[0]}." if missing
                     else "I'm sorry, I can't do that: I don't have what I would need.")

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        return Turn(text=self.text)


DEGENERATE = {"silent": Silent, "claims-success": ClaimsSuccess, "invents-answer": InventsAnswer,
              "unhelpful": UnhelpfulAgent, "shotgun": Shotgun, "echo": Echo}
"""The agents that must fail every item, by name."""


def build(name: str, scenario: Scenario) -> Any:
    """A fresh agent of `name` (DEGENERATE, or declines-and-explains) for one episode of `scenario`."""
    if name == "declines-and-explains":
        return DeclinesAndExplains(scenario)
    agent = DEGENERATE[name]
    return agent(scenario) if agent is Shotgun else agent()



INSUFFICIENT = "insufficient_information"


def outcomes(agent: str, folder: Path) -> dict[tuple[str, str], bool]:
    """(scenario path relative to `folder`, variant) → whether `agent` passes it against the scripted user,
    judged by the real verdict: every base in the base variant, the insufficient-information bases in all
    8 variants (where a decline is right, so every variant must hold it to naming what is missing)."""
    registry = all_tools()
    passed = {}
    for path in find_scenarios(folder):
        scenario = load_scenario(path, registry)
        start = build_world(scenario)
        for variant in VARIANTS if INSUFFICIENT in scenario.categories else ("base",):
            trajectory = run_episode(scenario, build(agent, scenario), ScriptedUser(scenario), variant=variant,
                                     registry=registry, world=start.fork())
            evaluation = evaluate(scenario, trajectory, registry)
            passed[(path.relative_to(folder).as_posix(), variant)] = evaluation.passed(scenario.explicit_threshold)
    return passed
