"""Scenario files as pytest items: the file is a module, its one test function `test_scenario` is
parametrized by (agent, variant, trial), and the test passes when the agent did the task.

Node ids are therefore `scenarios/<dir>/<file>.yaml::test_scenario[<variant>]`, and every pytest feature
that works on ordinary tests (fixtures of any scope, conftest overrides, -k, -m, --lf, --sw, --deselect,
xdist) works on scenarios.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolsandbox.basics.item_ids import agent_label
from pytest_toolsandbox.basics.vocabulary import REFERENCE_PROMPTS_FILE
from pytest_toolsandbox.options import Settings, display
from pytest_toolsandbox.running.configure import report_path, settings
from pytest_toolsandbox.running.errors import ScenarioFailed

if TYPE_CHECKING:
    from pytest_toolsandbox.evaluation.result import Evaluation
    from pytest_toolsandbox.roles.base import Agent, User
    from pytest_toolsandbox.running.ahead import AheadEpisode
    from pytest_toolsandbox.scenario.models import Scenario
    from pytest_toolsandbox.world.trajectory import Trajectory

TEST_NAME = "test_scenario"
PLUGIN_MODULE = "pytest_toolsandbox.plugin"
"""Where the plugin's fixtures are defined: a fixture of the same name defined elsewhere is an override."""
_SCENARIO_FOUND = pytest.StashKey[bool]()
"""Set when collection meets a scenario file: a run stopped during collection may be a scenario run."""
_AGENT_CHECKED = pytest.StashKey[bool]()


def is_scenario_id(nodeid: str) -> bool:
    path, _, rest = nodeid.partition("::")
    return path.endswith((".yaml", ".yml")) and rest.startswith(f"{TEST_NAME}[")


def scenario_found(config: pytest.Config) -> bool:
    """Whether collection met a scenario file in this process."""
    return config.stash.get(_SCENARIO_FOUND, False)


def imported_folder_unnamed(collection_path: Path, config: pytest.Config) -> bool:
    """A folder of imported reference-benchmark scenarios runs only when named (as a path argument or in
    `--scenarios`): a plain `pytest` keeps running the project's own suite after an import."""
    if not (collection_path / REFERENCE_PROMPTS_FILE).is_file():
        return False
    folder = collection_path.resolve()
    named = [Path(config.invocation_params.dir, arg.split("::")[0]).resolve() for arg in config.args]
    named += [Path(root).resolve() for root in settings(config).scenario_roots]
    return not any(path == folder or path.is_relative_to(folder) for path in named)


def collect_scenario_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    """YAML files under a scenario directory, or named on the command line, are scenarios."""
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    roots = settings(parent.config).scenario_roots
    if parent.session.isinitpath(file_path) or any(file_path.is_relative_to(root) for root in roots):
        parent.config.stash[_SCENARIO_FOUND] = True
        if not file_path.is_relative_to(parent.config.rootpath):  # `-c` elsewhere: pytest would give it no path
            return ScenarioFile.from_parent(parent, path=file_path, nodeid=file_path.as_posix())
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.Module):
    """A scenario file seen as a Python module whose only member is the plugin's scenario test.

    Overriding `_getobj` (instead of importing a .py file) is the one private pytest method this
    plugin relies on; in exchange the items are ordinary `pytest.Function`s.
    """

    def _getobj(self) -> types.ModuleType:
        module = self.__dict__.get("_toolsandbox_module")
        if module is None:
            module = types.ModuleType(__name__)  # same name as the test's module: collect_imported_tests=false
            module.__file__ = str(self.path)
            vars(module).update(test_scenario=test_scenario, SCENARIO=self._load())  # its namespace
            self._toolsandbox_module = module
        return module

    def _load(self) -> Scenario:
        from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario

        shown = Path(display(self.path, self.config.invocation_params.dir))
        try:
            scenario = load_scenario(shown if not shown.is_absolute() and shown.exists() else self.path)
        except ScenarioError as error:
            raise self.CollectError(str(error)) from None
        return scenario.model_copy(update={"path": display(self.path, self.config.rootpath)})

    @property
    def scenario(self) -> Scenario:
        return self.obj.SCENARIO

    @functools.cached_property
    def page_context(self) -> dict[str, Any]:
        """The scenario's goal, knowledge and reference dialogue for trajectory pages, rendered once
        for all its items."""
        from pytest_toolsandbox.report.pages.trajectory_html import scenario_context

        return scenario_context(self.scenario)

    def istestfunction(self, obj: object, name: str) -> bool:
        """Collected whatever the user's python_functions setting is."""
        return name == TEST_NAME

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        """The items; a collection error when `--agent` was given but an overriding `toolsandbox_agent`
        fixture ignores it (raised for the first file only: one message, also under xdist)."""
        collected = list(super().collect())
        if self.config.getoption("toolsandbox_agent") is not None and collected and not self.config.stash.get(
                _AGENT_CHECKED, False):
            from pytest_toolsandbox.running.agent_override import ignored_agent_option

            self.config.stash[_AGENT_CHECKED] = True
            first = collected[0]
            reason = isinstance(first, pytest.Item) and ignored_agent_option(first, PLUGIN_MODULE,
                                                                             settings(self.config).agents)
            if reason:
                raise self.CollectError(reason)
        return collected


@dataclass(frozen=True)
class Case:
    """The parameters of one scenario item: which agent, which variant, which trial (1-based)."""

    agent: str
    variant: str
    trial: int
    id: str
    recording_id: str = ""
    """The id without the agent part: what `replay:DIR` looks up, whichever agents this run has."""


