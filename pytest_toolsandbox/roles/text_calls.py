"""Tool calls written as text, the way small local models often answer.

Two shapes are recognised when a response carries no structured calls:
`<tool_call>{"name": …, "arguments": {…}}</tool_call>` blocks, and fenced code blocks (```json … ```)
holding such an object or a list of them. Anything else stays plain text: the parser never guesses,
and model output is only ever parsed as JSON, never evaluated.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_toolsandbox.world.messages import ToolCall

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)


def _objects(text: str) -> list[dict[str, Any]] | None:
    """The call objects in one block, or None when the block is not a call."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(item, dict) and isinstance(item.get("name"), str) for item in items):
        return None
    return items


def _call(item: dict[str, Any], number: int) -> ToolCall:
    arguments = item.get("arguments", item.get("parameters", {}))
    # some models double-encode the arguments as a JSON string: keep that string as the raw arguments
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=f"text_call_{number}", name=item["name"], arguments=raw)


def parse_text_calls(text: str, first_number: int = 1) -> tuple[ToolCall, ...]:
    """The calls written in `text`, numbered from `first_number` (ids must be unique per episode)."""
    blocks = _TAGGED.findall(text) or _FENCED.findall(text)
    found: list[dict[str, Any]] = []
    for block in blocks:
        objects = _objects(block)
        if objects is not None:
            found.extend(objects)
    return tuple(_call(item, first_number + offset) for offset, item in enumerate(found))
