"""A person at the terminal playing the agent or the user (for exploring and authoring scenarios)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, ToolCall


class _Terminal:
    def __init__(self, read: Callable[[str], str] = input, out: TextIO = sys.stdout) -> None:
        self.read = read
        self.out = out
        self.seen = 0
        self.calls = 0

    def show_new(self, messages: Sequence[Message]) -> None:
        for message in messages[self.seen:]:
            self.out.write(f"[{message.index}] {message.sender} → {message.recipient}: {message.content}\n")
        self.seen = len(messages)

    def call(self, name: str, arguments: str) -> ToolCall:
        self.calls += 1
        return ToolCall(id=f"human_{self.calls}", name=name, arguments=arguments or "{}")


class HumanAgent:
    """Type text to answer the user, or `call TOOL {"json": "arguments"}` to use a tool."""

    name = "human"

    def __init__(self, read: Callable[[str], str] = input, out: TextIO = sys.stdout) -> None:
        self.terminal = _Terminal(read, out)

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        self.terminal.show_new(messages)
        self.terminal.out.write("tools: " + ", ".join(tool.name for tool in tools) + "\n")
        line = self.terminal.read("agent> ").strip()
        if line.startswith("call "):
            name, _, arguments = line[5:].strip().partition(" ")
            return Turn(tool_calls=(self.terminal.call(name, arguments.strip()),))
        return Turn(text=line)


class HumanUser:
    """Type what the user says; `end` ends the conversation."""

    name = "human"

    def __init__(self, read: Callable[[str], str] = input, out: TextIO = sys.stdout) -> None:
        self.terminal = _Terminal(read, out)

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        self.terminal.show_new(messages)
        line = self.terminal.read("user> ").strip()
        if line == "end" and tools:
            return Turn(tool_calls=(self.terminal.call(tools[0].name, json.dumps({})),))
        return Turn(text=line)
