"""Tool calls written as text, the way small local models often answer.

When a response carries no structured calls, its text is searched for calls in this order (the first
shape found wins):

1. `<tool_call>{"name": …, "arguments": {…}}</tool_call>` blocks;
2. fenced code blocks (```json … ```) holding such an object or a list of them (prose around the
   fences is dropped);
3. a bare reply: the whole text (surrounding whitespace aside) starts with `{` or `[` and is such an
   object or list. Prose after the JSON is dropped; a reply that starts with prose is text, since an
   object inside prose is as likely an example for the user as a call. A bare object is a call only
   when each `name` is a tool of `known` (offered or withheld: an attempt at a withheld tool is
   still an attempt) and it has no keys besides `name`, `arguments` and `parameters`, so data the
   agent shows the user is never mistaken for a call.

A block that is valid JSON becomes calls as written. A block that is not, but that a tolerant reading
(`lenient_json`) shows to be a call — a `name` plus `arguments`/`parameters`, or for a bare reply a
known `name` — becomes a *malformed call*: a ToolCall with the arguments that could be read and a
`format_error` saying what was wrong and what form is expected. The execution environment answers
it with that error (diagnosed IFE) without running it, and scoring sees it as an attempt of the tool
it names. Model output is only ever parsed, never evaluated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from pytest_toolsandbox.roles.lenient_json import UNREADABLE, describe, scan
from pytest_toolsandbox.world.messages import ToolCall

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_ENVELOPE = frozenset({"name", "arguments", "parameters"})
_ARGUMENT_KEYS = _ENVELOPE - {"name"}
_EXAMPLE_LIMIT = 400


def _items(value: Any) -> list[dict[str, Any]] | None:
    """The call objects of a value (an object with a string `name`, or a non-empty list of them)."""
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(item, dict) and isinstance(item.get("name"), str) for item in items):
        return None
    return items


def _bare_items(value: Any, known: Collection[str]) -> list[dict[str, Any]] | None:
    """Call objects of a bare reply: known names, nothing but the call envelope's keys."""
    items = _items(value)
    if items is None or not all(item["name"] in known and set(item) <= _ENVELOPE for item in items):
        return None
    return items


def _arguments(item: dict[str, Any]) -> Any:
    return item.get("arguments", item.get("parameters", {}))


def _call(item: dict[str, Any], number: int) -> ToolCall:
    arguments = _arguments(item)
    # some models double-encode the arguments as a JSON string: keep that string as the raw arguments
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=f"text_call_{number}", name=item["name"], arguments=raw)


def _readable_arguments(item: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a malformed call as far as they could be read (always an object)."""
    arguments = _arguments(item)
    if isinstance(arguments, str):  # double-encoded, possibly just as broken
        arguments = scan(arguments).value
    return arguments if isinstance(arguments, dict) else {}


def format_error(name: str, arguments: dict[str, Any], problems: tuple[str, ...]) -> str:
    """What the agent is told about a call it wrote as text that is not valid JSON."""
    example = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    if len(example) > _EXAMPLE_LIMIT:
        example = example[:_EXAMPLE_LIMIT] + "…"
    left_out = " (arguments that could not be read are left out)" if "expression" in problems else ""
    return (
        f"Your reply was read as a call of {name!r} written as text, but it is not valid JSON: "
        f"{describe(problems) or 'it does not parse'}. Nothing was run. Send the call as one JSON object "
        "with double-quoted strings, true/false/null, literal values and no comments, in the form "
        f"{example}{left_out}."
    )


def _malformed(item: dict[str, Any], problems: tuple[str, ...], number: int) -> ToolCall:
    arguments = _readable_arguments(item)
    return ToolCall(
        id=f"text_call_{number}",
        name=item["name"],
        arguments=json.dumps(arguments, ensure_ascii=False),
        format_error=format_error(item["name"], arguments, problems),
    )


def _blocks(text: str) -> tuple[str, list[str]]:
    """The kind of the call-carrying blocks found and their texts."""
    tagged = _TAGGED.findall(text)
    if tagged:
        return "tagged", tagged
    fenced = _FENCED.findall(text)
    if fenced:
        return "fenced", fenced
    stripped = text.strip()
    return ("bare", [stripped]) if stripped[:1] in ("{", "[") else ("none", [])


def _strict(block: str, bare: bool) -> Any:
    """The block as strict JSON (for a bare reply: its leading JSON value), UNREADABLE if it is not."""
    try:
        if bare:
            return json.JSONDecoder().raw_decode(block)[0]
        return json.loads(block)
    except (ValueError, RecursionError):
        return UNREADABLE


def _lenient_items(block: str, bare: bool, known: Collection[str]) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The call objects a tolerant reading finds in a block that is not valid JSON, and its problems.

    An object reads as a call when it names a known tool, or — inside a tag or a fence, where the
    model meant a call — when it has the envelope's `arguments` or `parameters` key."""
    read = scan(block)
    items = _items(read.value) or []
    if not all(item["name"] in known or (not bare and _ARGUMENT_KEYS & set(item)) for item in items):
        items = []
    return items, read.problems


def parse_text_calls(text: str, first_number: int = 1, known: Collection[str] = ()) -> tuple[ToolCall, ...]:
    """The calls written in `text`, numbered from `first_number` (ids must be unique per episode).

    `known` holds the tool names a bare JSON reply may call (and a malformed block may name without
    an `arguments` key); malformed calls carry a `format_error`.
    """
    kind, blocks = _blocks(text)
    bare = kind == "bare"
    calls: list[ToolCall] = []
    for block in blocks:
        value = _strict(block, bare)
        if value is not UNREADABLE:
            items = _bare_items(value, known) if bare else _items(value)
            calls += [_call(item, first_number + len(calls) + offset) for offset, item in enumerate(items or [])]
            continue
        items, problems = _lenient_items(block, bare, known)
        calls += [_malformed(item, problems, first_number + len(calls) + offset) for offset, item in enumerate(items)]
    return tuple(calls)
