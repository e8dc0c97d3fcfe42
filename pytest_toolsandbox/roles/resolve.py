"""Agents and user simulators from a spec string, as given to `--agent` / `--user`.

A spec is a built-in name (`reference`, `unhelpful`, `human`; `scripted`, `human`), a model (`claude`,
`gpt-4o`, `anthropic:<model id>`, `openai:<model id>`), `replay:PATH` (a trajectory file,
or a report directory holding one trajectory per item), an entry point name (groups
`pytest_toolsandbox.agents` / `pytest_toolsandbox.users`) or `module:Class`. Resolution happens once
per run; the returned factory builds a fresh role per item, passing the scenario to classes that ask
for a `scenario` argument.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from importlib import import_module, metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pytest_toolsandbox.roles.model_spec import ModelOptions
    from pytest_toolsandbox.roles.scripted import ReplayAgent
    from pytest_toolsandbox.scenario.models import Scenario

RoleKind = Literal["agent", "user"]
RoleFactory = Callable[["Scenario", str], Any]
"""Builds a role for (scenario, item id)."""


def _builtin(module: str, name: str, with_scenario: bool) -> RoleFactory:
    """A built-in role class, imported when the first role is built: resolving `--agent` at configure
    time must not load the scenario and scoring stack (a run without scenarios pays nothing)."""

    def make(scenario: Scenario, _: str) -> Any:
        role = getattr(import_module(f"pytest_toolsandbox.roles.{module}"), name)
        return role(scenario) if with_scenario else role()

    return make

ENTRY_POINT_GROUPS: dict[RoleKind, str] = {"agent": "pytest_toolsandbox.agents", "user": "pytest_toolsandbox.users"}

BUILTIN: dict[RoleKind, dict[str, RoleFactory]] = {
    "agent": {"reference": _builtin("scripted", "ReferenceAgent", with_scenario=True),
              "unhelpful": _builtin("scripted", "UnhelpfulAgent", with_scenario=False),
              "human": _builtin("human", "HumanAgent", with_scenario=False)},
    "user": {"scripted": _builtin("scripted", "ScriptedUser", with_scenario=True),
             "reference-history": _builtin("scripted", "ScriptedUser", with_scenario=True),  # off-policy
             "human": _builtin("human", "HumanUser", with_scenario=False)},
}


class RoleSpecError(ValueError):
    """A spec that names no loadable role, or a replay with nothing recorded for an item."""


def _replay_factory(location: str, trajectory_file: Callable[[Path, Scenario, str], Path]) -> RoleFactory:
    root = Path(location)
    if not root.exists():
        raise RoleSpecError(f"--agent replay:{location}: no such file or directory")

    def make(scenario: Scenario, item_id: str) -> ReplayAgent:
        from pytest_toolsandbox.roles.scripted import ReplayAgent
        from pytest_toolsandbox.world.trajectory import Trajectory

        path = root if root.is_file() else trajectory_file(root, scenario, item_id)
        if not path.is_file():
            raise RoleSpecError(f"replay: no recorded trajectory {path} for {scenario.path} [{item_id}]")
        return ReplayAgent(Trajectory.load(path).messages)

    return make


def unknown_role(spec: str, kind: RoleKind) -> str:
    """The error for a spec that names nothing: what exists (roles, model aliases, the provider:model
    form, module:Class) and the closest names, since most unknown specs are typos (`gpt4o`)."""
    from difflib import get_close_matches

    from pytest_toolsandbox.roles.model_spec import ALIAS_NAMES, PROVIDERS

    roles = sorted({*BUILTIN[kind], *(ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUPS[kind]))})
    close = get_close_matches(spec.lower(), [*roles, *ALIAS_NAMES], n=3, cutoff=0.6)
    hint = f" — did you mean {' or '.join(close)}?" if close else "."
    return (f"--{kind} {spec}: unknown {kind}{hint} Use a built-in {kind} ({', '.join(roles)}), a model alias "
            f"({', '.join(ALIAS_NAMES)}), any model as {' or '.join(f'{p}:MODEL_ID' for p in PROVIDERS)}, "
            "or module:Class")


def _load_object(spec: str, kind: RoleKind) -> Any:
    group = ENTRY_POINT_GROUPS[kind]
    for entry_point in metadata.entry_points(group=group):
        if entry_point.name == spec:
            return entry_point.load()
    if ":" not in spec:
        raise RoleSpecError(unknown_role(spec, kind))
    module_name, _, attribute = spec.partition(":")
    try:
        target: Any = _import(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        raise RoleSpecError(f"--{kind} {spec}: cannot load it: {error}; the module must be importable "
                            "(installed, or on the pytest `pythonpath` ini key)") from None
    except Exception as error:  # the module itself raised while importing
        raise RoleSpecError(f"--{kind} {spec}: importing {module_name} failed: "
                            f"{type(error).__name__}: {error}") from None
    return target


def _import(module_name: str) -> Any:
    """Import a module, also from the current directory: `python -m pytest` puts it on sys.path and
    plain `pytest` does not, so `--agent mymod:Class` next to the tests would work with one and not the
    other (and never in xdist workers). The directory is added only when it holds that module."""
    try:
        return import_module(module_name)
    except ModuleNotFoundError as error:
        top = module_name.partition(".")[0]
        here = Path.cwd()
        if error.name != top or str(here) in sys.path or not ((here / f"{top}.py").is_file()
                                                                 or (here / top / "__init__.py").is_file()):
            raise
        sys.path.insert(0, str(here))
        return import_module(module_name)


def _model_factory(spec: str, kind: RoleKind, options: ModelOptions | None) -> RoleFactory | None:
    """Models (`claude`, `gpt-4o`, `anthropic:<id>`, `openai:<id>`); None when the spec is no model."""
    from pytest_toolsandbox.roles.model_spec import ModelOptions, parse_model_spec

    try:
        model = parse_model_spec(spec)
    except ValueError as error:
        raise RoleSpecError(f"--{kind} {error}") from None
    if model is None:
        return None
    model = model.with_options((options or ModelOptions()).for_spec(spec))

    def make(scenario: Scenario, _: str) -> Any:
        from pytest_toolsandbox.roles.model_client import ModelClient

        if kind == "agent":
            from pytest_toolsandbox.roles.llm_agent import LLMAgent

            return LLMAgent(ModelClient(model), name=spec)
        from pytest_toolsandbox.roles.llm_user import LLMUser

        return LLMUser(ModelClient(model), scenario, name=spec)

    return make


def role_factory(spec: str, kind: RoleKind,
                 trajectory_file: Callable[[Path, Scenario, str], Path] | None = None,
                 model_options: ModelOptions | None = None) -> RoleFactory:
    """The factory for a spec; `trajectory_file` locates an item's recording for `replay:DIR`,
    `model_options` are the request settings of model specs."""
    if spec in BUILTIN[kind]:
        return BUILTIN[kind][spec]
    model = _model_factory(spec, kind, model_options)
    if model is not None:
        return model
    if kind == "agent" and spec.startswith("replay:"):
        if trajectory_file is None:
            raise RoleSpecError("replay: needs a way to locate recorded trajectories")
        return _replay_factory(spec.removeprefix("replay:"), trajectory_file)
    target = _load_object(spec, kind)
    if not callable(target):
        raise RoleSpecError(f"--{kind} {spec}: {target!r} is not a class or factory")
    try:
        wants_scenario = "scenario" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        wants_scenario = False
    return lambda scenario, _: target(scenario=scenario) if wants_scenario else target()
