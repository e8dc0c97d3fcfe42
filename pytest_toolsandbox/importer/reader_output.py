"""The reading half's JSON, checked before anything is converted or written.

The reader runs in another interpreter, on an installed package we do not control, and prints JSON;
whatever it prints reaches the generated scenario files. A newline in the package's version once
ended the header comment and wrote `threshold: 0` into every file (the always-declining agent then
passed everything, and `--check` agreed); a NaN cell, an item named `../x` or a time zone that does
not exist ended the import in a traceback. Every field the converter reads is therefore checked here
for its type, every number for being finite, every name and header text for being one line, the
clock's time and zone for existing, and the references between parts (an item's detail, an edge's
milestones) for pointing somewhere; the first problem is one line naming the field.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

MAX_NAME = 200


class ReaderOutputError(ValueError):
    """The reader printed something the converter cannot trust; the message names the field."""


def _one_line(text: str) -> str:
    if any(character in text for character in "\r\n\x0b\x0c\x85\u2028\u2029"):
        raise ValueError("must be one line of text")
    if any(ord(character) < 32 or ord(character) == 127 for character in text):
        raise ValueError("must not hold control characters")
    return text


def _file_name(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*", text) or ".." in text or len(text) > MAX_NAME:
        raise ValueError(f"{text[:60]!r} is not a scenario name (letters, digits, `_`, `-`, `.`; it names a file)")
    return text


OneLine = Annotated[str, AfterValidator(_one_line)]
Name = Annotated[str, AfterValidator(_file_name)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class _Source(_Strict):
    package: OneLine
    version: OneLine
    commit: Annotated[str, AfterValidator(_one_line), Field(pattern=r"^[0-9a-fA-F]{4,64}$")] | None = None


class _Item(_Strict):
    name: Name
    tools: list[OneLine]
    deny: list[OneLine]
    augmentations: list[OneLine]
    categories: list[OneLine]
    detail: OneLine


class _Message(_Strict):
    sender: OneLine
    recipient: OneLine
    content: str
    visible_to: list[OneLine] | None = None


class _Column(_Strict):
    kind: OneLine


class _Value(_Strict):
    name: OneLine
    path: OneLine
    formats: list[OneLine]


class _Constraint(_Strict):
    table: OneLine
    kind: Literal["snapshot", "addition", "removal", "update", "fill"]
    reference: int | None = None
    rows: list[dict[str, Any]]
    columns: dict[str, _Column]
    fill_to: OneLine | None = None
    values: list[_Value] = Field(default_factory=list)


class _Event(_Strict):
    constraints: list[_Constraint]
    guarded_tables: list[OneLine]


class _Events(_Strict):
    events: list[_Event]
    edges: list[Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=2, max_length=2)]]


class _Detail(_Strict):
    max_messages: Annotated[int, Field(ge=1, le=1000)]
    messages: list[_Message]
    tables: dict[str, list[dict[str, Any]]]
    milestones: _Events
    minefields: _Events


class _Output(_Strict):
    source: _Source
    now: OneLine
    timezone: OneLine | None = None
    items: Annotated[list[_Item], Field(min_length=1)]
    details: dict[str, _Detail]


def _location(parts: tuple[Any, ...]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f"{'.' if text else ''}{part}"
    return text or "(top level)"


def _non_finite(value: Any, where: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """Where `value` holds a NaN or an infinity (JSON from Python may spell them), or None."""
    stack = [(value, where)]
    while stack:
        current, here = stack.pop()
        if isinstance(current, float) and not math.isfinite(current):
            return here
        if isinstance(current, dict):
            stack.extend((item, (*here, key)) for key, item in current.items())
        elif isinstance(current, list):
            stack.extend((item, (*here, position)) for position, item in enumerate(current))
    return None


def _check_clock(data: dict[str, Any]) -> None:
    try:
        datetime.fromisoformat(data["now"])
    except ValueError:
        raise ReaderOutputError(f"the reader's output: field now: {data['now'][:60]!r} is not an ISO date and "
                                "time") from None
    zone = data.get("timezone")
    if zone is not None:
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ReaderOutputError(f"the reader's output: field timezone: {zone[:60]!r} is not a known time "
                                    "zone (an IANA name such as America/Los_Angeles)") from None


def _check_references(data: dict[str, Any]) -> None:
    for position, item in enumerate(data["items"]):
        if item["detail"] not in data["details"]:
            raise ReaderOutputError(f"the reader's output: field items[{position}].detail: {item['detail'][:40]!r} "
                                    "names no entry of details")
    for key, detail in data["details"].items():
        for kind in ("milestones", "minefields"):
            count = len(detail[kind]["events"])
            for number, edge in enumerate(detail[kind]["edges"]):
                if max(edge) >= count:
                    raise ReaderOutputError(f"the reader's output: field details.{key}.{kind}.edges[{number}]: "
                                            f"{edge} names a milestone past the {count} there are")
            for number, event in enumerate(detail[kind]["events"]):
                for index, constraint in enumerate(event["constraints"]):
                    reference = constraint.get("reference")
                    if reference is not None and not -1 <= reference < count:
                        raise ReaderOutputError(
                            f"the reader's output: field details.{key}.{kind}.events[{number}].constraints[{index}]"
                            f".reference: {reference} names no milestone")


def check_reader_output(data: Any) -> dict[str, Any]:
    """`data` when the converter can trust every part of it; else ReaderOutputError (one line)."""
    try:
        _Output.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        raise ReaderOutputError(f"the reader's output: field {_location(first['loc'])}: {message}") from None
    where = _non_finite(data)
    if where is not None:
        raise ReaderOutputError(f"the reader's output: field {_location(where)}: not a finite number")
    _check_clock(data)
    _check_references(data)
    return data
