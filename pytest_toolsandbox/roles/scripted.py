"""Roles that need no model: reference agent, scripted user, trajectory replay, unhelpful agent."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.user_push import Ask, classify
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.reference import ReferenceCall
from pytest_toolsandbox.scenario.timeexpr import resolve_times
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, Role, ToolCall

END_CONVERSATION = "end_conversation"


def _offered_name(tool: str, tools: Sequence[OfferedTool]) -> str:
    """The name the caller sees for a registry tool (differs when names are scrambled)."""
    return next((offered.name for offered in tools if offered.tool == tool), tool)


class ReferenceAgent:
    """Plays the agent side of the scenario's reference dialogue, step by step.

    It does not react to results: it is the ground truth the suite validates itself with, and the
    default offline agent. When its script is exhausted it says so instead of inventing turns.
    """

    name = "reference"

    def __init__(self, scenario: Scenario) -> None:
        self.steps = [step for step in scenario.reference if step.user is None]
        self.clock = scenario_clock(scenario)
        self.position = 0
        self.calls_made = 0

    def _call(self, call: ReferenceCall, tools: Sequence[OfferedTool]) -> ToolCall:
        self.calls_made += 1
        arguments = resolve_times(call.arguments, self.clock)  # "@tomorrow 17:00" → timestamp
        return ToolCall(id=f"call_{self.calls_made}", name=_offered_name(call.tool, tools),
                        arguments=json.dumps(arguments, ensure_ascii=False, sort_keys=True))

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        if self.position >= len(self.steps):
            return Turn(text="I have nothing more to add.")
        step = self.steps[self.position]
        self.position += 1
        if step.calls:
            return Turn(tool_calls=tuple(self._call(call, tools) for call in step.calls))
        return Turn(text=step.agent)


MAX_PUSHES = 2
"""How many times, at most, a scripted user whose lines have run out pushes an agent that asks for
confirmation or hands the work back (`roles/user_push.py`) before it ends the conversation."""

PUSH_LINE = "Yes, please go ahead and do it yourself."
"""What the scripted user says to such an agent: short, and the same every time (cassettes replay it)."""


class ScriptedUser:
    """Says the scenario's scripted user lines in order, then ends the conversation — unless the agent's
    last words ask for confirmation or hand the work back: then it pushes (PUSH_LINE) up to `max_pushes`
    times, as ToolSandbox's simulator keeps asking the assistant to do the task itself."""

    name = "scripted"

    def __init__(self, scenario: Scenario, max_pushes: int = MAX_PUSHES) -> None:
        self.lines = list(scenario.user_lines)
        self.pushes_left = max_pushes

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        if self.lines:
            return Turn(text=self.lines.pop(0))
        if self.pushes_left > 0 and classify(_last_agent_text(messages)) is not Ask.NOTHING:
            self.pushes_left -= 1
            return Turn(text=PUSH_LINE)
        return Turn(tool_calls=(ToolCall(id="end", name=_offered_name(END_CONVERSATION, tools)),))


def _last_agent_text(messages: Sequence[Message]) -> str:
    """The agent's latest words to the user ("" when it has said nothing yet)."""
    return next((message.content for message in reversed(messages)
                 if message.sender is Role.AGENT and message.recipient is Role.USER), "")


class ReplayAgent:
    """Replays the agent turns of a recorded trajectory (for re-scoring and conformance tests)."""

    name = "replay"

    def __init__(self, messages: Sequence[Message]) -> None:
        self.turns: list[Turn] = []
        calls: list[ToolCall] = []
        for message in messages:
            if message.sender is not Role.AGENT:
                if calls:
                    self.turns.append(Turn(tool_calls=tuple(calls)))
                    calls = []
                continue
            if message.tool_call is not None:
                calls.append(message.tool_call)
            else:
                self.turns.append(Turn(text=message.content))
        if calls:
            self.turns.append(Turn(tool_calls=tuple(calls)))
        self.position = 0

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        if self.position >= len(self.turns):
            return Turn(text="")
        turn = self.turns[self.position]
        self.position += 1
        return turn


class UnhelpfulAgent:
    """Always declines: the floor every real agent should beat."""

    name = "unhelpful"

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        return Turn(text="I'm sorry, I can't help with that.")
