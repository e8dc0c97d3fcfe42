"""The agent under test as a real model (Claude, GPT, or any OpenAI-compatible server)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.conversation import conversation
from pytest_toolsandbox.roles.model_backed import ModelBacked
from pytest_toolsandbox.roles.model_client import ModelClient
from pytest_toolsandbox.roles.text_calls import parse_text_calls
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, Role, ToolCall


def _known_names(tools: Sequence[OfferedTool]) -> frozenset[str]:
    """Names a call written as bare JSON may use: the offered ones and every registry tool (a withheld
    tool tried by name is an attempt that scoring must see)."""
    return frozenset(tool.name for tool in tools) | frozenset(all_tools())


class LLMAgent(ModelBacked):
    """Answers with the model's structured calls, else calls written as text (`roles/text_calls.py`,
    malformed ones included: they come back to the model as format errors), else its text.

    Calls without an id (some local servers omit it) get `call_<n>` so results can refer to them;
    every id is derived from the episode's own history, so replays send identical requests.
    """

    def __init__(self, client: ModelClient, name: str) -> None:
        super().__init__(client)
        self.name = name
        self.numbered = 0

    def _number(self, calls: Sequence[ToolCall]) -> tuple[ToolCall, ...]:
        numbered = []
        for call in calls:
            self.numbered += 1
            numbered.append(call if call.id else call.model_copy(update={"id": f"call_{self.numbered}"}))
        return tuple(numbered)

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        reply = self.client.complete(conversation(messages, Role.AGENT), tools)
        if reply.calls:
            return Turn(tool_calls=self._number(reply.calls))
        written = parse_text_calls(reply.text, self.numbered + 1, _known_names(tools)) if tools else ()
        if written:
            self.numbered += len(written)
            return Turn(tool_calls=written)
        return Turn(text=reply.text)
