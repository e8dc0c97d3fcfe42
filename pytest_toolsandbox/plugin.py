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
import os
import re
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_toolsandbox.evaluation.result import Evaluation
    from pytest_toolsandbox.report.baseline import Baseline
    from pytest_toolsandbox.report.collector import RunCollector
    from pytest_toolsandbox.roles.base import Agent, User
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
# Options and ini keys: the command line wins, then the ini file, then the built-in default.


@dataclass(frozen=True)
class _Option:
    flag: str
    ini: str
    ini_type: str
    default: Any
    help: str
    metavar: str
    append: bool = False

    @property
    def dest(self) -> str:
        return "toolsandbox_" + self.flag.lstrip("-").replace("-", "_")


OPTIONS = (
    _Option("--agent", "toolsandbox_agent", "args", ["reference"], "agent under test: reference, unhelpful, "
            "replay:PATH, an entry point name (group pytest_toolsandbox.agents) or module:Class; repeat for "
            "several agents (default: reference)", "SPEC", append=True),
    _Option("--user", "toolsandbox_user", "string", "scripted", "user simulator: scripted, an entry point name "
            "(group pytest_toolsandbox.users) or module:Class (default: scripted)", "SPEC"),
    _Option("--augment", "toolsandbox_augment", "args", ["base"], "tool-augmentation variants to run, comma "
            "separated or repeated; 'all' for the paper's eight (default: base)", "VARIANTS", append=True),
    _Option("--trials", "toolsandbox_trials", "string", "1", "independent trials per scenario and variant; "
            "pass^k is reported when > 1 (default: 1)", "N"),
    _Option("--threshold", "toolsandbox_threshold", "string", "", "similarity a trajectory needs to pass, "
            "unless the scenario file sets its own threshold (default: 1.0)", "X"),
    _Option("--max-messages", "toolsandbox_max_messages", "string", "", "cap on messages per episode "
            "(default: each scenario's max_messages)", "N"),
    _Option("--report-dir", "toolsandbox_report_dir", "string", "toolsandbox-report", "directory for "
            "summary.json, trajectories and the static HTML report (default: toolsandbox-report)", "DIR"),
    _Option("--baseline", "toolsandbox_baseline", "string", "", "earlier summary.json: its failures run as "
            "expected failures and only regressions fail the run", "PATH"),
    _Option("--scenarios", "toolsandbox_scenarios", "args", ["scenarios"], "directories whose YAML files are "
            "scenarios; repeatable (default: scenarios)", "DIR", append=True),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolsandbox", "ToolSandbox scenario evaluation")
    for option in OPTIONS:
        group.addoption(option.flag, dest=option.dest, action="append" if option.append else "store",
                        default=None, metavar=option.metavar, help=option.help)
        parser.addini(option.ini, f"{option.help} [--{option.flag.lstrip('-')}]", type=option.ini_type,
                      default=option.default)


@dataclass(frozen=True)
class Case:
    """The parameters of one scenario item: which agent, which variant, which trial (1-based)."""

    agent: str
    variant: str
    trial: int
    id: str


RoleFactory = Callable[["Scenario", str], Any]


@dataclass(frozen=True)
class Settings:
    """Validated options of a run (identical on the controller and every xdist worker)."""

    agents: tuple[str, ...]
    user: str
    variants: tuple[str, ...]
    trials: int
    threshold: float | None
    max_messages: int | None
    report_dir: Path
    baseline: Baseline | None
    scenario_roots: tuple[Path, ...]
    agent_factories: dict[str, RoleFactory]
    user_factory: RoleFactory

    def as_json(self, rootdir: Path) -> dict[str, Any]:
        """The options as recorded in summary.json (paths relative to the rootdir when inside it)."""
        return {"agents": list(self.agents), "user": self.user, "augment": list(self.variants),
                "trials": self.trials, "threshold": self.threshold, "max_messages": self.max_messages,
                "report_dir": _display(self.report_dir, rootdir),
                "baseline": self.baseline.path if self.baseline else None,
                "scenarios": [_display(root, rootdir) for root in self.scenario_roots]}


_SETTINGS = pytest.StashKey[Settings]()


def _raw(config: pytest.Config, option: _Option) -> tuple[Any, Path]:
    """The option's value and the directory its relative paths are relative to."""
    value = config.getoption(option.dest)
    if value is not None:
        return value, config.invocation_params.dir
    return config.getini(option.ini), config.rootpath


def _words(values: Iterable[str]) -> list[str]:
    return [word for value in values for word in re.split(r"[,\s]+", value) if word]


def _number(config: pytest.Config, option: _Option, kind: type, low: float, high: float | None) -> Any:
    value, _ = _raw(config, option)
    if value in ("", None):
        return None
    try:
        number = kind(value)
    except ValueError:
        raise pytest.UsageError(f"{option.flag} / {option.ini}: {value!r} is not a {kind.__name__}") from None
    if number < low or (high is not None and number > high):
        bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
        raise pytest.UsageError(f"{option.flag} / {option.ini}: {value!r} must be {bounds}")
    return number


def _paths(config: pytest.Config, option: _Option) -> list[Path]:
    value, base = _raw(config, option)
    values = [value] if isinstance(value, str) else _words(value)
    return [Path(os.path.abspath(base / item)) for item in values if item]  # like pytest: no symlink resolution


def _variants(config: pytest.Config) -> tuple[str, ...]:
    from pytest_toolsandbox.tools.augment import VARIANTS

    option = next(o for o in OPTIONS if o.flag == "--augment")
    chosen: list[str] = []
    for name in _words(_raw(config, option)[0]):
        names = list(VARIANTS) if name == "all" else [name]
        for variant in names:
            if variant not in VARIANTS:
                raise pytest.UsageError(f"--augment / toolsandbox_augment: unknown variant {variant!r}; "
                                        f"choose 'all' or some of {', '.join(VARIANTS)}")
            if variant not in chosen:
                chosen.append(variant)
    return tuple(chosen or ["base"])


def _settings_from(config: pytest.Config) -> Settings:
    by_flag = {option.flag: option for option in OPTIONS}
    agents = tuple(dict.fromkeys(_words(_raw(config, by_flag["--agent"])[0]))) or ("reference",)
    user = _raw(config, by_flag["--user"])[0] or "scripted"
    report_dir, baseline_path = (_paths(config, by_flag[flag]) for flag in ("--report-dir", "--baseline"))
    return Settings(
        agents=agents, user=user, variants=_variants(config),
        trials=_number(config, by_flag["--trials"], int, 1, None) or 1,
        threshold=_number(config, by_flag["--threshold"], float, 0.0, 1.0),
        max_messages=_number(config, by_flag["--max-messages"], int, 1, None),
        report_dir=report_dir[0] if report_dir else config.rootpath / "toolsandbox-report",
        baseline=_baseline(config, baseline_path[0] if baseline_path else None),
        scenario_roots=tuple(_paths(config, by_flag["--scenarios"])),
        agent_factories={spec: _role_factory(spec, "agent") for spec in agents},
        user_factory=_role_factory(user, "user"),
    )


def _baseline(config: pytest.Config, path: Path | None) -> Baseline | None:
    """Workers take the controller's copy, so a baseline overwritten mid-run cannot diverge."""
    from pytest_toolsandbox.report.baseline import Baseline, load_baseline
    from pytest_toolsandbox.report.summary import SummaryError

    shipped = getattr(config, "workerinput", {}).get("toolsandbox_baseline")
    if shipped is not None:
        return Baseline(path=shipped["path"], passed=shipped["passed"])
    if path is None:
        return None
    try:
        baseline = load_baseline(path)
    except SummaryError as error:
        raise pytest.UsageError(f"--baseline: {error}") from None
    return Baseline(path=_display(path, config.rootpath), passed=baseline.passed)


def _display(path: Path, rootdir: Path) -> str:
    return path.relative_to(rootdir).as_posix() if path.is_relative_to(rootdir) else str(path)


def settings(config: pytest.Config) -> Settings:
    """The run's validated toolsandbox settings."""
    return config.stash[_SETTINGS]


# ---------------------------------------------------------------------------------------------
# Agents and user simulators from their --agent / --user spec (resolution lives in roles/resolve.py).


def _replay_file(root: Path, scenario: Scenario, item_id: str) -> Path:
    from pytest_toolsandbox.report.record import trajectory_slug

    return root / f"{trajectory_slug(scenario.path, item_id)}.json"


def _role_factory(spec: str, kind: str) -> RoleFactory:
    from pytest_toolsandbox.roles.resolve import RoleSpecError, role_factory

    try:
        return role_factory(spec, kind, _replay_file)  # type: ignore[arg-type]
    except RoleSpecError as error:
        raise pytest.UsageError(str(error)) from None


def _build_role(factory: RoleFactory, scenario: Scenario, case: Case) -> Any:
    from pytest_toolsandbox.roles.resolve import RoleSpecError

    try:
        return factory(scenario, case.id)
    except RoleSpecError as error:
        raise RoleError(str(error)) from None


# ---------------------------------------------------------------------------------------------
# Collection: a scenario YAML file is a module with one test function.


def pytest_configure(config: pytest.Config) -> None:
    from pytest_toolsandbox.scenario.models import CATEGORIES
    from pytest_toolsandbox.tools.augment import VARIANTS

    config.addinivalue_line("markers", "toolsandbox: a ToolSandbox scenario item")
    for category in CATEGORIES:
        config.addinivalue_line("markers", f"{category}: ToolSandbox scenario category")
    for variant in VARIANTS.values():  # both spellings select: -m all_tools, -m all_tools_available
        config.addinivalue_line("markers", f"{variant.category}: ToolSandbox augmentation variant {variant.name}")
        if variant.name != variant.category:
            config.addinivalue_line("markers", f"{variant.name}: ToolSandbox augmentation variant "
                                    f"(same as {variant.category})")
    config.stash[_SETTINGS] = _settings_from(config)
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Controller(config), "toolsandbox-controller")


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

        shown = Path(_display(self.path, self.config.invocation_params.dir))
        try:
            scenario = load_scenario(shown if not shown.is_absolute() and shown.exists() else self.path)
        except ScenarioError as error:
            raise self.CollectError(str(error)) from None
        return scenario.model_copy(update={"path": _display(self.path, self.config.rootpath)})

    @property
    def scenario(self) -> Scenario:
        return self.obj.SCENARIO

    def istestfunction(self, obj: object, name: str) -> bool:
        """Collected whatever the user's python_functions setting is."""
        return name == TEST_NAME


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
            if config.baseline is not None and config.baseline.status(scenario.path, variant) is False:
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
def toolsandbox_episode(request: pytest.FixtureRequest, toolsandbox_scenario: Scenario, toolsandbox_agent: Agent,
                        toolsandbox_user: User, toolsandbox_case: Case,
                        toolsandbox_start_world: World) -> Callable[[], Trajectory]:
    """The episode runner: a no-argument callable playing this item's episode. Override it to wrap
    episodes (recording, rate limits) without touching the agent."""
    from pytest_toolsandbox.episode import run_episode

    return functools.partial(run_episode, toolsandbox_scenario, toolsandbox_agent, toolsandbox_user,
                             variant=toolsandbox_case.variant,
                             max_messages=settings(request.config).max_messages, world=toolsandbox_start_world)


