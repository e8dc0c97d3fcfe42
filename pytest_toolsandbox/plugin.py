"""pytest hooks of pytest-toolsandbox: options, scenario collection, fixtures, the scenario test,
results on test reports, and the controller-side summary, terminal table and reports.

Each scenario file is collected as a module (`ScenarioFile`) holding one real test function,
`test_scenario`, parametrized in `pytest_generate_tests` by (agent, variant, trial). Node ids are
therefore `scenarios/<dir>/<file>.yaml::test_scenario[<variant>]`, and every pytest feature that
works on ordinary tests (fixtures of any scope, conftest overrides, -k, -m, --lf, --sw, --deselect,
xdist) works on scenarios; docs/plugin.md explains why this collection approach was chosen.
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolsandbox.options import OPTIONS, Option, OptionError, Settings, display, read_settings

if TYPE_CHECKING:
    from pytest_toolsandbox.evaluation.result import Evaluation
    from pytest_toolsandbox.report.collector import RunCollector
    from pytest_toolsandbox.roles.base import Agent, User
    from pytest_toolsandbox.roles.resolve import RoleFactory
    from pytest_toolsandbox.scenario.models import Scenario
    from pytest_toolsandbox.world.trajectory import Trajectory
    from pytest_toolsandbox.world.world import World

TEST_NAME = "test_scenario"


# ---------------------------------------------------------------------------------------------
# Failures raised by the scenario test; their message replaces the traceback in the report.


class ToolsandboxError(Exception):
    """Base of the plugin's own failures: the report shows `str(error)`, never a traceback."""


class ScenarioFailed(ToolsandboxError):
    """The trajectory's similarity stayed under the threshold (the agent's failure)."""


class EpisodeError(ToolsandboxError):
    """A role crashed during the episode: an infrastructure error, reported as a test error."""

    def __init__(self, message: str, trajectory: Trajectory) -> None:
        super().__init__(message)
        self.trajectory = trajectory


class RoleError(ToolsandboxError):
    """An agent or user simulator could not be created for a scenario."""


# ---------------------------------------------------------------------------------------------
# Options and ini keys (declared and validated in options.py), and the run's settings.


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolsandbox", "ToolSandbox scenario evaluation")
    for option in OPTIONS:
        group.addoption(option.flag, dest=option.dest, action="append" if option.append else "store",
                        default=None, metavar=option.metavar, help=option.help)
        parser.addini(option.ini, f"{option.help} [--{option.flag.lstrip('-')}]", type=option.ini_type,
                      default=option.default)


_SETTINGS = pytest.StashKey[Settings]()


def _settings_from(config: pytest.Config) -> Settings:
    """Command-line values are relative to the invocation directory, ini values to the rootdir."""

    def lookup(option: Option) -> tuple[Any, Path]:
        value = config.getoption(option.dest)
        if value is not None:
            return value, config.invocation_params.dir
        return config.getini(option.ini), config.rootpath

    try:
        return read_settings(lookup, config.rootpath, getattr(config, "workerinput", {}).get("toolsandbox_baseline"))
    except OptionError as error:
        raise pytest.UsageError(str(error)) from None


def settings(config: pytest.Config) -> Settings:
    """The run's validated toolsandbox settings."""
    return config.stash[_SETTINGS]


def _build_role(factory: RoleFactory, scenario: Scenario, case: Case) -> Any:
    """An agent or user simulator for one item (resolution lives in roles/resolve.py)."""
    from pytest_toolsandbox.roles.resolve import RoleSpecError

    try:
        return factory(scenario, case.id)
    except RoleSpecError as error:
        raise RoleError(str(error)) from None


# ---------------------------------------------------------------------------------------------
# Collection: a scenario YAML file is a module with one test function.


def pytest_configure(config: pytest.Config) -> None:
    from pytest_toolsandbox.vocabulary import CATEGORIES, VARIANT_CATEGORIES

    config.addinivalue_line("markers", "toolsandbox: a ToolSandbox scenario item")
    for category in CATEGORIES:
        config.addinivalue_line("markers", f"{category}: ToolSandbox scenario category")
    for name, category in VARIANT_CATEGORIES.items():  # both spellings select: -m all_tools, -m all_tools_available
        config.addinivalue_line("markers", f"{category}: ToolSandbox augmentation variant {name}")
        if name != category:
            config.addinivalue_line("markers", f"{name}: ToolSandbox augmentation variant (same as {category})")
    config.stash[_SETTINGS] = _settings_from(config)
    if not hasattr(config, "workerinput"):
        _early_preflight(config)
        config.pluginmanager.register(_Controller(config), "toolsandbox-controller")


