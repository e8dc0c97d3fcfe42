"""Loading scenario files with errors that name the file, the field and what is allowed."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pytest_toolsandbox.scenario.errors import ScenarioError
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.reference import parse_step
from pytest_toolsandbox.tools.registry import ToolSpec, all_tools


def _location(loc: Iterable[Any]) -> str:
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        elif str(part) in {"function-after", "function-before"} or "[" in str(part):
            continue
        else:
            parts.append(("." if parts else "") + str(part))
    return "".join(parts) or "(top level)"


def _suggest(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def _without_final_newlines(value: Any) -> Any:
    """Folded (`>`) and literal (`|`) YAML blocks end with a newline nobody means as text."""
    if isinstance(value, str):
        return value.rstrip("\n")
    if isinstance(value, dict):
        return {key: _without_final_newlines(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_final_newlines(item) for item in value]
    return value


def _expand_tool_groups(value: Any, field: str, registry: Mapping[str, ToolSpec], path: Path) -> Any:
    """`all` and domain names (`contact`, `messaging`, …) become the agent's tools of that group, in
    declaration order; tool names stay as written; repeats are dropped."""
    from pytest_toolsandbox.tools.registry import declaration_order
    from pytest_toolsandbox.world.messages import Role

    entries = [value] if isinstance(value, str) else value
    if not isinstance(entries, list):
        return value  # the model reports the type error
    order = declaration_order(registry)
    agent_tools = sorted((name for name, spec in registry.items() if spec.visible_to is Role.AGENT),
                         key=order.__getitem__)
    domains = {registry[name].domain for name in agent_tools}
    expanded: list[Any] = []
    for position, entry in enumerate(entries):
        if entry == "all":
            expanded += agent_tools
        elif isinstance(entry, str) and entry not in registry and entry in domains:
            expanded += [name for name in agent_tools if registry[name].domain == entry]
        elif isinstance(entry, str) and entry in registry and registry[entry].visible_to is not Role.AGENT:
            raise ScenarioError(f"{path}: field {field}[{position}]: {entry!r} is the simulated user's tool, "
                                "never offered to the agent; leave it out")
        elif isinstance(entry, str) and entry not in registry:
            raise ScenarioError(f"{path}: field {field}[{position}]: {_unknown_tool(entry, registry)}")
        elif not isinstance(entry, str):
            raise ScenarioError(f"{path}: field {field}[{position}]: {type(entry).__name__} is not a tool name; "
                                "write the name as text")
        else:
            expanded.append(entry)
    return list(dict.fromkeys(expanded))


def _unknown_tool(name: str, registry: Mapping[str, ToolSpec], groups: bool = True) -> str:
    domains = sorted({spec.domain for spec in registry.values()} - {"user"})
    allowed = f"use a tool name, a domain ({', '.join(domains)}) or all; " if groups else ""
    return (f"unknown tool {name!r}{_suggest(name, registry)}; {allowed}"
            "run `python -m pytest_toolsandbox tools` for the list")


def _check_tool_names(scenario: Scenario, registry: Mapping[str, ToolSpec], path: Path) -> None:
    def check(name: str, field: str) -> None:
        if name not in registry:
            raise ScenarioError(f"{path}: field {field}: {_unknown_tool(name, registry, groups=False)}")

    # tools: and deny: were checked while their groups were expanded (positions as written)
    for count, names in scenario.distraction_tools.items():
        for position, name in enumerate(names):
            check(name, f"distraction_tools.{count}[{position}]")
    for name in scenario.scrambled_names:
        check(name, f"scrambled_names.{name}")
    if scenario.scrambled_names:
        needed = (set(scenario.tools) | set(scenario.distraction_tools.get(3, []))) - set(scenario.deny)
        for name in sorted(needed - set(scenario.scrambled_names)):
            raise ScenarioError(f"{path}: field scrambled_names: no name for {name!r}, which the tool_name_scrambled "
                                "variant offers; give every offered tool a name")
    for kind, events in (("milestones", scenario.milestones), ("minefields", scenario.minefields)):
        for event_name, event in events.items():
            for tool_name, _ in event.tool_call_alternatives():
                check(tool_name, f"{kind}.{event_name}.tool_call")
            for tool_name, _ in event.attempted_call_alternatives():
                check(tool_name, f"{kind}.{event_name}.attempted_call")
    for position, step in enumerate(scenario.reference):
        for call in step.calls:
            check(call.tool, f"reference[{position}]")


def _check_reference_calls(scenario: Scenario, registry: Mapping[str, ToolSpec], path: Path) -> None:
    """Every reference call must be one the execution environment accepts (argument names and types,
    after time expressions are resolved): a typo or an unquoted phone number fails here, not mid-run."""
    from pytest_toolsandbox.scenario.timeexpr import resolve_times
    from pytest_toolsandbox.scenario.world_builder import scenario_clock
    from pytest_toolsandbox.tools.errors import CallFeedback
    from pytest_toolsandbox.tools.execution import Toolbox
    from pytest_toolsandbox.tools.schemas import OfferedTool
    from pytest_toolsandbox.world.messages import ToolCall

    toolbox = Toolbox([OfferedTool.from_spec(spec) for spec in registry.values()], registry)
    clock = scenario_clock(scenario)
    offered = set(scenario.tools) - set(scenario.deny)
    if scenario.solvable_in:  # the reference plays only there, so it may use their distraction tools
        from pytest_toolsandbox.tools.augment import tools_for
        from pytest_toolsandbox.world.messages import Role

        offered = {tool.tool for variant in scenario.solvable_in
                   for tool in tools_for(Role.AGENT, scenario, registry, variant)}
    for position, step in enumerate(scenario.reference):
        for call in step.calls:
            if call.tool not in offered:
                where = f" in {', '.join(scenario.solvable_in)}" if scenario.solvable_in else ""
                raise ScenarioError(f"{path}: field reference[{position}]: the agent is not offered {call.tool!r}"
                                    f"{where}; add it to tools: (and keep it out of deny:)")
            try:
                arguments = json.dumps(resolve_times(call.arguments, clock), ensure_ascii=False)
                toolbox.bind(ToolCall(id="reference", name=call.tool, arguments=arguments))
            except (CallFeedback, ValueError) as error:
                hint = ("; quote phone numbers and other text in YAML" if "must be of type string, got int"
                        in str(error) else "")
                raise ScenarioError(f"{path}: field reference[{position}]: {error}{hint}") from None


def _check_buildable(scenario: Scenario, path: Path) -> None:
    """Fail at load time, not mid-run: the world patch must build and every milestone must compile."""
    from pytest_toolsandbox.evaluation.constraints import compile_events
    from pytest_toolsandbox.scenario.world_builder import build_world, scenario_clock

    build_world(scenario)  # raises ScenarioError naming the world field
    clock = scenario_clock(scenario)
    for kind in ("milestones", "minefields"):
        try:
            compile_events(getattr(scenario, kind), clock, kind)
        except ValueError as error:
            raise ScenarioError(f"{path}: field {error}") from None


def parse_scenario(data: Any, path: Path, registry: Mapping[str, ToolSpec] | None = None) -> Scenario:
    """Validate already-parsed YAML data as the scenario stored at `path`."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario file must be a YAML mapping (name:, categories:, user:, …)")
    registry = registry if registry is not None else all_tools()
    data = {"name": path.stem, **_without_final_newlines(data), "path": str(path)}
    for field in ("tools", "deny"):
        if field in data:
            data[field] = _expand_tool_groups(data[field], field, registry, path)
    if isinstance(data.get("reference"), list):  # parsed here so an error names the step: reference[3]
        steps = []
        for position, item in enumerate(data["reference"]):
            try:
                steps.append(parse_step(item))
            except ValueError as error:
                raise ScenarioError(f"{path}: field reference[{position}]: {error}") from None
        data["reference"] = steps
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as error:
        problems = []
        for issue in error.errors():
            message = issue["msg"].removeprefix("Value error, ")
            if issue["type"] == "extra_forbidden":
                message = "unknown field; check the spelling (see docs/scenario-format.md)"
            location = _location(issue["loc"])
            if not issue["loc"] and message.startswith(("milestones.", "minefields.")):
                location, _, message = message.partition(": ")  # a cross-field check names its field
            problems.append(f"{path}: field {location}: {message}")
        raise ScenarioError("\n".join(problems)) from None
    _check_tool_names(scenario, registry, path)
    _check_reference_calls(scenario, registry, path)
    _check_buildable(scenario, path)
    return scenario


