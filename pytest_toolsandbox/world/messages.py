"""The message bus vocabulary: roles, tool calls, tool traces and messages with visibility."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer


class Role(StrEnum):
    """Who speaks on the bus. The next speaker is always the recipient of the last message."""

    SYSTEM = "system"
    USER = "user"
    AGENT = "agent"
    EXECUTION_ENVIRONMENT = "execution_environment"


class ToolCall(BaseModel):
    """A tool call exactly as a role produced it: the arguments stay raw JSON text until validated.

    `format_error` marks a call the agent wrote as text that is not valid JSON (`roles/text_calls.py`):
    `arguments` then holds what could be read, the call is never run, and the execution environment
    answers with this text. It is left out of the JSON form when absent, so trajectories of
    well-formed calls keep their bytes.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"
    format_error: str | None = None

    @model_serializer(mode="wrap")
    def _without_absent_format_error(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if data.get("format_error") is None:
            data.pop("format_error", None)
        return data


class ToolTrace(BaseModel):
    """What really ran: the executed tool, every argument after defaults, and the result."""

    model_config = ConfigDict(frozen=True)

    tool: str
    arguments: dict[str, Any]
    result: Any = None


class Message(BaseModel):
    """One row of the conversation log.

    A call message (role → execution environment) carries `tool_call`; the reply carries
    `tool_call_id`, the agent-facing `tool_name`, and either a `tool_trace` (success) or an
    `exception` text (`Type: message`). `error_code` classifies replies to malformed calls
    (IFE, IFN, IAN, IAT) so diagnosis does not have to re-parse text.
    """

    model_config = ConfigDict(frozen=True)

    index: int
    sender: Role
    recipient: Role
    content: str = ""
    tool_call: ToolCall | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_trace: ToolTrace | None = None
    exception: str | None = None
    error_code: str | None = None
    visible_to: tuple[Role, ...] = Field(default_factory=tuple)
    conversation_active: bool = True

    def visible_for(self, role: Role) -> bool:
        """A role reads a message if listed in `visible_to` (empty means sender and recipient)."""
        if self.visible_to:
            return role in self.visible_to
        return role in (self.sender, self.recipient)
