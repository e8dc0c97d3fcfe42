"""The message log as a polars table, the shape message milestones are scored against.

One row per message, indexed like the conversation. The "snapshot" of the log at index s is row s,
so a message constraint scored on every row at once gives its similarity at every index. Tool
traces become canonical JSON (sorted keys) so equal traces are equal strings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import polars as pl

from pytest_toolsandbox.world.messages import Message, ToolTrace

SANDBOX_SCHEMA: dict[str, pl.DataType] = {
    "index": pl.Int64(),
    "sender": pl.String(),
    "recipient": pl.String(),
    "content": pl.String(),
    "tool_call": pl.String(),
    "tool_trace": pl.String(),
    "exception": pl.String(),
    "error_code": pl.String(),
    "conversation_active": pl.Boolean(),
}


def trace_json(trace: ToolTrace) -> str:
    """Canonical JSON of a trace: {"arguments", "result", "tool"} with sorted keys."""
    return json.dumps(trace.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, default=str)


def sandbox_frame(messages: Sequence[Message]) -> pl.DataFrame:
    """The message log with the columns message milestones may constrain."""
    rows = [{
        "index": message.index,
        "sender": str(message.sender),
        "recipient": str(message.recipient),
        "content": message.content,
        "tool_call": message.tool_call.name if message.tool_call else None,
        "tool_trace": trace_json(message.tool_trace) if message.tool_trace else None,
        "exception": message.exception,
        "error_code": message.error_code,
        "conversation_active": message.conversation_active,
    } for message in messages]
    return pl.DataFrame(rows, schema=SANDBOX_SCHEMA)