_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_WORDS_KEYS = frozenset({"facts", "accept", "reject"})
_STR_TAG = "tag:yaml.org,2002:str"
_TYPED_VALUES = frozenset({"yes", "number", "tolerance", "date"})


def _as_written(node: yaml.Node) -> None:
    """Scalars inside `facts` / `accept` / `reject` are words, not YAML 1.1 booleans or numbers: the
    fact `off` is the phrase "off" (not False) and `{phone: +12453344098}` keeps its plus sign. Only
    the values of `yes`, `number`, `tolerance` and `date` keep their type (`{yes: true}`, `{number: 5.63}`)."""
    if isinstance(node, yaml.ScalarNode):
        node.tag = _STR_TAG
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _as_written(item)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _as_written(key)
            typed = isinstance(key, yaml.ScalarNode) and key.value in _TYPED_VALUES
            if not typed or not isinstance(value, yaml.ScalarNode):
                _as_written(value)


class _ScenarioLoader(_BASE_LOADER):  # type: ignore[misc,valid-type]  # a base chosen at import (libyaml's or
    # PyYAML's own loader): mypy takes only a class name as a base
    """PyYAML's safe loader on libyaml when the wheel has it (the same documents, about 9x faster to
    parse, which is most of the cost of collecting a scenario file), reading fact words as written."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value in _WORDS_KEYS:
                _as_written(value)
        return super().construct_mapping(node, deep=deep)


_SAFE_LOADER = _ScenarioLoader


def read_yaml(text: str) -> Any:
    """Scenario YAML as data, the way scenario files are read (fact words as written)."""
    return yaml.load(text, Loader=_SAFE_LOADER)


MAX_YAML_VALUES = 100_000
"""Values a scenario file may hold once its aliases (`*name`) are expanded. The checks after parsing
walk the data as a tree, so a few nested aliases (the "billion laughs" file: 342 bytes) would make them
walk billions of values; the largest bundled scenario holds a few hundred."""


def _yaml_children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _expansion_problem(root: yaml.Node) -> str | None:
    """Why the composed document is refused (an alias inside its own anchor, or more than
    `MAX_YAML_VALUES` values once expanded), or None. Each node is sized once, however many aliases
    point to it, so the check is linear in the file, not in its expansion."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            sizes[key] = min(MAX_YAML_VALUES + 1, 1 + sum(sizes[id(child)] for child in _yaml_children(node)))
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            return "an alias refers to a value that contains it (recursive YAML)"
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _yaml_children(node) if id(child) not in sizes)
    if sizes[id(root)] > MAX_YAML_VALUES:
        return (f"its aliases (*name) expand to more than {MAX_YAML_VALUES:,} values; a scenario is small data, "
                "write the values out or use fewer nested aliases")
    return None


