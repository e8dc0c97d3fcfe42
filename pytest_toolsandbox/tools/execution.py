"""The execution environment: runs tool calls against the world and turns every outcome into a reply.

A call is a tool name plus raw JSON text. It is resolved against the tools offered to the caller,
parsed with `json.loads`, checked against the tool's signature (names, required arguments, strict
types through pydantic) and only then passed to the Python function. Nothing a model produced is ever
compiled or evaluated. Every failure — malformed JSON, unknown tool, wrong argument, a tool raising —
becomes a reply the caller can act on; none escapes into the episode.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pytest_toolsandbox.basics.jsondata import JsonDataError, loads
from pytest_toolsandbox.tools.errors import (
    ArgumentNameError,
    ArgumentTypeError,
    CallFeedback,
    InvalidFormatError,
    UnknownToolError,
    describe_exception,
)
from pytest_toolsandbox.tools.registry import NOT_GIVEN, ToolSpec, json_type, value_hint
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, Role, ToolCall, ToolTrace
from pytest_toolsandbox.world.world import World

_PREVIEW = 200


@dataclass(frozen=True)
class Outcome:
    """The result of one call, before it is posted as a reply."""

    content: str
    trace: ToolTrace | None = None
    exception: str | None = None
    error_code: str | None = None


@cache
def _adapter(hint: Any) -> TypeAdapter:
    return TypeAdapter(value_hint(hint))


def render_result(result: Any) -> str:
    """A tool result as the caller reads it: JSON with sorted keys (deterministic)."""
    return json.dumps(result, ensure_ascii=False, sort_keys=True, default=str)


def _finite(value: Any) -> bool:
    """No NaN or infinity anywhere in a result: strict JSON has no spelling for them, so the trajectory
    would store null and a re-scored trajectory would differ from the live one."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(item) for item in value)
    return True


def _preview(text: str) -> str:
    return text if len(text) <= _PREVIEW else text[:_PREVIEW] + "…"


def _signature_help(spec: ToolSpec, name: str) -> str:
    parts = []
    for parameter in spec.parameters:
        kind = json_type(parameter.hint).get("type", "any")
        need = "required" if parameter.required else "optional"
        parts.append(f"{parameter.name} ({kind}, {need}): {parameter.description}")
    return f"{name} expects " + ("; ".join(parts) if parts else "no arguments") + "."


def _null_means_not_given(spec: ToolSpec, name: str) -> bool:
    """An optional parameter whose type does not accept null (a null where the type allows it, such
    as modify_reminder's latitude, keeps its documented meaning)."""
    parameter = spec.parameter(name)
    if parameter is None or parameter.required:
        return False
    try:
        _adapter(parameter.hint).validate_python(None, strict=True)
    except ValidationError:
        return True
    return False


class Toolbox:
    """The tools one role may call, keyed by the name that role sees."""

    def __init__(self, offered: Sequence[OfferedTool], registry: Mapping[str, ToolSpec]) -> None:
        self.offered = list(offered)
        self.specs = {tool.name: registry[tool.tool] for tool in offered}

    def resolve(self, name: str) -> ToolSpec:
        if not isinstance(name, str) or name not in self.specs:
            available = ", ".join(sorted(self.specs)) or "none"
            raise UnknownToolError(f"There is no tool named {_preview(repr(name))}. Available tools: {available}.")
        return self.specs[name]

    def bind(self, call: ToolCall) -> tuple[ToolSpec, dict[str, Any]]:
        """Validate a call; return the tool and the keyword arguments to pass (without defaults).

        A call written as malformed text is answered with its format error (and, when it also names no
        offered tool, the list of tools), never run. A null for an optional argument whose type has no
        null means "not given": models write out every optional argument that way."""
        if call.format_error is not None:
            if call.name not in self.specs:
                available = ", ".join(sorted(self.specs)) or "none"
                raise InvalidFormatError(f"{call.format_error} Also, there is no tool named "
                                         f"{_preview(repr(call.name))}. Available tools: {available}.")
            raise InvalidFormatError(call.format_error)
        spec = self.resolve(call.name)
        try:
            arguments = loads(call.arguments) if call.arguments.strip() else {}
        except JsonDataError as error:
            raise InvalidFormatError(
                f"The arguments of {call.name} are not valid JSON ({error}); send a JSON object such as "
                f'{{"argument": value}}. Received: {_preview(call.arguments)}') from None
        if not isinstance(arguments, dict):
            raise InvalidFormatError(
                f"The arguments of {call.name} must be a JSON object, not {type(arguments).__name__}. "
                f"Received: {_preview(call.arguments)}")
        arguments = {name: value for name, value in arguments.items()
                     if not (value is None and _null_means_not_given(spec, name))}
        unknown = [name for name in arguments if spec.parameter(name) is None]
        if unknown:
            raise ArgumentNameError(
                f"{call.name} has no argument named {_preview(', '.join(map(repr, unknown)))}. "
                + _signature_help(spec, call.name))
        missing = [p.name for p in spec.parameters if p.required and p.name not in arguments]
        if missing:
            raise ArgumentNameError(
                f"{call.name} is missing required argument(s) {', '.join(map(repr, missing))}. "
                + _signature_help(spec, call.name))
        bound = {}
        for name, value in arguments.items():
            parameter = spec.parameter(name)
            assert parameter is not None
            try:
                bound[name] = _adapter(parameter.hint).validate_python(value, strict=True)
            except (ValidationError, RecursionError):
                expected = json_type(parameter.hint).get("type", "value")
                raise ArgumentTypeError(
                    f"Argument '{name}' of {call.name} must be of type {expected}, got "
                    f"{type(value).__name__} {_preview(json.dumps(value, default=str))}. "
                    + _signature_help(spec, call.name)) from None
            if isinstance(bound[name], float) and not math.isfinite(bound[name]):
                raise ArgumentTypeError(f"Argument '{name}' of {call.name} must be a finite number.")
        return spec, bound