def _early_preflight(config: pytest.Config) -> None:
    """Stop at once (before collection and before xdist starts workers) when a model agent has no
    cassette at all and can neither replay nor record; the per-item check after collection does the rest."""
    import os
    import shlex

    from pytest_toolsandbox.recording.cassettes import role_slug
    from pytest_toolsandbox.recording.preflight import early_problem, models_of

    run = settings(config)
    if config.option.collectonly or getattr(config.option, "help", False):
        return
    pairs = [(f"{role_slug(agent)}--{role_slug(run.user)}", models) for agent in run.agents
             if (models := models_of([agent, run.user], run.model_options))]
    if not pairs:
        return
    command = shlex.join(["pytest", *config.invocation_params.args])
    message = early_problem(pairs, run.cassette_dir, run.record_mode, command,
                            display(run.cassette_dir, config.invocation_params.dir))
    if message is not None:
        why = " ($CI is set, so the default record mode is none)" if os.environ.get("CI") else ""
        raise pytest.UsageError(message.replace("forbids recording them.", f"forbids recording them{why}.", 1))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """YAML files under a scenario directory, or named on the command line, are scenarios."""
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    roots = settings(parent.config).scenario_roots
    if parent.session.isinitpath(file_path) or any(file_path.is_relative_to(root) for root in roots):
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
            module.test_scenario = test_scenario  # type: ignore[attr-defined]
            module.SCENARIO = self._load()  # type: ignore[attr-defined]
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

    def istestfunction(self, obj: object, name: str) -> bool:
        """Collected whatever the user's python_functions setting is."""
        return name == TEST_NAME


@dataclass(frozen=True)
class Case:
    """The parameters of one scenario item: which agent, which variant, which trial (1-based)."""

    agent: str
    variant: str
    trial: int
    id: str


def _case_id(agent: str, variant: str, trial: int, run: Settings) -> str:
    """The variant always; the agent only when several run, the trial only when several run."""
    parts = [re.sub(r"[^A-Za-z0-9_.]+", "_", agent)] if len(run.agents) > 1 else []
    parts.append(variant)
    if run.trials > 1:
        parts.append(f"t{trial}")
    return "-".join(parts)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parent = metafunc.definition.parent
    if not isinstance(parent, ScenarioFile):
        return
    from pytest_toolsandbox.tools.augment import VARIANTS

    scenario, config = parent.scenario, settings(metafunc.config)
    params = []
    for agent in config.agents:
        for variant in config.variants:
            marks = [pytest.mark.toolsandbox, *(getattr(pytest.mark, c) for c in scenario.categories),
                     *(getattr(pytest.mark, name) for name in dict.fromkeys([VARIANTS[variant].category, variant]))]
            if config.baseline is not None and config.baseline.status(agent, scenario.path, variant) is False:
                marks.append(pytest.mark.xfail(reason=f"failed in the baseline {config.baseline.path}",
                                               raises=ScenarioFailed, strict=False))
            for trial in range(1, config.trials + 1):
                case_id = _case_id(agent, variant, trial, config)
                params.append(pytest.param(Case(agent, variant, trial, case_id), id=case_id, marks=marks))
    metafunc.parametrize("toolsandbox_case", params)


# ---------------------------------------------------------------------------------------------
# Fixtures (override any of them in a conftest.py; see docs/plugin.md).


def _scenario_file(request: pytest.FixtureRequest) -> ScenarioFile:
    node = request.node.getparent(ScenarioFile)
    if node is None:
        pytest.fail(f"{request.fixturename} is only available to scenario items", pytrace=False)
    return node


@pytest.fixture
def toolsandbox_scenario(request: pytest.FixtureRequest) -> Scenario:
    """The scenario of this item, as loaded from its YAML file."""
    return _scenario_file(request).scenario


@pytest.fixture
def toolsandbox_agent(request: pytest.FixtureRequest, toolsandbox_scenario: Scenario, toolsandbox_case: Case) -> Agent:
    """The agent under test, built from --agent. Override it to evaluate your own agent."""
    factory = settings(request.config).agent_factories[toolsandbox_case.agent]
    return _build_role(factory, toolsandbox_scenario, toolsandbox_case)