def _parse_yaml(text: str, path: Path) -> Any:
    """The document's data, after its node graph was checked for expansion (`_expansion_problem`)."""
    loader = _SAFE_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = _expansion_problem(node)
        if problem is not None:
            raise ScenarioError(f"{path}: {problem}")
        return loader.construct_document(node)
    finally:
        loader.dispose()


MAX_SCENARIO_BYTES = 1 << 20
"""Largest scenario file read (1 MiB). A scenario is small data (the largest bundled one is 3.5 KB); a
56 MB file took 13.6 s and 1.2 GB to parse before any check could refuse it."""


def _read_bounded(path: Path) -> str:
    """The file's text, refused by its size before it is parsed (a file that grows, or a device that
    never ends, is cut at the limit and refused too)."""
    from pytest_toolsandbox.basics.limits import size_text

    with path.open("rb") as stream:
        data = stream.read(MAX_SCENARIO_BYTES + 1)
    if len(data) > MAX_SCENARIO_BYTES:
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        shown = size_text(size) if size > MAX_SCENARIO_BYTES else f"more than {size_text(MAX_SCENARIO_BYTES)}"
        raise ScenarioError(f"{path}: the file is {shown}; a scenario file may hold at most "
                            f"{size_text(MAX_SCENARIO_BYTES)} (scenarios are small data: split it, or move bulk "
                            "data out of it)")
    return data.decode("utf-8")


def load_scenario(path: str | Path, registry: Mapping[str, ToolSpec] | None = None) -> Scenario:
    """Read and validate one scenario file."""
    path = Path(path)
    try:
        data = _parse_yaml(_read_bounded(path), path)
    except OSError as error:
        raise ScenarioError(f"{path}: cannot read the file: {error.strerror}") from None
    except (RecursionError, UnicodeDecodeError) as error:
        raise ScenarioError(f"{path}: not a readable scenario: "
                            f"{'YAML nested too deeply' if isinstance(error, RecursionError) else error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ScenarioError(f"{path}: invalid YAML{where}: {getattr(error, 'problem', error)}") from None
    _check_plain(data, path)
    return parse_scenario(data, path, registry)


def _check_plain(data: Any, path: Path) -> None:
    """YAML can spell values JSON cannot (`!!binary` bytes, `!!set` sets); a scenario is JSON-like data,
    so such values are refused here, with their field, instead of failing when a call is rendered."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, bytes | bytearray | set | frozenset):
            kind = "!!binary" if isinstance(value, bytes | bytearray) else "!!set"
            raise ScenarioError(f"{path}: field {where.lstrip('.') or '(top level)'}: YAML {kind} values are not "
                                "allowed; use a string or a list")
        if isinstance(value, dict):
            stack.extend((item, f"{where}.{key}") for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{position}]") for position, item in enumerate(value))


def find_scenarios(root: str | Path) -> list[Path]:
    """Scenario files under `root` in a stable order."""
    root = Path(root)
    if root.is_file():
        return [root]
    return sorted(path for pattern in ("*.yaml", "*.yml") for path in root.rglob(pattern))
