"""The request rules the hosted APIs enforce, checked by the loopback servers as the real ones do.

Each check takes a parsed request body and returns None (the API would accept it) or the API's own
400 answer: OpenAI's `{"error": {"message", "type", "param", "code"}}` and Anthropic's
`{"type": "error", "error": {"type", "message"}}`, with the messages the APIs send. A test run that
breaks one of these rules gets the same 400 a hosted run would, so "every item scored" against these
servers means no hosted request of that shape would have been rejected.
"""

from __future__ import annotations

import re
from typing import Any

REASONING_MODEL = re.compile(r"^(o\d+(-|$)|gpt-5(?!.*-chat))")
"""OpenAI model families that take `max_completion_tokens`, no `temperature` and a `reasoning_effort` (the
last part of a routed id such as `openai/o4-mini`; gpt-5-chat-latest is a chat model)."""
REASONING_EFFORTS = ("minimal", "low", "medium", "high")


def openai_error(message: str, param: str | None, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def anthropic_error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def openai_violation(body: dict[str, Any]) -> dict[str, Any] | None:
    """The 400 body Chat Completions answers `body` with, or None."""
    return _parameters(body) or _tool_pairing(body.get("messages") or [])


def _parameters(body: dict[str, Any]) -> dict[str, Any] | None:
    model = str(body.get("model", "")).rsplit("/", 1)[-1].lower()
    if REASONING_MODEL.match(model):
        if "max_tokens" in body:
            return openai_error("Unsupported parameter: 'max_tokens' is not supported with this model. "
                                "Use 'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
        if "temperature" in body and body["temperature"] != 1:
            return openai_error(f"Unsupported value: 'temperature' does not support {body['temperature']} with "
                                "this model. Only the default (1) value is supported.", "temperature",
                                "unsupported_value")
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in REASONING_EFFORTS:
            return openai_error(f"Invalid value: '{effort}'. Supported values are: "
                                + ", ".join(f"'{value}'" for value in REASONING_EFFORTS) + ".",
                                "reasoning_effort", "invalid_value")
        return None
    if "reasoning_effort" in body:
        return openai_error("Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                            "reasoning_effort", "unsupported_parameter")
    return None


def _tool_pairing(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Every assistant `tool_calls` entry answered by the tool messages right after it, and no tool message
    that answers nothing."""
    waiting: list[str] = []
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in waiting:
                return openai_error("Invalid parameter: messages with role 'tool' must be a response to a "
                                    "preceeding message with 'tool_calls'.", f"messages.[{index}].role", None)
            waiting.remove(message["tool_call_id"])
            continue
        if waiting:
            return openai_error("An assistant message with 'tool_calls' must be followed by tool messages "
                                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                f"response messages: {', '.join(waiting)}", f"messages.[{index}].role", None)
        waiting = [call.get("id") for call in message.get("tool_calls") or []]
    return None


def anthropic_violation(body: dict[str, Any]) -> dict[str, Any] | None:
    """The 400 body the Messages API answers `body` with, or None."""
    messages = body.get("messages") or []
    if not messages or messages[0].get("role") != "user":
        return anthropic_error('messages: first message must use the "user" role')
    for index, message in enumerate(messages):
        if index and message.get("role") == messages[index - 1].get("role"):
            return anthropic_error(f'messages: roles must alternate between "user" and "assistant", but found '
                                   f'multiple "{message.get("role")}" roles in a row')
        for position, block in enumerate(_blocks(message)):
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                return anthropic_error(f"messages.{index}.content.{position}.text: text content blocks must "
                                       "contain non-whitespace text")
        if (problem := _tool_results(messages, index)) is not None:
            return problem
    return None


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _tool_results(messages: list[dict[str, Any]], index: int) -> dict[str, Any] | None:
    """`tool_use` ids answered by `tool_result` blocks at the start of the next message, and results only for
    the uses of the message before."""
    uses = [block.get("id") for block in _blocks(messages[index]) if block.get("type") == "tool_use"]
    following = _blocks(messages[index + 1]) if index + 1 < len(messages) else None
    if uses and following is not None:
        leading = []
        for block in following:
            if block.get("type") != "tool_result":
                break
            leading.append(block.get("tool_use_id"))
        missing = [use for use in uses if use not in leading]
        if missing:
            return anthropic_error(f"messages.{index + 1}: `tool_use` ids were found without `tool_result` blocks "
                                   f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` block must "
                                   "have a corresponding `tool_result` block in the next message.")
    answered = [block.get("tool_use_id") for block in _blocks(messages[index]) if block.get("type") == "tool_result"]
    before = [block.get("id") for block in _blocks(messages[index - 1])
              if block.get("type") == "tool_use"] if index else []
    stray = [use for use in answered if use not in before]
    if stray:
        return anthropic_error(f"messages.{index}.content.0: unexpected `tool_use_id` found in `tool_result` "
                               f"blocks: {', '.join(map(str, stray))}. Each `tool_result` block must have a "
                               "corresponding `tool_use` block in the previous message.")
    return None
