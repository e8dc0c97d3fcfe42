"""The agent's tool calls paired with their replies, and the argument comparison diagnosis and
ground-truth metrics share.

A call is identified by its message index; its reply is the execution environment's answer with
the same call id. The executed tool is the trace's (registry) name, or the offered name mapped
back through the trajectory's tool list — scrambled names never leak into scoring.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.basics.jsondata import JsonDataError, loads
from pytest_toolsandbox.evaluation.columns import canonical, values_close
from pytest_toolsandbox.evaluation.rouge import rouge_l
from pytest_toolsandbox.world.messages import Message, Role, ToolTrace
from pytest_toolsandbox.world.trajectory import Trajectory

FREE_TEXT_THRESHOLD = 0.8
"""ROUGE-L F a free-text argument (an expected string with a space in it) must reach to agree."""


@dataclass(frozen=True)
class AgentCall:
    """One tool call of the agent: its message index, offered and executed names, and the reply."""

    index: int
    name: str
    tool: str | None
    raw_arguments: str
    reply: Message | None

    @property
    def trace(self) -> ToolTrace | None:
        return self.reply.tool_trace if self.reply else None

    @property
    def error_code(self) -> str | None:
        return self.reply.error_code if self.reply else None

    @property
    def succeeded(self) -> bool:
        return self.reply is not None and self.reply.exception is None

    @property
    def arguments(self) -> dict[str, Any] | None:
        """Executed arguments (with defaults) when the call ran, else the parsed JSON object."""
        if self.trace is not None:
            return dict(self.trace.arguments)
        try:
            parsed = loads(self.raw_arguments) if self.raw_arguments.strip() else {}
        except JsonDataError:  # not JSON, or nested too deeply to compare
            return None
        return parsed if isinstance(parsed, dict) else None


def agent_calls(trajectory: Trajectory) -> list[AgentCall]:
    """Every tool call the agent made, in order, with its reply (None if the episode stopped first)."""
    offered = {entry["name"]: entry["tool"] for entry in trajectory.tools}
    used: set[int] = set()
    calls = []
    for message in trajectory.messages:
        if message.sender is not Role.AGENT or message.tool_call is None:
            continue
        reply = next((other for other in trajectory.messages[message.index + 1:]
                      if other.sender is Role.EXECUTION_ENVIRONMENT and other.recipient is Role.AGENT
                      and other.tool_call_id == message.tool_call.id and other.index not in used), None)
        if reply is not None:
            used.add(reply.index)
        tool = reply.tool_trace.tool if reply and reply.tool_trace else offered.get(message.tool_call.name)
        calls.append(AgentCall(message.index, message.tool_call.name, tool, message.tool_call.arguments, reply))
    return calls


def arguments_agree(expected: Mapping[str, Any], actual: Mapping[str, Any] | None,
                    tolerances: Mapping[str, float] | None = None) -> bool:
    """Every expected argument is present and agrees: numbers within tolerance, free text by ROUGE-L."""
    if actual is None:
        return False
    tolerances = tolerances or {}
    for name, value in expected.items():
        if name not in actual:
            return False
        got = actual[name]
        if isinstance(value, str) and isinstance(got, str) and " " in value.strip():
            if rouge_l(value, got) < FREE_TEXT_THRESHOLD:
                return False
        elif not values_close(canonical(got), canonical(value), tolerances.get(name, 0.0)):
            return False
    return True
