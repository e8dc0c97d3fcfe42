"""pytest-toolsandbox: stateful, conversational evaluation of tool-using agents as pytest tests.

The names in `__all__` are the public surface: what an agent or user simulator is given and returns,
the two role protocols, and the entry points that load scenarios, play an episode and score it. They
stay importable from here whatever module they live in, so code written against them survives the
package's reorganisations (docs/agents.md). Each is imported on first use: pytest imports this package
for every test run, and a run without scenarios must not pay for pydantic, polars or the scorer.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_toolsandbox.evaluation.result import Evaluation
    from pytest_toolsandbox.evaluation.score import evaluate
    from pytest_toolsandbox.roles.base import Agent, Turn, User
    from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
    from pytest_toolsandbox.running.episode import run_episode
    from pytest_toolsandbox.scenario.loader import ScenarioError, find_scenarios, load_scenario
    from pytest_toolsandbox.scenario.models import Scenario
    from pytest_toolsandbox.tools.schemas import OfferedTool
    from pytest_toolsandbox.world.messages import Message, Role, ToolCall, ToolTrace
    from pytest_toolsandbox.world.trajectory import Trajectory

_HOMES = {
    # what a role reads and answers
    "Message": "world.messages",
    "Role": "world.messages",
    "ToolCall": "world.messages",
    "ToolTrace": "world.messages",
    "OfferedTool": "tools.schemas",
    "Turn": "roles.base",
    # the role protocols, and the built-in roles a script can pair with its own
    "Agent": "roles.base",
    "User": "roles.base",
    "ReferenceAgent": "roles.scripted",
    "ScriptedUser": "roles.scripted",
    # scenarios, episodes and scores
    "Scenario": "scenario.models",
    "ScenarioError": "scenario.loader",
    "load_scenario": "scenario.loader",
    "find_scenarios": "scenario.loader",
    "run_episode": "running.episode",
    "Trajectory": "world.trajectory",
    "evaluate": "evaluation.score",
    "Evaluation": "evaluation.result",
}

__all__ = [
    "Agent",
    "Evaluation",
    "Message",
    "OfferedTool",
    "ReferenceAgent",
    "Role",
    "Scenario",
    "ScenarioError",
    "ScriptedUser",
    "ToolCall",
    "ToolTrace",
    "Trajectory",
    "Turn",
    "User",
    "evaluate",
    "find_scenarios",
    "load_scenario",
    "run_episode",
]


def __getattr__(name: str) -> Any:
    """Imports a public name's home module on first access (PEP 562), then caches the name here."""
    if name == "__version__":
        from importlib.metadata import version

        value: Any = version("pytest-toolsandbox")  # pyproject.toml is the one place it is written
    elif name in _HOMES:
        value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__, "__version__"])
