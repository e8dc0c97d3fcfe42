"""The message log as columns (typed by a polars schema), the shape message milestones are scored against.

One row per message, indexed like the conversation. The "snapshot" of the log at index s is row s,
so a message constraint scored on every row at once gives its similarity at every index. Tool
traces become canonical JSON (sorted keys) so equal traces are equal strings. A call message also
gets an `attempt` cell shaped like a trace (`{"tool", "arguments"}`: the registry name behind the
offered name, the arguments as sent), so `attempted_call` can match a call that then failed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from pytest_toolsandbox.world.messages import Message, Role, ToolCall, ToolTrace

SANDBOX_SCHEMA: dict[str, pl.DataType] = {
    "sender": pl.String(),
    "recipient": pl.String(),
    "content": pl.String(),
    "tool_trace": pl.String(),
    "attempt": pl.String(),
}
"""The columns a message milestone constrains: who sent a message to whom, its text, the executed call's
trace and the attempted call."""


def trace_json(trace: ToolTrace) -> str:
    """Canonical JSON of a trace: {"arguments", "result", "tool"} with sorted keys."""
    return json.dumps(trace.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, default=str)


def _arguments(text: str) -> dict[str, Any]:
    """The call's arguments object; anything else (invalid or non-object JSON) counts as no arguments."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):  # "" included: a call without arguments
        return {}
    return parsed if isinstance(parsed, dict) else {}


def attempt_json(call: ToolCall, offered: Mapping[str, str]) -> str:
    """Canonical JSON of an attempted call, named by the registry tool behind the offered name."""
    attempt = {"tool": offered.get(call.name, call.name), "arguments": _arguments(call.arguments)}
    try:
        return json.dumps(attempt, ensure_ascii=False, sort_keys=True, default=str)
    except (ValueError, RecursionError):  # nested beyond what json can write back
        return json.dumps({"tool": attempt["tool"], "arguments": {}}, sort_keys=True)


def sandbox_columns(messages: Sequence[Message], offered: Mapping[str, str] | None = None) -> dict[str, list[Any]]:
    """The message log column by column, in SANDBOX_SCHEMA order: the columns message milestones may
    constrain (the scorer reads these lists without building a frame). `offered` maps agent-facing
    tool names to registry names (scrambled variants)."""
    offered = offered or {}
    return {
        "sender": [str(message.sender) for message in messages],
        "recipient": [str(message.recipient) for message in messages],
        "content": [message.content for message in messages],
        "tool_trace": [trace_json(message.tool_trace) if message.tool_trace else None for message in messages],
        "attempt": [attempt_json(message.tool_call, offered)
                    if message.tool_call is not None and message.sender is Role.AGENT else None
                    for message in messages],
    }
