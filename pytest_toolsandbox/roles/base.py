"""The two role protocols. An agent or user reads the messages it may see and the tools it may use,
and answers with text, or with tool calls — nothing else. Provider adapters only convert formats."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

from pytest_toolsandbox.basics.jsondata import JsonDataError, loads
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
    """A readable one-line form of a call, used as the content of call messages (a call written as
    malformed text says so: what it shows is what could be read, and it was not run)."""
    if call.format_error is not None:
        return render_call(call.model_copy(update={"format_error": None})) + " [malformed text, not run]"
    try:
        arguments = loads(call.arguments) if call.arguments.strip() else {}
    except JsonDataError:  # not JSON, or absurdly deep JSON such as "[[[[…"
        return f"{call.name}(<unparsable arguments: {call.arguments}>)"
    if not isinstance(arguments, dict):
        return f"{call.name}(<arguments are not an object: {call.arguments}>)"
    rendered = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items())
    return f"{call.name}({rendered})"


def role_name(role: object, default: str) -> str:
    """A role's `name` as text: agents are untrusted, and a name that is an object, empty or raising
    must not break the trajectory or the summary."""
    from pytest_toolsandbox.basics.jsondata import label

    try:
        raw = getattr(role, "name", None)
        name = label(raw) if isinstance(raw, str | Enum) else None
    except Exception:
        name = None
    return name or default