def make_case(agent: str, variant: str, trial: int, run: Settings) -> Case:
    """The variant always; the agent only when several run, the trial only when several run."""
    parts = [variant, f"t{trial}"] if run.trials > 1 else [variant]
    recording = "-".join(parts)
    if len(run.agents) > 1:
        parts.insert(0, agent_label(agent, run.agents))
    return Case(agent, variant, trial, "-".join(parts), recording)


def case_params(scenario: Scenario, run: Settings) -> list[Any]:
    """The scenario's items, each with its markers: categories, variant, and the expected failures that
    collection knows of (not solvable with the variant's tools; baseline failures are marked as the item
    runs, `mark_known_failure`, once the agent, and so the name it is gated under, is known)."""
    from pytest_toolsandbox.tools.augment import VARIANTS

    params = []
    for agent in run.agents:
        for variant in run.variants:
            marks = [pytest.mark.toolsandbox, *(getattr(pytest.mark, c) for c in scenario.categories),
                     *(getattr(pytest.mark, name) for name in dict.fromkeys([VARIANTS[variant].category, variant]))]
            if scenario.solvable_in is not None and variant not in scenario.solvable_in:
                marks.append(pytest.mark.xfail(reason=f"not solvable with the tools {variant} offers (solvable_in: "
                                               f"{', '.join(scenario.solvable_in)})", raises=ScenarioFailed,
                                               strict=False))
            for trial in range(1, run.trials + 1):
                case = make_case(agent, variant, trial, run)
                params.append(pytest.param(case, id=case.id, marks=marks))
    return params


def scenario_and_case(item: pytest.Item) -> tuple[ScenarioFile, Case] | None:
    """The item's scenario file and case, or None for any other test."""
    parent = item.getparent(ScenarioFile)
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("toolsandbox_case") if callspec is not None else None
    return (parent, case) if parent is not None and isinstance(case, Case) else None


def slug(item: pytest.Item) -> str | None:
    """The item's name in the report's trajectory folder."""
    from pytest_toolsandbox.report.results.slug import trajectory_slug

    found = scenario_and_case(item)
    return trajectory_slug(found[0].scenario.path, found[1].id) if found else None


def page_hint(item: pytest.Item) -> str | None:
    """Where the item's trajectory page will be, as the user would type it."""
    from pytest_toolsandbox.report.writing.collector import TRAJECTORY_DIR

    name = slug(item)
    return None if name is None else report_path(item.config, TRAJECTORY_DIR, f"{name}.html")


@dataclass(frozen=True)
class ItemContext:
    """What the plugin's fixtures need from pytest's `request`, taken once per item.

    Every fixture that names `request` makes pytest build a fixture definition for it per item
    (inspecting a signature each time); the plugin's fixtures share this one instead."""

    node: pytest.Function
    run: Settings
    ahead: AheadEpisode | None
    """The item's episode when the pool started it early (`--concurrency`)."""


def gate_agent(item: pytest.Item, case: Case, agent: object) -> str:
    """The name the item's results are recorded and gated under: its `--agent` spec, or, when a conftest.py
    override builds the agent without reading the spec, the agent's own identity (running/agent_override.py)."""
    from pytest_toolsandbox.running.agent_override import agent_identity, builds_own_agent

    return agent_identity(agent) if agent is not None and builds_own_agent(item, PLUGIN_MODULE) else case.agent


def mark_known_failure(item: pytest.Item, baseline_passed: bool | None, baseline_path: str) -> None:
    """A task that failed in the baseline runs as an expected failure (added while the item runs: pytest
    reads an xfail mark added during the call)."""
    if baseline_passed is False:
        item.add_marker(pytest.mark.xfail(reason=f"failed in the baseline {baseline_path}", raises=ScenarioFailed,
                                          strict=False))


def test_scenario(_toolsandbox_item: ItemContext, toolsandbox_case: Case, toolsandbox_scenario: Scenario,
                  toolsandbox_agent: Agent, toolsandbox_user: User,
                  toolsandbox_trajectory: Trajectory, toolsandbox_evaluation: Evaluation,
                  toolsandbox_threshold: float | None, toolsandbox_user_suspect: list[str]) -> None:
    """A scenario variant passes when every milestone is reached and no minefield fired (or, with a
    threshold set, when its similarity reaches the threshold).

    The roles come before the trajectory: pytest keeps a fixture's value for the item's report only once
    every argument before it was set up, and an episode that fails must still report what its roles
    spent."""
    baseline = _toolsandbox_item.run.baseline
    baseline_passed = None
    if baseline is not None:
        agent = gate_agent(_toolsandbox_item.node, toolsandbox_case, toolsandbox_agent)
        baseline_passed = baseline.status(agent, toolsandbox_scenario.path, toolsandbox_case.variant)
        mark_known_failure(_toolsandbox_item.node, baseline_passed, baseline.path)
    if toolsandbox_evaluation.passed(toolsandbox_threshold):
        return
    from pytest_toolsandbox.report.text.expected import expectations
    from pytest_toolsandbox.report.text.failure import failure_message

    message = failure_message(
        toolsandbox_trajectory, toolsandbox_evaluation, toolsandbox_threshold, baseline_passed=baseline_passed,
        report_path=page_hint(_toolsandbox_item.node),
        expected=expectations(toolsandbox_scenario, toolsandbox_trajectory, toolsandbox_evaluation.milestones))
    raise ScenarioFailed(message + "".join(f"\n  user_sim_suspect: {reason}" for reason in toolsandbox_user_suspect))
