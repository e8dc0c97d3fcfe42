"""Defensive conversion between untrusted values and plain, strict JSON data.

Agents, trajectories and summary files are written by others: an SDK's `usage` object, a model that is
an Enum or a client, tool arguments nested a thousand levels deep, NaN. Everything that goes into a
record, a report or a score passes through here, so no such value can raise deep inside report
writing, scoring or the xdist channel (which carries only plain data). Nothing here recurses on
Python's stack: depth is bounded explicitly, so `RecursionError` cannot happen.
"""

from __future__ import annotations

import json
import math
from enum import Enum
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting kept; deeper values are replaced by a short text (no real tool argument nests so deep)."""

_TEXT_LIMIT = 2000


def _text(key: object) -> str:
    """A dict key that is not a string, as text (keys of plain data are ints, Enums, tuples)."""
    try:
        text = str(key.value if isinstance(key, Enum) else key)
    except Exception:  # a hostile __str__ must not end a run
        text = f"<{type(key).__name__}>"
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT] + "…"


def _leaf(value: object) -> tuple[bool, Any]:
    """(True, plain value) for scalars; (False, None) for containers that need walking."""
    if value is None or isinstance(value, bool | str):
        return True, value
    if isinstance(value, Enum):
        return True, _leaf(value.value)[1] if _leaf(value.value)[0] else _text(value)
    if isinstance(value, int):
        return True, int(value)
    if isinstance(value, float):
        return True, float(value) if math.isfinite(value) else None
    if isinstance(value, dict | list | tuple):
        return False, None
    if callable(getattr(value, "model_dump", None)) and not isinstance(value, type):
        return False, None  # a pydantic model (SDK usage objects): its fields
    return True, f"<{type(value).__name__}>"  # never str(): a client's text may hold a key, an address


def _children(value: object) -> dict[str, Any] | list[Any]:
    if isinstance(value, dict):
        return {_text(key) if not isinstance(key, str) else key: item for key, item in value.items()}
    if isinstance(value, list | tuple):
        return list(value)
    model: Any = value  # a pydantic model, or anything else that has a model_dump
    try:
        data = model.model_dump()
    except Exception:  # a hostile model_dump must not end a run
        return {}
    return dict(data) if isinstance(data, dict) else {}


def plain(value: object, max_depth: int = MAX_DEPTH) -> Any:
    """`value` as str/int/float/bool/None/list/dict (string keys) that strict JSON can write.

    Enums become their value, non-finite floats None, pydantic models (SDK usage objects) dicts of
    their fields, anything else (clients, functions) `<TypeName>` — never its text, which may hold an
    API key or a memory address; nesting deeper than `max_depth` becomes a text marker.
    """
    done, result = _leaf(value)
    if done:
        return result
    root: dict[str, Any] | list[Any] = {} if not isinstance(value, list | tuple) else []
    stack = [(value, root, 0)]
    key: Any  # a mapping's key or a sequence's index
    seen: set[int] = set()
    while stack:
        source, target, depth = stack.pop()
        if id(source) in seen:  # a cycle: keep the first visit only
            continue
        seen.add(id(source))
        items = _children(source)
        for key, item in (items.items() if isinstance(items, dict) else enumerate(items)):
            done, converted = _leaf(item)
            if not done:
                if depth + 1 >= max_depth:
                    converted = "<nested too deeply>"
                else:
                    converted = [] if isinstance(item, list | tuple) else {}
                    stack.append((item, converted, depth + 1))
            if isinstance(target, dict):
                target[key] = converted
            else:
                target.append(converted)
    return root


def depth(value: object) -> int:
    """Nesting depth of parsed JSON data, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        current, level = stack.pop()
        if isinstance(current, dict | list):
            deepest = max(deepest, level)
            stack.extend((item, level + 1) for item in (current.values() if isinstance(current, dict) else current))
    return deepest


class JsonDataError(ValueError):
    """Text that is not JSON, or JSON nested deeper than the project accepts."""


def loads(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` that raises only `JsonDataError` (never `RecursionError`) and refuses deep nesting."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonDataError(f"JSON nested more than {max_depth} levels deep") from None
    except ValueError as error:
        raise JsonDataError(str(error)) from None
    if depth(value) > max_depth:
        raise JsonDataError(f"JSON nested more than {max_depth} levels deep")
    return value


def dumps(value: Any, **options: Any) -> str:
    """Strict JSON text (no NaN or Infinity, which strict parsers reject) of already plain data."""
    return json.dumps(value, allow_nan=False, **options)


def label(value: object) -> str | None:
    """A one-line name for an agent's `model` attribute: text as is, an Enum's value, else `<TypeName>`.

    Never the text of anything else: a dict or pydantic model (an SDK's client settings) may hold the
    API key, and its text would reach summary.json and the report."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Enum) and isinstance(value.value, str | int | float) and not isinstance(value.value, bool):
        return _text(value)
    return f"<{type(value).__name__}>"
