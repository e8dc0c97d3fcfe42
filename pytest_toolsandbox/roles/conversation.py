"""A role's view of the bus as a provider-neutral conversation: what it said, what it heard, the
calls it made and their results. Provider adapters only translate this into their wire format.

The same function serves the agent and the role-reversed user simulator: `me` is the role whose
point of view is taken, so "mine" turns become the model's own (assistant) turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pytest_toolsandbox.world.messages import Message, Role, ToolCall


@dataclass(frozen=True)
class Said:
    """Text one side said; `mine` when the model itself said it."""

    text: str
    mine: bool


@dataclass(frozen=True)
class Called:
    """Tool calls the model made in one turn (several = parallel calls)."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class Result:
    """The execution environment's answer to one call."""

    call_id: str
    name: str
    content: str
    is_error: bool


@dataclass(frozen=True)
class Returned:
    """The results of one batch of calls, in the order they were answered."""

    results: tuple[Result, ...]


Entry = Said | Called | Returned


@dataclass(frozen=True)
class Conversation:
    system: str
    entries: tuple[Entry, ...]


def _add_feedback(entries: list[Entry], text: str) -> None:
    """Feedback of the environment that answers no call (the calls over the per-turn cap were rejected):
    appended to the batch's last result, since providers take a tool message only as the answer to one
    of the calls of the turn before (an empty call id is an HTTP 400); as a user message otherwise."""
    if entries and isinstance(entries[-1], Returned) and entries[-1].results:
        *results, last = entries[-1].results
        entries[-1] = Returned((*results, replace(last, content=f"{last.content}\n\n{text}")))
    else:
        entries.append(Said(text, mine=False))


def conversation(messages: Sequence[Message], me: Role) -> Conversation:
    """Fold the messages `me` may see into system text and alternating entries."""
    system: list[str] = []
    entries: list[Entry] = []
    for message in messages:
        if message.sender is Role.SYSTEM:
            system.append(message.content)
        elif message.sender is me and message.tool_call is not None:
            if entries and isinstance(entries[-1], Called):
                entries[-1] = Called((*entries[-1].calls, message.tool_call))
            else:
                entries.append(Called((message.tool_call,)))
        elif message.sender is me:
            entries.append(Said(message.content, mine=True))
        elif message.sender is Role.EXECUTION_ENVIRONMENT and message.tool_call_id is not None:
            result = Result(call_id=message.tool_call_id, name=message.tool_name or "",
                            content=message.content, is_error=message.exception is not None)
            if entries and isinstance(entries[-1], Returned):
                entries[-1] = Returned((*entries[-1].results, result))
            else:
                entries.append(Returned((result,)))
        elif message.sender is Role.EXECUTION_ENVIRONMENT:
            _add_feedback(entries, message.content)
        else:
            entries.append(Said(message.content, mine=False))
    return Conversation(system="\n\n".join(system), entries=tuple(entries))
