"""Anthropic Messages API adapter: format conversion only.

The Messages API wants strictly alternating user/assistant turns starting with the user, every
`tool_use` answered by a `tool_result` at the start of the next (user) turn, text blocks with some
non-whitespace text, and tool inputs as objects; this module folds the neutral conversation into that
shape (a reply of "\n\n" is still a turn: it is sent as a visible placeholder).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_toolsandbox.roles.conversation import Called, Conversation, Returned, Said
from pytest_toolsandbox.roles.model_spec import ModelSettings
from pytest_toolsandbox.roles.pairing import paired
from pytest_toolsandbox.roles.reply import Reply
from pytest_toolsandbox.roles.usage_counts import reported_tokens
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import ToolCall

OPENING = "(The conversation begins.)"
"""Stands in for a missing first user turn (the role-reversed user simulator speaks first)."""
EMPTY_TEXT = "(empty message)"
"""The API rejects empty and whitespace-only text blocks; such a message is still a turn, so it is kept, visibly."""


def _input(arguments: str) -> dict[str, Any]:
    """Tool inputs must be objects; arguments that were not a JSON object are kept under `_raw`."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def _text(text: str) -> str:
    return text if text.strip() else EMPTY_TEXT


def _blocks(entry: Said | Called | Returned) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(entry, Said):
        return ("assistant" if entry.mine else "user"), [{"type": "text", "text": _text(entry.text)}]
    if isinstance(entry, Called):
        return "assistant", [{"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call.arguments)}
                             for call in entry.calls]
    return "user", [{"type": "tool_result", "tool_use_id": result.call_id,
                     "content": _text(result.content), **({"is_error": True} if result.is_error else {})}
                    for result in entry.results]


def request(conversation: Conversation, tools: Sequence[OfferedTool], settings: ModelSettings) -> dict[str, Any]:
    """The keyword arguments of `client.messages.create`."""
    messages: list[dict[str, Any]] = []
    for entry in paired(conversation.entries):
        role, blocks = _blocks(entry)
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    if not messages or messages[0]["role"] != "user":
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": OPENING}]})
    # No temperature: the Messages API (SDK 2.x) has dropped sampling parameters.
    body: dict[str, Any] = {"model": settings.model, "messages": messages, "max_tokens": settings.options.max_tokens}
    if conversation.system:
        body["system"] = conversation.system
    if tools:
        body["tools"] = [tool.anthropic() for tool in tools]
    return body


def client(settings: ModelSettings, http_client: Any = None) -> Any:
    """An SDK client without its own retries (ours wrap every provider the same way); `http_client`
    (an httpx2.Client, e.g. one going through the episode's cassette) replaces the SDK's own."""
    from anthropic import Anthropic

    return Anthropic(api_key=settings.api_key(), base_url=settings.options.base_url, max_retries=0,
                     timeout=settings.options.timeout, http_client=http_client)


def send(sdk_client: Any, body: dict[str, Any]) -> Any:
    return sdk_client.messages.create(**body)


def reply(response: Any) -> Reply:
    """Text blocks joined, tool_use blocks as calls (inputs re-encoded as JSON), token counts."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in response.content or ():
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            calls.append(ToolCall(id=block.id or "", name=block.name or "",
                                  arguments=json.dumps(block.input, ensure_ascii=False)))
    input_tokens, output_tokens = reported_tokens(getattr(response, "usage", None), "input_tokens", "output_tokens")
    return Reply(text="\n".join(texts), calls=tuple(calls), input_tokens=input_tokens, output_tokens=output_tokens)
