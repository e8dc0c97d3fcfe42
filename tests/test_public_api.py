"""The public import surface: `pytest_toolsandbox.__all__` is a promise to everyone who writes an agent,
a user simulator or a script against the package, so it changes only on purpose (with the CHANGELOG)."""

from __future__ import annotations

import json
import subprocess
import sys
import typing

import pytest

import pytest_toolsandbox

PUBLIC = ["Agent", "Evaluation", "Message", "OfferedTool", "ReferenceAgent", "Role", "Scenario", "ScenarioError",
          "ScriptedUser", "ToolCall", "ToolTrace", "Trajectory", "Turn", "User", "evaluate", "find_scenarios",
          "load_scenario", "run_episode"]


def test_the_public_names_are_exactly_these() -> None:
    assert pytest_toolsandbox.__all__ == PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_each_public_name_resolves_to_the_object_of_its_home_module(name: str) -> None:
    value = getattr(pytest_toolsandbox, name)
    assert value.__name__ == name and value.__module__.startswith("pytest_toolsandbox.")
    assert getattr(sys.modules[value.__module__], name) is value


def test_star_import_gives_every_public_name() -> None:
    namespace: dict[str, object] = {}
    exec("from pytest_toolsandbox import *", namespace)
    assert sorted(set(namespace) - {"__builtins__"}) == sorted(PUBLIC)


def test_the_protocols_are_structural_and_checkable_at_runtime() -> None:
    from pytest_toolsandbox import Agent, Turn, User

    class Quiet:
        name = "quiet"

        def respond(self, messages: object, tools: object) -> Turn:
            return Turn(text="")

    class Nameless:
        def respond(self, messages: object, tools: object) -> Turn:
            return Turn(text="")

    assert isinstance(Quiet(), Agent) and isinstance(Quiet(), User)
    assert not isinstance(Nameless(), Agent) and not isinstance(Nameless(), User)
    assert typing.get_type_hints(Agent.respond)["return"] is Turn


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="'pytest_toolsandbox' has no attribute 'Nope'"):
        pytest_toolsandbox.Nope  # noqa: B018


def test_the_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    assert pytest_toolsandbox.__version__ == version("pytest-toolsandbox")
    assert "__version__" in dir(pytest_toolsandbox)


def test_importing_the_package_loads_none_of_the_public_modules_until_a_name_is_used() -> None:
    """pytest imports the package for every run; a name's module loads on its first use only."""
    script = ("import sys, json, pytest_toolsandbox as p; before = sorted(sys.modules); p.Turn; "
              "print(json.dumps([before, sorted(sys.modules)]))")
    before, after = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                              check=True).stdout)
    ours = [name for name in before if name.startswith("pytest_toolsandbox.")]
    assert ours == [] and "pydantic" not in before
    assert "pytest_toolsandbox.roles.base" in after