def run_call(world: World, toolbox: Toolbox, call: ToolCall) -> Outcome:
    """Execute one call; every failure becomes an Outcome with an exception text."""
    try:
        spec, arguments = toolbox.bind(call)
    except CallFeedback as feedback:
        text = describe_exception(feedback)
        return Outcome(content=text, exception=text, error_code=feedback.code)
    try:
        result = spec.function(world, **arguments)
    except Exception as error:  # a tool failure is information for the agent, not a crash
        text = describe_exception(error)
        return Outcome(content=text, exception=text)
    if not _finite(result):  # e.g. unit_conversion(1e308, "km", "nm"); no tool that writes returns floats
        text = describe_exception(OverflowError(f"{spec.name} produced a number too large to represent"))
        return Outcome(content=text, exception=text)
    recorded = {
        parameter.name: arguments.get(parameter.name, parameter.default)
        for parameter in spec.parameters
        if arguments.get(parameter.name, parameter.default) is not NOT_GIVEN
    }
    trace = ToolTrace(tool=spec.name, arguments=recorded, result=result)
    return Outcome(content=render_result(result), trace=trace)


def _conflicts(first: ToolSpec | None, second: ToolSpec | None) -> bool:
    if first is None or second is None:
        return False
    return bool(first.writes & (second.reads | second.writes) or second.writes & first.reads)


MAX_RACE_ORDERS = 32
"""Reordered batches tried by the race check at most (besides the given order). Each try re-runs the
whole batch on a forked world, so without a bound the check grows with the cube of the batch size."""


def candidate_orders(specs: Sequence[ToolSpec | None]) -> list[list[int]]:
    """Orders worth trying for a batch of parallel calls.

    Calls whose declared tables do not overlap commute, so only conflicting pairs matter: besides
    the given order, each conflicting pair (i before j) is tried with j moved just before i. That is
    at most 1 + n(n-1)/2 executions instead of n!, and never more than 1 + MAX_RACE_ORDERS: pairs are
    taken in call order (earliest first) until the bound is reached.
    """
    count = len(specs)
    orders = [list(range(count))]
    for i in range(count):
        for j in range(i + 1, count):
            if len(orders) > MAX_RACE_ORDERS:
                return orders
            if _conflicts(specs[i], specs[j]):
                order = [k for k in range(count) if k != j]
                order.insert(order.index(i), j)
                orders.append(order)
    return orders


class ExecutionEnvironment:
    """The role that answers tool calls. It reads the trailing calls on the bus and posts replies."""

    def __init__(self, toolboxes: Mapping[Role, Toolbox]) -> None:
        self.toolboxes = toolboxes

    def respond(self, world: World) -> None:
        pending = self._pending_calls(world)
        if not pending:
            return
        caller = pending[0].sender
        toolbox = self.toolboxes[caller]
        # A message without a call (only a hand-built bus has one) is answered like an unknown tool,
        # so every pending message gets its reply and the episode moves on.
        calls = [message.tool_call or ToolCall(id=f"missing_{message.index}", name="") for message in pending]
        if len(calls) == 1:
            self._execute(world, toolbox, calls, caller)
            return
        specs = [toolbox.specs.get(call.name) if isinstance(call.name, str) else None for call in calls]
        orders = candidate_orders(specs)
        if len(orders) == 1:
            self._execute(world, toolbox, calls, caller)
            return
        # Order-dependent batch: "race conditions always happen if detected" — if some order fails,
        # that order is the one that happens. Failures that happen in every order (a malformed call, a
        # call that is wrong on its own) must not hide a race, so an order counts as failing when more
        # calls fail in it than in the given order.
        def failures(order: list[int]) -> int:
            outcomes = self._execute(world.fork(), toolbox, [calls[k] for k in order], caller)
            return sum(outcome.exception is not None for outcome in outcomes)

        baseline = failures(orders[0])
        chosen = next((order for order in orders[1:] if failures(order) > baseline), orders[0])
        self._execute(world, toolbox, [calls[k] for k in chosen], caller)

    @staticmethod
    def _pending_calls(world: World) -> list[Message]:
        pending: list[Message] = []
        for message in reversed(world.messages):
            if message.recipient is not Role.EXECUTION_ENVIRONMENT:
                break
            pending.append(message)
        return list(reversed(pending))

    @staticmethod
    def _execute(world: World, toolbox: Toolbox, calls: list[ToolCall], caller: Role) -> list[Outcome]:
        outcomes = []
        for call in calls:
            outcome = run_call(world, toolbox, call)
            world.post(sender=Role.EXECUTION_ENVIRONMENT, recipient=caller, content=outcome.content,
                       tool_call_id=call.id, tool_name=call.name, tool_trace=outcome.trace,
                       exception=outcome.exception, error_code=outcome.error_code)
            outcomes.append(outcome)
        return outcomes