@pytest.fixture
def toolsandbox_user(request: pytest.FixtureRequest, toolsandbox_scenario: Scenario, toolsandbox_case: Case) -> User:
    """The user simulator, built from --user."""
    return _build_role(settings(request.config).user_factory, toolsandbox_scenario, toolsandbox_case)


@pytest.fixture
def toolsandbox_threshold(request: pytest.FixtureRequest, toolsandbox_scenario: Scenario) -> float:
    """Similarity needed to pass: the scenario file's own threshold, else --threshold, else 1.0."""
    if "threshold" in toolsandbox_scenario.model_fields_set:
        return toolsandbox_scenario.threshold
    chosen = settings(request.config).threshold
    return 1.0 if chosen is None else chosen


@pytest.fixture
def toolsandbox_start_world(toolsandbox_scenario: Scenario) -> World:
    """The world the episode starts in: the default world with the scenario's patch and first messages.
    Override it to start a scenario from another state."""
    from pytest_toolsandbox.scenario.world_builder import build_world

    return build_world(toolsandbox_scenario)


@pytest.fixture
def toolsandbox_cassette(request: pytest.FixtureRequest, toolsandbox_scenario: Scenario,
                         toolsandbox_case: Case) -> Iterator[Any]:
    """The item's vcrpy cassette, active while the episode runs; None when no role is a model.
    An episode that ends in an error leaves no new cassette behind (record-once would keep it)."""
    from pytest_toolsandbox.recording.cassettes import cassette_path, recorder
    from pytest_toolsandbox.recording.preflight import models_of

    run = settings(request.config)
    if not models_of([toolsandbox_case.agent, run.user], run.model_options) and run.tool_backend == "offline":
        yield None
        return
    path = cassette_path(run.cassette_dir, toolsandbox_scenario.path, toolsandbox_case.agent, run.user,
                         toolsandbox_case.variant, toolsandbox_case.trial)
    existed = path.is_file()
    with recorder(run.record_mode).use_cassette(str(path)) as cassette:
        yield cassette
    if not existed and path.is_file() and "toolsandbox_trajectory" not in request.node.funcargs:
        path.unlink()


@pytest.fixture
def toolsandbox_tool_backend(request: pytest.FixtureRequest, toolsandbox_cassette: Any) -> Iterator[Any]:
    """The search backend while the episode runs: None for the bundled offline one, or the RapidAPI
    backend (`--tool-backend rapidapi`), whose requests go into the item's cassette."""
    if settings(request.config).tool_backend == "offline":
        yield None
        return
    from pytest_toolsandbox.tools.backends import use_backend
    from pytest_toolsandbox.tools.rapidapi import RapidAPIBackend

    with use_backend(RapidAPIBackend()) as backend:
        yield backend


@pytest.fixture
def toolsandbox_episode(request: pytest.FixtureRequest, toolsandbox_scenario: Scenario, toolsandbox_agent: Agent,
                        toolsandbox_user: User, toolsandbox_case: Case, toolsandbox_start_world: World,
                        toolsandbox_cassette: Any, toolsandbox_tool_backend: Any) -> Callable[[], Trajectory]:
    """The episode runner: a no-argument callable playing this item's episode (inside the item's
    cassette). Override it to wrap episodes (rate limits) without touching the agent."""
    from pytest_toolsandbox.episode import run_episode
    from pytest_toolsandbox.offpolicy import OFF_POLICY_USER, OffPolicyEpisode

    run = settings(request.config)
    if run.user == OFF_POLICY_USER:
        return OffPolicyEpisode(toolsandbox_scenario, toolsandbox_agent, variant=toolsandbox_case.variant,
                                max_messages=run.max_messages, world=toolsandbox_start_world)
    return functools.partial(run_episode, toolsandbox_scenario, toolsandbox_agent, toolsandbox_user,
                             variant=toolsandbox_case.variant, max_messages=run.max_messages,
                             world=toolsandbox_start_world)


_TRAJECTORY_JSON = pytest.StashKey[tuple[Any, str]]()


