"""OpenAI Chat Completions adapter (OpenAI and OpenAI-compatible servers): format conversion only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_toolsandbox.roles.conversation import Called, Conversation, Returned, Said
from pytest_toolsandbox.roles.model_spec import ModelSettings
from pytest_toolsandbox.roles.reply import Reply
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import ToolCall


def _message(entry: Said | Called | Returned) -> list[dict[str, Any]]:
    if isinstance(entry, Said):
        return [{"role": "assistant" if entry.mine else "user", "content": entry.text}]
    if isinstance(entry, Called):
        return [{"role": "assistant", "content": None,
                 "tool_calls": [{"id": call.id, "type": "function",
                                 "function": {"name": call.name, "arguments": call.arguments}}
                                for call in entry.calls]}]
    return [{"role": "tool", "tool_call_id": result.call_id, "content": result.content}
            for result in entry.results]


def request(conversation: Conversation, tools: Sequence[OfferedTool], settings: ModelSettings) -> dict[str, Any]:
    """The keyword arguments of `client.chat.completions.create`."""
    messages = [{"role": "system", "content": conversation.system}] if conversation.system else []
    for entry in conversation.entries:
        messages.extend(_message(entry))
    body: dict[str, Any] = {"model": settings.model, "messages": messages,
                            "temperature": settings.options.temperature,
                            "max_tokens": settings.options.max_tokens}
    if tools:
        body["tools"] = [tool.openai() for tool in tools]
    return body


def client(settings: ModelSettings, http_client: Any = None) -> Any:
    """An SDK client without its own retries (ours wrap every provider the same way); `http_client`
    (an httpx2.Client, e.g. one going through the episode's cassette) replaces the SDK's own."""
    from openai import OpenAI

    return OpenAI(api_key=settings.api_key(), base_url=settings.options.base_url, max_retries=0,
                  timeout=settings.options.timeout, http_client=http_client)


def send(sdk_client: Any, body: dict[str, Any]) -> Any:
    """POST the body as built and parse the answer into the SDK's `ChatCompletion`.

    `chat.completions.create(**body)` would first walk the whole body (every message and tool
    schema) against the SDK's parameter types to transform it, which for our plain JSON bodies
    changes nothing but costs about four times the rest of the call. The SDK's documented `post`
    sends the same bytes with the same headers (checked on every request in our cassettes)."""
    from openai.types.chat import ChatCompletion

    return sdk_client.post("/chat/completions", body=body, cast_to=ChatCompletion)


def reply(response: Any) -> Reply:
    """Text and structured calls of the first choice, and the token counts."""
    if not response.choices:
        return Reply(text="", calls=(), input_tokens=_tokens(response, "prompt_tokens"),
                     output_tokens=_tokens(response, "completion_tokens"))
    message = response.choices[0].message
    calls = tuple(ToolCall(id=str(call.id or ""), name=str(call.function.name or ""),
                           arguments=_arguments(call.function.arguments))
                  for call in (message.tool_calls or ()) if getattr(call, "function", None) is not None)
    return Reply(text=message.content or "", calls=calls, input_tokens=_tokens(response, "prompt_tokens"),
                 output_tokens=_tokens(response, "completion_tokens"))


def _arguments(raw: Any) -> str:
    """Arguments as JSON text; some compatible servers send an object instead of a string."""
    if raw is None or raw == "":
        return "{}"
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


def _tokens(response: Any, field: str) -> int:
    usage = getattr(response, "usage", None)
    return int(getattr(usage, field, 0) or 0) if usage is not None else 0
