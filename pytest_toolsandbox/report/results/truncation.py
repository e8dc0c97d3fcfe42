"""The trajectory as the report keeps it: each message's text capped at `--max-message-chars`.

A model that answers with megabytes of text (a runaway generation, a hostile server) would otherwise
be written whole into the trajectory JSON, its HTML page and every copy of them, for every item: one
50 MB reply made a 2.8 GB report. Scoring always sees the full text; only what is stored and shown
is cut, with a marker saying how much was left out (`limits.truncated`).
"""

from __future__ import annotations

from typing import Any

from pytest_toolsandbox.basics.limits import truncated
from pytest_toolsandbox.world.messages import Message
from pytest_toolsandbox.world.trajectory import Trajectory


def _message(message: Message, limit: int) -> Message:
    update: dict[str, Any] = {}
    for name in ("content", "exception", "tool_name", "tool_call_id"):
        value = getattr(message, name)
        if isinstance(value, str) and len(value) > limit:
            update[name] = truncated(value, limit)
    call = message.tool_call
    if call is not None and max(len(call.id), len(call.name), len(call.arguments)) > limit:
        update["tool_call"] = call.model_copy(update={"id": truncated(call.id, limit),
                                                      "name": truncated(call.name, limit),
                                                      "arguments": truncated(call.arguments, limit)})
    return message.model_copy(update=update) if update else message


def for_report(trajectory: Trajectory, limit: int) -> Trajectory:
    """`trajectory` with every message text longer than `limit` characters cut (the same object when
    none is)."""
    messages = [_message(message, limit) for message in trajectory.messages]
    error = trajectory.error
    if error is not None and len(error) > limit:
        error = truncated(error, limit)
    if error == trajectory.error and all(new is old for new, old in zip(messages, trajectory.messages, strict=True)):
        return trajectory
    return trajectory.model_copy(update={"messages": messages, "error": error})