@pytest.fixture
def toolsandbox_trajectory(request: pytest.FixtureRequest, toolsandbox_episode: Callable[[], Trajectory]) -> Trajectory:
    """The played episode. A role that crashed makes this item an error, not an agent failure."""
    from pytest_toolsandbox.report.failure import episode_error_message
    from pytest_toolsandbox.report.record import encodable

    trajectory = toolsandbox_episode()
    text = trajectory.to_json()
    clean = encodable(text)
    if clean != text:  # lone surrogates (half an emoji): no file nor xdist channel takes them
        trajectory = type(trajectory).from_json(clean)
    request.node.stash[_TRAJECTORY_JSON] = (trajectory, clean)  # the report reuses it: serialised once
    if trajectory.ended_by == "error":
        raise EpisodeError(episode_error_message(trajectory, _page_hint(request.node)), trajectory)
    return trajectory


@pytest.fixture
def toolsandbox_world(toolsandbox_trajectory: Trajectory) -> World:
    """The world as the episode left it, with its snapshot history (for extra assertions)."""
    return toolsandbox_trajectory.world()


@pytest.fixture
def toolsandbox_evaluation(toolsandbox_scenario: Scenario, toolsandbox_trajectory: Trajectory,
                           toolsandbox_episode: Callable[[], Trajectory]) -> Evaluation:
    """The trajectory scored against the scenario's milestones and minefields (off-policy: the
    share of user turns the agent handled like the reference)."""
    from pytest_toolsandbox.evaluation import evaluate
    from pytest_toolsandbox.offpolicy import OffPolicyEpisode

    if isinstance(toolsandbox_episode, OffPolicyEpisode):
        return toolsandbox_episode.evaluation()
    return evaluate(toolsandbox_scenario, toolsandbox_trajectory)


@pytest.fixture
def toolsandbox_user_suspect(toolsandbox_scenario: Scenario, toolsandbox_user: User,
                             toolsandbox_trajectory: Trajectory, toolsandbox_evaluation: Evaluation,
                             toolsandbox_threshold: float) -> list[str]:
    """Reasons to suspect the LLM user simulator spoiled the episode (empty for other users)."""
    from pytest_toolsandbox.roles.llm_user import LLMUser
    from pytest_toolsandbox.roles.simulator_guard import suspicions

    if not isinstance(toolsandbox_user, LLMUser):
        return []
    return suspicions(toolsandbox_scenario, toolsandbox_trajectory.messages,
                      milestones_met=toolsandbox_evaluation.milestone_similarity >= toolsandbox_threshold,
                      ended_by_user=toolsandbox_trajectory.ended_by == "user")


def _page_hint(item: pytest.Item) -> str | None:
    """Where the item's trajectory page will be, as the user would type it."""
    from pytest_toolsandbox.report.collector import TRAJECTORY_DIR

    slug = _slug(item)
    if slug is None:
        return None
    page = settings(item.config).report_dir / TRAJECTORY_DIR / f"{slug}.html"
    return display(page, item.config.invocation_params.dir)


def _slug(item: pytest.Item) -> str | None:
    from pytest_toolsandbox.report.record import trajectory_slug

    parent = item.getparent(ScenarioFile)
    case = getattr(item, "callspec", None) and item.callspec.params.get("toolsandbox_case")
    return trajectory_slug(parent.scenario.path, case.id) if parent is not None and case else None


def test_scenario(request: pytest.FixtureRequest, toolsandbox_case: Case, toolsandbox_scenario: Scenario,
                  toolsandbox_trajectory: Trajectory, toolsandbox_evaluation: Evaluation,
                  toolsandbox_threshold: float, toolsandbox_user_suspect: list[str]) -> None:
    """A scenario variant passes when its similarity reaches the threshold."""
    if toolsandbox_evaluation.score >= toolsandbox_threshold:
        return
    from pytest_toolsandbox.report.expected import expectations
    from pytest_toolsandbox.report.failure import failure_message

    baseline = settings(request.config).baseline
    message = failure_message(
        toolsandbox_trajectory, toolsandbox_evaluation, toolsandbox_threshold,
        baseline_passed=(baseline.status(toolsandbox_case.agent, toolsandbox_scenario.path, toolsandbox_case.variant)
                         if baseline else None),
        report_path=_page_hint(request.node),
        expected=expectations(toolsandbox_scenario, toolsandbox_trajectory, toolsandbox_evaluation.milestones))
    raise ScenarioFailed(message + "".join(f"\n  user_sim_suspect: {reason}" for reason in toolsandbox_user_suspect))


# ---------------------------------------------------------------------------------------------
# Results on the test report (plain data, so they cross from xdist workers to the controller).


def _usage(role: object) -> dict[str, int] | None:
    """Token counts a role reports through a `usage` mapping (LLM roles); None otherwise."""
    usage = getattr(role, "usage", None)
    return {str(key): int(value) for key, value in usage.items()} if isinstance(usage, dict) else None