@pytest.fixture
def toolsandbox_trajectory(request: pytest.FixtureRequest, toolsandbox_episode: Callable[[], Trajectory]) -> Trajectory:
    """The played episode. A role that crashed makes this item an error, not an agent failure."""
    from pytest_toolsandbox.report.failure import episode_error_message

    trajectory = toolsandbox_episode()
    if trajectory.ended_by == "error":
        raise EpisodeError(episode_error_message(trajectory, _page_hint(request.node)), trajectory)
    return trajectory


@pytest.fixture
def toolsandbox_world(toolsandbox_trajectory: Trajectory) -> World:
    """The world as the episode left it, with its snapshot history (for extra assertions)."""
    return toolsandbox_trajectory.world()


@pytest.fixture
def toolsandbox_evaluation(toolsandbox_scenario: Scenario, toolsandbox_trajectory: Trajectory) -> Evaluation:
    """The trajectory scored against the scenario's milestones and minefields."""
    from pytest_toolsandbox.evaluation import evaluate

    return evaluate(toolsandbox_scenario, toolsandbox_trajectory)


def _page_hint(item: pytest.Item) -> str | None:
    """Where the item's trajectory page will be, as the user would type it."""
    from pytest_toolsandbox.report.collector import TRAJECTORY_DIR

    slug = _slug(item)
    if slug is None:
        return None
    page = settings(item.config).report_dir / TRAJECTORY_DIR / f"{slug}.html"
    return _display(page, item.config.invocation_params.dir)


