"""OpenAI Chat Completions adapter (OpenAI and OpenAI-compatible servers): format conversion only.

Two parameter styles, chosen by the model family: chat models take `max_tokens` and `temperature` (0
unless given); reasoning models (o1, o3, o4-mini, the gpt-5 family) reject both and take
`max_completion_tokens` and an optional `reasoning_effort`, and a temperature only when the user gives
one. `--param-style SPEC=STYLE` overrides the choice for a model the rule gets wrong (a compatible
server's reasoning model under another name).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pytest_toolsandbox.roles.conversation import Called, Conversation, Returned, Said
from pytest_toolsandbox.roles.model_spec import ModelSettings
from pytest_toolsandbox.roles.pairing import paired
from pytest_toolsandbox.roles.reply import Reply
from pytest_toolsandbox.roles.usage_counts import reported_tokens
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


_REASONING_FAMILY = re.compile(r"^(o\d+(-|$)|gpt-5(?!.*-chat))")
"""o1, o3, o4-mini, … and gpt-5, gpt-5-mini, … (but not gpt-5-chat-latest, a chat model)."""


def param_style(settings: ModelSettings) -> str:
    """"reasoning" or "chat": the override when given, else the model family (the id's last path part,
    so `openai/o4-mini` on a routing server counts as o4-mini)."""
    if settings.options.param_style is not None:
        return settings.options.param_style
    return "reasoning" if _REASONING_FAMILY.match(settings.model.rsplit("/", 1)[-1].lower()) else "chat"


def _parameters(settings: ModelSettings) -> dict[str, Any]:
    options = settings.options
    if param_style(settings) == "chat":
        chat: dict[str, Any] = {"temperature": 0.0 if options.temperature is None else options.temperature,
                                "max_tokens": options.max_tokens}
        if options.temperature is None and options.provider_temperature:  # the provider's default
            del chat["temperature"]
        return chat
    parameters: dict[str, Any] = {"max_completion_tokens": options.max_tokens}
    if options.reasoning_effort is not None:
        parameters["reasoning_effort"] = options.reasoning_effort
    if options.temperature is not None:  # the user asked for it; the API says whether the model takes it
        parameters["temperature"] = options.temperature
    return parameters


def request(conversation: Conversation, tools: Sequence[OfferedTool], settings: ModelSettings) -> dict[str, Any]:
    """The keyword arguments of `client.chat.completions.create`."""
    messages = [{"role": "system", "content": conversation.system}] if conversation.system else []
    for entry in paired(conversation.entries):
        messages.extend(_message(entry))
    body: dict[str, Any] = {"model": settings.model, "messages": messages, **_parameters(settings)}
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
    """Text and structured calls of the first choice, and the token counts (None when not reported)."""
    input_tokens, output_tokens = reported_tokens(getattr(response, "usage", None), "prompt_tokens",
                                                  "completion_tokens")
    if not response.choices:
        return Reply(text="", calls=(), input_tokens=input_tokens, output_tokens=output_tokens)
    message = response.choices[0].message
    calls = tuple(ToolCall(id=str(call.id or ""), name=str(call.function.name or ""),
                           arguments=_arguments(call.function.arguments))
                  for call in (message.tool_calls or ()) if getattr(call, "function", None) is not None)
    return Reply(text=message.content or "", calls=calls, input_tokens=input_tokens, output_tokens=output_tokens)


def _arguments(raw: Any) -> str:
    """Arguments as JSON text; some compatible servers send an object instead of a string."""
    if raw is None or raw == "":
        return "{}"
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)