def _off_policy(episode: object) -> dict[str, Any] | None:
    """Per-turn results of an off-policy episode (`--user=reference-history`); None otherwise."""
    from pytest_toolsandbox.offpolicy import OffPolicyEpisode

    return episode.as_json() if isinstance(episode, OffPolicyEpisode) and episode.turns else None


def _replayed(cassette: Any) -> bool | None:
    """Whether every request of the item came from its cassette (None: the item had no cassette)."""
    if cassette is None:
        return None
    return cassette.play_count > 0 and not cassette.dirty


def _record(item: pytest.Item, outcome: str, failure: BaseException | None, error: str | None) -> dict[str, Any]:
    from pytest_toolsandbox.report.baseline import classify
    from pytest_toolsandbox.report.record import empty_evaluation_fields, evaluation_fields, trajectory_fields
    from pytest_toolsandbox.report.usage import usage_fields

    scenario: Scenario = item.getparent(ScenarioFile).scenario
    case: Case = item.callspec.params["toolsandbox_case"]
    values = item.funcargs
    config = settings(item.config)
    trajectory = values.get("toolsandbox_trajectory") or getattr(failure, "trajectory", None)
    evaluation = values.get("toolsandbox_evaluation")
    threshold = values.get("toolsandbox_threshold")
    baseline = config.baseline.status(case.agent, scenario.path, case.variant) if config.baseline else None
    tokens = {"agent": _usage(values.get("toolsandbox_agent")), "user": _usage(values.get("toolsandbox_user"))}
    models = {"agent": getattr(values.get("toolsandbox_agent"), "model", None),
              "user": getattr(values.get("toolsandbox_user"), "model", None)}
    return {
        "id": item.nodeid, "scenario": scenario.name, "path": scenario.path,
        "categories": list(scenario.categories), "variant": case.variant, "trial": case.trial,
        "agent": getattr(values.get("toolsandbox_agent"), "name", None) or case.agent, "agent_spec": case.agent,
        "user": getattr(values.get("toolsandbox_user"), "name", None) or config.user,
        **trajectory_fields(trajectory),
        "agent_model": models["agent"], "user_model": models["user"],
        "outcome": outcome, "threshold": threshold,
        **(evaluation_fields(evaluation, threshold, _expected(scenario, trajectory, evaluation))
           if evaluation is not None and threshold is not None else empty_evaluation_fields()),
        "tokens": tokens, **usage_fields(tokens, models, _replayed(values.get("toolsandbox_cassette"))),
        "user_sim_suspect": values.get("toolsandbox_user_suspect") or [],
        "off_policy": _off_policy(values.get("toolsandbox_episode")),
        "baseline": None if baseline is None else ("passed" if baseline else "failed"),
        "change": classify(baseline, outcome) if config.baseline else None,
        "error": error,
    }


def _expected(scenario: Scenario, trajectory: Trajectory | None, evaluation: Evaluation) -> dict[str, Any] | None:
    """Each milestone's and minefield's targets as text, for the record (and so the report)."""
    if trajectory is None:
        return None
    from pytest_toolsandbox.report.expected import expectations

    return {kind: expectations(scenario, trajectory, getattr(evaluation, kind), kind)
            for kind in ("milestones", "minefields")}