def _slug(item: pytest.Item) -> str | None:
    from pytest_toolsandbox.report.record import trajectory_slug

    parent = item.getparent(ScenarioFile)
    case = getattr(item, "callspec", None) and item.callspec.params.get("toolsandbox_case")
    return trajectory_slug(parent.scenario.path, case.id) if parent is not None and case else None


def test_scenario(request: pytest.FixtureRequest, toolsandbox_case: Case, toolsandbox_scenario: Scenario,
                  toolsandbox_trajectory: Trajectory, toolsandbox_evaluation: Evaluation,
                  toolsandbox_threshold: float) -> None:
    """A scenario variant passes when its similarity reaches the threshold."""
    if toolsandbox_evaluation.score >= toolsandbox_threshold:
        return
    from pytest_toolsandbox.report.failure import failure_message

    baseline = settings(request.config).baseline
    raise ScenarioFailed(failure_message(
        toolsandbox_trajectory, toolsandbox_evaluation, toolsandbox_threshold,
        baseline_passed=baseline.status(toolsandbox_scenario.path, toolsandbox_case.variant) if baseline else None,
        report_path=_page_hint(request.node)))


# ---------------------------------------------------------------------------------------------
# Results on the test report (plain data, so they cross from xdist workers to the controller).


def _usage(role: object) -> dict[str, int] | None:
    """Token counts a role reports through a `usage` mapping (LLM roles); None otherwise."""
    usage = getattr(role, "usage", None)
    return {str(key): int(value) for key, value in usage.items()} if isinstance(usage, dict) else None


