"""Declaring a tool: a decorator turns a typed, Google-docstring function into a tool.

A tool's first parameter is the `World` it acts on; it is supplied by the execution environment and
never appears in a schema. Everything an agent sees (name, description, parameters and their JSON
types) is derived from the signature and docstring, so the code is the single source of truth.

The tool modules import this module; `tools/registry.py` imports them (through `tools/catalog.py`)
to list every tool, so this module never imports the registry.
"""

from __future__ import annotations

import functools
import inspect
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import docstring_parser

from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.tables import Table


class NotGiven:
    """Sentinel default: "argument not supplied", distinct from an explicit null."""

    _instance: NotGiven | None = None

    def __new__(cls) -> NotGiven:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __bool__(self) -> bool:
        return False


NOT_GIVEN = NotGiven()

_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def value_hint(hint: Any) -> Any:
    """The type a caller must pass: `X | NotGiven` → X (`None` stays allowed when present)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [member for member in typing.get_args(hint) if member is not NotGiven]
        if len(members) == 1:
            return members[0]
        return typing.Union[tuple(members)]  # noqa: UP007 - built from a runtime list
    return hint


def json_type(hint: Any) -> dict[str, Any]:
    """A compact JSON-schema type for an annotation (nullable unions collapse to their value type)."""
    hint = value_hint(hint)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = [member for member in typing.get_args(hint) if member is not type(None)]
        if set(members) == {int, float}:
            return {"type": "number"}
        return json_type(members[0])
    if origin is typing.Literal:
        values = list(typing.get_args(hint))
        return {**json_type(type(values[0])), "enum": values}
    if origin in (list, tuple):
        args = typing.get_args(hint)
        return {"type": "array", "items": json_type(args[0])} if args else {"type": "array"}
    if origin is dict or hint is dict:
        return {"type": "object"}
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    raise TypeError(f"tool parameters must be JSON-representable, got {hint!r}")


@dataclass(frozen=True)
class Parameter:
    """One agent-visible parameter of a tool."""

    name: str
    hint: Any
    description: str
    required: bool
    default: Any = NOT_GIVEN

    def schema(self) -> dict[str, Any]:
        return {**json_type(self.hint), "description": self.description}


@dataclass(frozen=True)
class ToolSpec:
    """A registered tool: the function plus everything needed to offer, check and score it.

    `action` marks tools with side effects on the world (ToolTalk's action tools); `reads` and
    `writes` declare the tables touched, which is how parallel calls are checked for order dependence.
    """

    name: str
    function: Callable[..., Any]
    domain: str
    action: bool
    reads: frozenset[Table]
    writes: frozenset[Table]
    visible_to: Role
    description: str
    parameters: tuple[Parameter, ...]
    returns: str = ""

    def parameter(self, name: str) -> Parameter | None:
        return next((parameter for parameter in self.parameters if parameter.name == name), None)

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments object: a new dict each time (scramblers and callers may edit it)."""
        return json.loads(self._schema_json)

    @functools.cached_property
    def _schema_json(self) -> str:
        """The schema built once from the type hints (every item offers the same tools again)."""
        return json.dumps({
            "type": "object",
            "properties": {parameter.name: parameter.schema() for parameter in self.parameters},
            "required": [parameter.name for parameter in self.parameters if parameter.required],
        })


DECLARED: dict[str, ToolSpec] = {}
"""Every tool declared so far, in registration order (`registry.declaration_order` ranks by it)."""


def tool(
    *,
    domain: str,
    action: bool = False,
    reads: tuple[Table, ...] = (),
    writes: tuple[Table, ...] = (),
    visible_to: Role = Role.AGENT,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function as a tool. The function stays a plain callable (first argument: world)."""

    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        spec = _build_spec(function, domain, action, reads, writes, visible_to)
        if spec.name in DECLARED and DECLARED[spec.name].function is not function:
            raise ValueError(f"tool '{spec.name}' is registered twice")
        DECLARED[spec.name] = spec
        return function

    return register


def _build_spec(
    function: Callable[..., Any],
    domain: str,
    action: bool,
    reads: tuple[Table, ...],
    writes: tuple[Table, ...],
    visible_to: Role,
) -> ToolSpec:
    signature = inspect.signature(function)
    hints = typing.get_type_hints(function)
    doc = docstring_parser.parse(inspect.getdoc(function) or "")
    arg_docs = {param.arg_name: " ".join((param.description or "").split()) for param in doc.params}
    described = " ".join(part for part in (doc.short_description, doc.long_description) if part)
    parameters = []
    for position, (name, parameter) in enumerate(signature.parameters.items()):
        if position == 0:
            continue  # the world
        if name not in arg_docs:
            raise ValueError(f"tool '{function.__name__}': parameter '{name}' lacks an Args: description")
        required = parameter.default is inspect.Parameter.empty
        default = NOT_GIVEN if required else parameter.default
        parameters.append(Parameter(name, hints[name], arg_docs[name], required, default))
    return ToolSpec(
        name=function.__name__,
        function=function,
        domain=domain,
        action=action,
        reads=frozenset(reads),
        writes=frozenset(writes),
        visible_to=visible_to,
        description=" ".join(described.split()),
        parameters=tuple(parameters),
        returns=" ".join(((doc.returns and doc.returns.description) or "").split()),
    )

