"""The fake provider's Anthropic Messages endpoint (`/v1/messages`): the same pure answer function as its
Chat Completions endpoint (`fake_provider.answer`), with the request and reply in the Messages format, so a
whole `--agent=claude` run records and replays against a loopback server speaking Anthropic's wire format.

The answer names a dated snapshot of the requested model (`<model>-20261101`), as the real API does for an
alias, so tests can tell the requested model from the answering one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MESSAGES = "/v1/messages"
SNAPSHOT_SUFFIX = "-20261101"


def _chat_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The Messages conversation as Chat Completions messages (what `answer` reads: roles, tool results)."""
    chat: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                chat.append({"role": "tool", "content": str(block.get("content"))})
            elif block.get("type") == "tool_use":
                chat.append({"role": "assistant", "tool_calls": [{"id": block.get("id")}]})
            elif block.get("type") == "text":
                chat.append({"role": message.get("role"), "content": block.get("text")})
    return chat


def messages_answer(body: dict[str, Any], calls_per_turn: int,
                    answer: Callable[[dict[str, Any], int], dict[str, Any]]) -> dict[str, Any]:
    """The Messages reply to `body`, decided by the Chat Completions `answer`."""
    tools = [{"type": "function", "function": {"name": tool.get("name"), "parameters": tool.get("input_schema")}}
             for tool in body.get("tools") or [] if isinstance(tool, dict)]
    chat = answer({"model": body.get("model"), "messages": _chat_messages(body), "tools": tools}, calls_per_turn)
    message = chat["choices"][0]["message"]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}] if message.get("content") else []
    blocks += [{"type": "tool_use", "id": f"toolu_{call['id']}", "name": call["function"]["name"],
                "input": json.loads(call["function"]["arguments"])} for call in message.get("tool_calls") or []]
    return {"id": chat["id"].replace("chatcmpl", "msg"), "type": "message", "role": "assistant",
            "model": f"{body.get('model')}{SNAPSHOT_SUFFIX}", "content": blocks,
            "stop_reason": "tool_use" if message.get("tool_calls") else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": chat["usage"]["prompt_tokens"],
                      "output_tokens": chat["usage"]["completion_tokens"]}}