def _record(item: pytest.Item, outcome: str, failure: BaseException | None, error: str | None) -> dict[str, Any]:
    from pytest_toolsandbox.report.baseline import classify
    from pytest_toolsandbox.report.record import empty_evaluation_fields, evaluation_fields, trajectory_fields

    scenario: Scenario = item.getparent(ScenarioFile).scenario
    case: Case = item.callspec.params["toolsandbox_case"]
    values = item.funcargs
    config = settings(item.config)
    trajectory = values.get("toolsandbox_trajectory") or getattr(failure, "trajectory", None)
    evaluation = values.get("toolsandbox_evaluation")
    threshold = values.get("toolsandbox_threshold")
    baseline = config.baseline.status(scenario.path, case.variant) if config.baseline else None
    return {
        "id": item.nodeid, "scenario": scenario.name, "path": scenario.path,
        "categories": list(scenario.categories), "variant": case.variant, "trial": case.trial,
        "agent": case.agent, "agent_spec": case.agent, "user": config.user,
        **trajectory_fields(trajectory),
        "agent_model": getattr(values.get("toolsandbox_agent"), "model", None),
        "user_model": getattr(values.get("toolsandbox_user"), "model", None),
        "outcome": outcome, "threshold": threshold,
        **(evaluation_fields(evaluation, threshold) if evaluation is not None and threshold is not None
           else empty_evaluation_fields()),
        "tokens": {"agent": _usage(values.get("toolsandbox_agent")), "user": _usage(values.get("toolsandbox_user"))},
        "baseline": None if baseline is None else ("passed" if baseline else "failed"),
        "change": classify(baseline, outcome) if config.baseline else None,
        "error": error,
    }


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
    trajectory = item.funcargs.get("toolsandbox_trajectory") or getattr(failure, "trajectory", None)
    if trajectory is not None:
        report.toolsandbox_trajectory = trajectory.to_json()
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
        from pytest_toolsandbox.report.collector import RunCollector

        self.config = config
        self.settings = settings(config)
        self.started = datetime.now(UTC)
        self.collector: RunCollector = RunCollector(self.settings.report_dir, self.settings.trials)
        self.summary: dict[str, Any] | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        baseline = self.settings.baseline
        if baseline is not None:
            node.workerinput["toolsandbox_baseline"] = {"path": baseline.path, "passed": baseline.passed}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collector.expect(sum(_is_scenario_id(item.nodeid) for item in session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.collector.expect(sum(map(_is_scenario_id, ids)))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not _is_scenario_id(report.nodeid):
            return
        trajectory = getattr(report, "toolsandbox_trajectory", None)
        if trajectory is not None:
            del report.toolsandbox_trajectory  # written to disk below; keep memory for records only
        self.collector.add_phase(report.nodeid, report.when, report.failed, report.duration,
                                 getattr(report, "worker_id", None), getattr(report, "toolsandbox_record", None),
                                 trajectory, getattr(report, "toolsandbox_slug", None))

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
        if self.config.option.collectonly:
            return
        baseline = {"path": self.settings.baseline.path} if self.settings.baseline else None
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        self.summary = self.collector.finish(self._run(exitstatus), interrupted, baseline)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary is None:
            return
        from pytest_toolsandbox.report.table import format_table

        summary = self.summary
        terminalreporter.write_sep("=", "toolsandbox: per-category results")
        for line in format_table(summary["aggregates"], self.settings.trials):
            terminalreporter.write_line(line)
        if summary["baseline"]:
            changes = {change: summary["baseline"][change] for change in ("regression", "improvement",
                                                                          "known_failure")}
            terminalreporter.write_line(f"baseline {summary['baseline']['path']}: "
                                        + ", ".join(f"{len(ids)} {name.replace('_', ' ')}(s)"
                                                    for name, ids in changes.items()))
            for name in ("regression", "improvement"):
                for nodeid in changes[name]:
                    terminalreporter.write_line(f"  {name}: {nodeid}")
        where = _display(self.settings.report_dir, self.config.invocation_params.dir)
        counts = summary["counts"]
        note = (f" — PARTIAL: {counts['finished']} of {counts['expected']} items finished"
                if summary["partial"] else "")
        terminalreporter.write_line(f"report: {where}/index.html, {where}/summary.json{note}")

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str],
                                    session: pytest.Session) -> None:
        from pytest_toolsandbox.report.site import CATEGORY_TABLE_STYLE, category_table

        aggregates = self.collector.aggregates()
        if aggregates:
            prefix.append(f"<style>{CATEGORY_TABLE_STYLE}</style><h2>ToolSandbox per-category results</h2>"
                          + category_table(aggregates, self.settings.trials, link_root=None))