def _html_extras(record: dict[str, Any], trajectory: Trajectory) -> list[dict[str, Any]]:
    """pytest-html per-test extra: the trajectory view with its milestone table."""
    from pytest_html import extras

    from pytest_toolsandbox.report.trajectory_html import trajectory_fragment

    return [extras.html(trajectory_fragment(trajectory, record))]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Outermost wrapper: sees the final outcome (after xfail handling) and attaches the record."""
    report = yield
    parent = item.getparent(ScenarioFile)
    if parent is None or not hasattr(item, "callspec"):
        return report
    from pytest_toolsandbox.report.record import item_outcome

    report.toolsandbox_categories = list(parent.scenario.categories)
    report.location = (parent.nodeid, None, item.nodeid)  # headlines name the scenario file, not this module
    failure = call.excinfo.value if call.excinfo is not None else None
    if isinstance(failure, ToolsandboxError) and report.failed:
        report.longrepr = str(failure)
    outcome = item_outcome(report.when, report.outcome, hasattr(report, "wasxfail"))
    if outcome is None or report.when == "teardown":
        return report
    error = None
    if outcome == "error" and call.excinfo is not None:
        error = str(failure) if isinstance(failure, ToolsandboxError) else call.excinfo.exconly()[:2000]
    record = _record(item, outcome, failure, error)
    report.toolsandbox_record = record
    report.toolsandbox_slug = _slug(item)
    from pytest_toolsandbox.report.trajectory_html import scenario_context

    report.toolsandbox_context = scenario_context(parent.scenario)
    trajectory = item.funcargs.get("toolsandbox_trajectory") or getattr(failure, "trajectory", None)
    if trajectory is not None:
        serialised = item.stash.get(_TRAJECTORY_JSON, None)
        report.toolsandbox_trajectory = (serialised[1] if serialised and serialised[0] is trajectory
                                         else trajectory.to_json())
        if item.config.getoption("htmlpath", None):
            report.extras = [*getattr(report, "extras", []), *_html_extras(record, trajectory)]
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_header(cells: list[str]) -> None:
    cells.insert(2, '<th class="sortable" data-column-type="category">Category</th>')
    cells.insert(3, '<th class="sortable" data-column-type="similarity">Similarity</th>')


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_row(report: pytest.TestReport, cells: list[str]) -> None:
    from html import escape

    record = getattr(report, "toolsandbox_record", None) or {}
    score = record.get("score")
    cells.insert(2, f'<td class="col-category">{escape(", ".join(getattr(report, "toolsandbox_categories", [])))}</td>')
    cells.insert(3, f'<td class="col-similarity">{"" if score is None else f"{score:.4f}"}</td>')


# ---------------------------------------------------------------------------------------------
# The controller: the only process that sees every result and the only writer of reports.


def _is_scenario_id(nodeid: str) -> bool:
    path, _, rest = nodeid.partition("::")
    return path.endswith((".yaml", ".yml")) and rest.startswith(f"{TEST_NAME}[")


class _Controller:
    """Registered on the controller (or the only process without xdist), never on workers."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = settings(config)
        self.started = datetime.now(UTC)
        self.summary: dict[str, Any] | None = None
        self.runs_tests = False
        self.checked = False
        self.stopped = False
        self.baseline_summary = self._read_baseline()

    def _read_baseline(self) -> dict[str, Any] | None:
        """The whole baseline summary, read now: this run may overwrite the file (same report dir)."""
        if self.settings.baseline is None:
            return None
        from pytest_toolsandbox.report.summary import SummaryError, load_summary

        try:
            return load_summary(self._baseline_path())
        except SummaryError:
            return None  # already reported as a usage error by read_settings when unreadable

    def _baseline_path(self) -> Path:
        assert self.settings.baseline is not None
        return self.config.rootpath / self.settings.baseline.path

    @functools.cached_property
    def collector(self) -> RunCollector:
        """Created (and the report stack imported) only once a scenario item is collected or reported."""
        from pytest_toolsandbox.report.collector import RunCollector

        return RunCollector(self.settings.report_dir, self.settings.trials)

    def _expect(self, nodeids: Iterable[str]) -> None:
        count = sum(map(_is_scenario_id, nodeids))
        if count:
            self.collector.expect(count)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        baseline = self.settings.baseline
        if baseline is not None:
            node.workerinput["toolsandbox_baseline"] = {"path": baseline.path, "passed": baseline.passed}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._expect(item.nodeid for item in session.items)
        self._preflight([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._expect(ids)
        if not self.checked:
            self._preflight(ids)

    def _preflight(self, nodeids: list[str]) -> None:
        """Stop the whole run at once when model items lack a cassette (replay) or a key (record)."""
        import os
        import shlex

        from pytest_toolsandbox.recording.cassettes import cassette_path
        from pytest_toolsandbox.recording.preflight import RecordedItem, models_of, problem

        self.checked = True
        run = self.settings
        cases = {_case_id(agent, variant, trial, run): (agent, variant, trial)
                 for agent in run.agents for variant in run.variants for trial in range(1, run.trials + 1)}
        items = []
        for nodeid in filter(_is_scenario_id, nodeids):
            path, _, rest = nodeid.partition("::")
            case = cases.get(rest[len(TEST_NAME) + 1:-1])
            models = models_of([case[0], run.user], run.model_options) if case else ()
            if case and models:
                cassette = cassette_path(run.cassette_dir, path, case[0], run.user, case[1], case[2])
                items.append(RecordedItem(cassette, models))
        invocation = self.config.invocation_params.dir
        command = shlex.join(["pytest", *self.config.invocation_params.args])
        message = problem(items, run.record_mode, command,
                          {item.cassette: display(item.cassette, invocation) for item in items},
                          environ_has_ci=bool(os.environ.get("CI")))
        if message is not None:
            self.stopped = True
            pytest.exit(message, returncode=pytest.ExitCode.USAGE_ERROR)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """Only sessions that run tests write a report (not --fixtures, --collect-only, --setup-plan)."""
        option = self.config.option
        self.runs_tests = not (option.collectonly or getattr(option, "setuponly", False))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not _is_scenario_id(report.nodeid):
            return
        from pytest_toolsandbox.report.trajectory_html import PageContext

        trajectory = getattr(report, "toolsandbox_trajectory", None)
        if trajectory is not None:
            del report.toolsandbox_trajectory  # written to disk below; keep memory for records only
        context = getattr(report, "toolsandbox_context", None)
        self.collector.add_phase(report.nodeid, report.when, report.failed, report.duration,
                                 getattr(report, "worker_id", None), getattr(report, "toolsandbox_record", None),
                                 trajectory, getattr(report, "toolsandbox_slug", None),
                                 PageContext(context["goal"], context["knowledge"], tuple(context["reference"]))
                                 if context else None)

    def _run(self, exitstatus: int) -> dict[str, Any]:
        from pytest_toolsandbox.report.metadata import git_state, versions

        finished = datetime.now(UTC)
        return {
            "started": self.started.isoformat(timespec="seconds"),
            "finished": finished.isoformat(timespec="seconds"),
            "duration": round((finished - self.started).total_seconds(), 3),
            "exit_status": int(exitstatus), "versions": versions(), "git": git_state(self.config.rootpath),
            "options": self.settings.as_json(self.config.rootpath),
            "agents": list(self.settings.agents), "users": [self.settings.user],
            "workers": getattr(self.config.option, "numprocesses", None) or 0,
        }

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.runs_tests or self.stopped or "collector" not in self.__dict__:
            return
        baseline = {"path": self.settings.baseline.path} if self.settings.baseline else None
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        self.summary = self.collector.finish(self._run(exitstatus), interrupted, baseline)
        if self.summary is not None and self.baseline_summary is not None:
            from pytest_toolsandbox.report.comparison_html import baseline_sections, write_comparison

            report_dir = self.settings.report_dir
            sections = baseline_sections(self.baseline_summary, self._baseline_path(), self.summary, report_dir,
                                         label=f"baseline {self.settings.baseline.path}")
            write_comparison(report_dir, sections, root="")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary is None:
            return
        from pytest_toolsandbox.report.table import format_table
        from pytest_toolsandbox.report.usage import usage_line

        summary = self.summary
        terminalreporter.write_sep("=", "toolsandbox: per-category results")
        for line in format_table(summary["aggregates"], self.settings.trials):
            terminalreporter.write_line(line)
        usage = usage_line(summary["usage"]) if "usage" in summary else None
        if usage:
            terminalreporter.write_line(usage)
        if summary["baseline"]:
            changes = {change: summary["baseline"][change] for change in ("regression", "improvement",
                                                                          "known_failure")}
            terminalreporter.write_line(f"baseline {summary['baseline']['path']}: "
                                        + ", ".join(f"{len(ids)} {name.replace('_', ' ')}(s)"
                                                    for name, ids in changes.items()))
            for name in ("regression", "improvement"):
                for nodeid in changes[name]:
                    terminalreporter.write_line(f"  {name}: {nodeid}")
        where = display(self.settings.report_dir, self.config.invocation_params.dir)
        counts = summary["counts"]
        note = (f" — PARTIAL: {counts['finished']} of {counts['expected']} items finished"
                if summary["partial"] else "")
        terminalreporter.write_line(f"report: {where}/index.html, {where}/summary.json{note}")

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str],
                                    session: pytest.Session) -> None:
        if "collector" not in self.__dict__:
            return
        from pytest_toolsandbox.report.site import CATEGORY_TABLE_STYLE, category_table

        aggregates = self.collector.aggregates()
        if aggregates:
            prefix.append(f"<style>{CATEGORY_TABLE_STYLE}</style><h2>ToolSandbox per-category results</h2>"
                          + category_table(aggregates, self.settings.trials, link_root=None))
