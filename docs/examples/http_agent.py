"""A complete minimal agent over a plain HTTP chat API (OpenAI-compatible /chat/completions).

Standard library only. Point it at any server speaking that API (vLLM, llama.cpp, Ollama, a
proxy) with CHAT_BASE_URL, CHAT_MODEL and, if the server needs one, CHAT_API_KEY.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Sequence

from pytest_toolsandbox import Message, OfferedTool, Role, ToolCall, Turn


def to_chat(messages: Sequence[Message]) -> list[dict]:
    """The messages this agent may see, in the chat API's format."""
    chat: list[dict] = []
    for message in messages:
        if message.tool_call is not None:  # one of the agent's own calls
            call = {"id": message.tool_call.id, "type": "function",
                    "function": {"name": message.tool_call.name, "arguments": message.tool_call.arguments}}
            if chat and chat[-1].get("tool_calls") and chat[-1]["content"] is None:
                chat[-1]["tool_calls"].append(call)  # parallel calls of one turn share one message
            else:
                chat.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif message.sender is Role.EXECUTION_ENVIRONMENT:  # a tool's result or error
            chat.append({"role": "tool", "tool_call_id": message.tool_call_id,
                         "content": message.exception or message.content})
        elif message.sender is Role.AGENT:
            chat.append({"role": "assistant", "content": message.content})
        else:  # the system prompt and the user's messages
            chat.append({"role": "system" if message.sender is Role.SYSTEM else "user", "content": message.content})
    return chat


class HttpChatAgent:
    """Sends the visible conversation and the offered tools, returns the model's text or tool calls."""

    name = "http-chat"

    def __init__(self) -> None:
        self.base_url = os.environ.get("CHAT_BASE_URL", "http://127.0.0.1:8000/v1").rstrip("/")
        self.model = os.environ.get("CHAT_MODEL", "my-model")  # recorded as agent_model
        self.api_key = os.environ.get("CHAT_API_KEY", "")
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0}  # recorded under tokens.agent

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        body = {"model": self.model, "messages": to_chat(messages), "tools": [tool.openai() for tool in tools],
                "temperature": 0}
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=json.dumps(body).encode("utf-8"), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"})
        with urllib.request.urlopen(request, timeout=120) as response:
            reply = json.load(response)
        for key in self.usage:
            self.usage[key] += int(reply.get("usage", {}).get(key, 0))
        answer = reply["choices"][0]["message"]
        calls = tuple(ToolCall(id=call["id"], name=call["function"]["name"],
                               arguments=call["function"].get("arguments") or "{}")
                      for call in answer.get("tool_calls") or [])
        # A call's name and arguments are passed on as data: the sandbox validates them, a bad one
        # comes back to the model as an error message, and nothing the model wrote is executed.
        return Turn(tool_calls=calls) if calls else Turn(text=answer.get("content") or "")
