"""The reference dialogue of a scenario: one correct conversation, step by step.

Steps are written as `search_contacts(name="Fredrik")` (keyword arguments with literal values),
`{agent: text}`, `{user: text}` or `{parallel: [call, call]}`. Call strings are parsed with `ast` and
`ast.literal_eval` — scenario files are data, nothing in them is executed.
"""

from __future__ import annotations

import ast
from typing import Any

from pydantic import BaseModel, ConfigDict


class ReferenceCall(BaseModel):
    model_config = ConfigDict(frozen=True)
    tool: str
    arguments: dict[str, Any]



class ReferenceStep(BaseModel):
    """Exactly one of: calls (one, or several in parallel), agent text, user text."""

    model_config = ConfigDict(frozen=True)
    calls: tuple[ReferenceCall, ...] = ()
    agent: str | None = None
    user: str | None = None


_JSON_NAMES = {"true": True, "false": False, "null": None}


def _literal(node: ast.expr) -> Any:
    """A JSON value written as a Python literal; JSON's true/false/null are accepted next to Python's
    spellings, a tuple is a list. Bytes, sets and complex numbers are refused (ValueError): a tool's
    arguments travel as JSON, which has none of them."""
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(element) for element in node.elts]
    if isinstance(node, ast.Dict):
        keys = [key for key in node.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)]
        if len(keys) == len(node.keys):  # no `**spread`, no key other than a string
            return {key.value: _literal(value) for key, value in zip(keys, node.values, strict=True)}
    value = ast.literal_eval(node) if isinstance(node, ast.Constant | ast.UnaryOp) else None
    if isinstance(value, str | int | float | bool) or (value is None and isinstance(node, ast.Constant)):
        return value
    raise ValueError("not a JSON literal")


def parse_call(text: str) -> ReferenceCall:
    """`name(key=literal, …)` → ReferenceCall; anything else is a ValueError that says why."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as error:
        raise ValueError(f"{text!r} is not a call like tool_name(argument=value): {error.msg}") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"{text!r} is not a call like tool_name(argument=value)")
    if node.args:
        raise ValueError(f"{text!r}: pass arguments by keyword, e.g. {node.func.id}(name=\"value\")")
    arguments = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ValueError(f"{text!r}: **kwargs are not allowed")
        try:
            arguments[keyword.arg] = _literal(keyword.value)
        except ValueError:
            raise ValueError(f"{text!r}: the value of {keyword.arg!r} must be a literal "
                             "(string, number, true, false, null, list, dict)") from None
    return ReferenceCall(tool=node.func.id, arguments=arguments)


def _call_from(item: Any) -> ReferenceCall:
    if isinstance(item, str):
        return parse_call(item)
    if isinstance(item, dict) and set(item) <= {"tool", "arguments"} and "tool" in item:
        arguments = item.get("arguments") or {}
        if not isinstance(item["tool"], str) or not isinstance(arguments, dict):
            raise ValueError(f"{item!r}: write {{tool: name, arguments: {{argument: value}}}}")
        # YAML 1.1 reads an unquoted `on:`/`off:` key as a boolean; `{on: true}` means argument "on".
        arguments = {({True: "on", False: "off"}[key] if isinstance(key, bool) else key): value
                     for key, value in arguments.items()}
        if not all(isinstance(key, str) for key in arguments):
            raise ValueError(f"{item!r}: argument names must be text")
        return ReferenceCall(tool=item["tool"], arguments=arguments)
    raise ValueError(f"{item!r} is not a call: write tool_name(argument=value) or {{tool: name, arguments: {{…}}}}")


def parse_step(item: Any) -> ReferenceStep:
    if isinstance(item, str):
        return ReferenceStep(calls=(parse_call(item),))
    if isinstance(item, dict) and len(item) == 1:
        (key, value), = item.items()
        if key in ("agent", "user"):
            if not isinstance(value, str):
                raise ValueError(f"'{key}' takes the text the {key} says")
            return ReferenceStep(agent=value) if key == "agent" else ReferenceStep(user=value)
        if key == "parallel":
            if not isinstance(value, list) or len(value) < 2:
                raise ValueError("'parallel' takes a list of at least two calls")
            return ReferenceStep(calls=tuple(_call_from(call) for call in value))
    if isinstance(item, dict) and "tool" in item:
        return ReferenceStep(calls=(_call_from(item),))
    raise ValueError(f"{item!r} is not a step: use tool_name(argument=value), {{agent: text}}, {{user: text}} "
                     "or {parallel: [call, call]}")
