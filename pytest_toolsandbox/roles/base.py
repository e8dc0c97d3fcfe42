"""The two role protocols. An agent or user reads the messages it may see and the tools it may use,
and answers with text, or with tool calls — nothing else. Provider adapters only convert formats."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, ToolCall


@dataclass(frozen=True)
class Turn:
    """One answer of a role: text for the other party, or tool calls (parallel when several)."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@runtime_checkable
class Agent(Protocol):
    """The assistant under test."""

    name: str

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn: ...


@runtime_checkable
class User(Protocol):
    """The person the assistant talks to; ends the conversation with the end_conversation tool."""

    name: str

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn: ...


def render_call(call: ToolCall) -> str:
    """A readable one-line form of a call, used as the content of call messages."""
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except (ValueError, RecursionError):  # RecursionError: absurdly deep JSON such as "[[[[…"
        return f"{call.name}(<unparsable arguments: {call.arguments}>)"
    if not isinstance(arguments, dict):
        return f"{call.name}(<arguments are not an object: {call.arguments}>)"
    try:
        rendered = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items())
    except RecursionError:
        return f"{call.name}(<unparsable arguments: {call.arguments}>)"
    return f"{call.name}({rendered})"
