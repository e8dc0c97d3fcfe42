"""pytest hooks of pytest-toolsandbox: options, scenario collection, fixtures, the scenario test,
results on test reports, and the controller-side summary, terminal table and reports.

Each scenario file is collected as a module (`ScenarioFile`) holding one real test function,
`test_scenario`, parametrized in `pytest_generate_tests` by (agent, variant, trial). Node ids are
therefore `scenarios/<dir>/<file>.yaml::test_scenario[<variant>]`, and every pytest feature that
works on ordinary tests (fixtures of any scope, conftest overrides, -k, -m, --lf, --sw, --deselect,
xdist) works on scenarios; docs/plugin.md explains why this collection approach was chosen.
"""

from __future__ import annotations

import copy
import functools
import importlib
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolsandbox.heap import freeze_heap, freeze_settled_heap, thaw_heap
from pytest_toolsandbox.item_ids import agent_label as _agent_label
from pytest_toolsandbox.options import (
    DEPRECATED_FLAGS,
    OPTIONS,
    REMOVED_INI,
    Found,
    Option,
    OptionError,
    Settings,
    display,
    read_settings,
)

if TYPE_CHECKING:
    from pytest_toolsandbox.ahead import AheadEpisode, EpisodePool
    from pytest_toolsandbox.budget import Budget
    from pytest_toolsandbox.evaluation.result import Evaluation
    from pytest_toolsandbox.report.collector import RunCollector
    from pytest_toolsandbox.report.progress import Emitter, Progress
    from pytest_toolsandbox.roles.base import Agent, User
    from pytest_toolsandbox.roles.resolve import RoleFactory
    from pytest_toolsandbox.scenario.models import Scenario
    from pytest_toolsandbox.scheduler import EpisodeScheduler
    from pytest_toolsandbox.world.trajectory import Trajectory
    from pytest_toolsandbox.world.world import World

TEST_NAME = "test_scenario"


# ---------------------------------------------------------------------------------------------
# Failures raised by the scenario test; their message replaces the traceback in the report.


class ToolsandboxError(Exception):
    """Base of the plugin's own failures: the report shows `str(error)`, never a traceback."""


class ScenarioFailed(ToolsandboxError, pytest.fail.Exception):
    """The trajectory's similarity stayed under the threshold (the agent's failure).

    Also a `pytest.fail` outcome without traceback (`pytrace=False`): pytest then renders the failure as
    its message instead of formatting the whole traceback with source lines (which the report replaces
    by the message anyway) — that formatting was the largest per-item cost of a run of failing items."""

    def __init__(self, message: str) -> None:
        pytest.fail.Exception.__init__(self, message, pytrace=False)


class EpisodeError(ToolsandboxError):
    """A role crashed during the episode: an infrastructure error, reported as a test error."""

    def __init__(self, message: str, trajectory: Trajectory) -> None:
        super().__init__(message)
        self.trajectory = trajectory


class RoleError(ToolsandboxError):
    """An agent or user simulator could not be created for a scenario."""


class CassetteFileError(ToolsandboxError):
    """The item's cassette exists but cannot be replayed: an error of this item only, never re-recorded."""


class EpisodeTimeoutError(ToolsandboxError):
    """The episode outlived --episode-timeout: an infrastructure error of this item only."""


class InputTooLargeError(ToolsandboxError):
    """An input of this item (its cassette) is over a size limit (`limits.py`): an error of this item only."""


# Exceptions a role may raise that keep their pytest meaning (Ctrl-C, pytest.skip/fail/xfail/exit);
# every other BaseException from a role (SystemExit, GeneratorExit, …) errors its item alone.
PASSTHROUGH: tuple[type[BaseException], ...] = (KeyboardInterrupt, pytest.skip.Exception, pytest.fail.Exception,
                                                pytest.exit.Exception, pytest.xfail.Exception)


# ---------------------------------------------------------------------------------------------
# Options and ini keys (declared and validated in options.py), and the run's settings.


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    group = parser.getgroup("toolsandbox", "ToolSandbox scenario evaluation")
    for option in OPTIONS:
        group.addoption(option.flag, dest=option.dest, action="append" if option.append else "store",
                        default=None, metavar=option.metavar, help=option.help)
        if option.ini:
            parser.addini(option.ini, f"{option.help} [--{option.flag.lstrip('-')}]", type=option.ini_type,
                          default=option.default)
    by_flag = {option.flag: option for option in OPTIONS}
    for old, new in DEPRECATED_FLAGS.items():
        if not _owned_by_another_plugin(old, pluginmanager):
            group.addoption(old, dest=by_flag[new].dest, action="append", default=None,
                            metavar=by_flag[new].metavar, help=f"deprecated spelling of {new}")
    for old, new in REMOVED_INI.items():
        parser.addini(old, f"replaced by {new}", default="")


def _owned_by_another_plugin(flag: str, pluginmanager: pytest.PytestPluginManager) -> bool:
    """pytest-base-url registers `--base-url`; two plugins registering one flag break every pytest command,
    whichever loads first, so the alias steps aside whenever that plugin is installed and not disabled
    (`-p no:base_url`)."""
    from importlib.util import find_spec

    return (flag == "--base-url" and find_spec("pytest_base_url") is not None
            and not pluginmanager.is_blocked("base_url"))


_PATH_FLAGS = ("--baseline", "--report-dir", "--scenarios", "--resume", "--price-table", "--update-baseline",
               "--ts-markdown")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Keep `--baseline X` (space form) from moving the rootdir.

    pytest decides the rootdir and ini file from the free command-line arguments *before* it loads
    plugins, so the value of a plugin's option in space form counts as a test path: with a baseline
    outside the repository the project's ini file is ignored and other tests run, silently. This
    hook is the first moment the plugin's options are known: the setup is decided again from the
    real free arguments and, when it differs, the config takes the right rootdir, ini file and
    addopts before any conftest or test path is looked at.
    """
    if not any(arg in _PATH_FLAGS for arg in args):
        return
    from _pytest.config.findpaths import determine_setup

    old_root, old_ini = early_config.rootpath, early_config.inipath
    old_addopts = list(early_config.getini("addopts"))
    given = args[len(old_addopts):] if args[:len(old_addopts)] == old_addopts else args
    namespace = parser.parse_known_args(given)
    try:
        root, ini, inicfg, *ignored = determine_setup(
            inifile=namespace.inifilename, override_ini=namespace.override_ini, args=namespace.file_or_dir,
            rootdir_cmd_arg=namespace.rootdir or None, invocation_dir=early_config.invocation_params.dir)
    except TypeError:  # another pytest signature: say how to avoid the problem instead of guessing
        raise pytest.UsageError("pass path options of pytest-toolsandbox as --option=PATH with this pytest "
                                "version (the space form would be taken for a test path)") from None
    if (root, ini) == (old_root, old_ini):
        return
    early_config._rootpath, early_config._inipath, early_config._inicfg = root, ini, inicfg
    if ignored:
        early_config._ignored_config_files = ignored[0]
    early_config._inicache.clear()
    parser.extra_info.update(rootdir=str(root), inifile=str(ini))
    args[:] = [*early_config.getini("addopts"), *given]
    known = parser.parse_known_args(args, namespace=copy.copy(early_config.option))
    if known.confcutdir is None:  # as pytest derives it: the ini file's directory, else the rootdir
        known.confcutdir = str(ini.parent if ini else root)
    early_config.known_args_namespace = known


_SETTINGS = pytest.StashKey[Settings]()


def _settings_from(config: pytest.Config) -> Settings:
    """Command-line values are relative to the invocation directory, ini values to the rootdir."""

    def lookup(option: Option) -> Found:
        value = config.getoption(option.dest)
        if value is not None:
            return Found(value, config.invocation_params.dir, given=True)
        return Found(config.getini(option.ini) if option.ini else None, config.rootpath)

    for old, new in REMOVED_INI.items():
        if config.getini(old):
            raise pytest.UsageError(f"ini {old} was replaced by {new}, which names the model each URL is for "
                                    f"(one SPEC=URL per line), e.g. {new} = openai:MODEL={config.getini(old)}")
    for old, new in DEPRECATED_FLAGS.items():
        if any(arg == old or arg.startswith(f"{old}=") for arg in config.invocation_params.args):
            config.issue_config_time_warning(pytest.PytestDeprecationWarning(
                f"toolsandbox: {old} is deprecated, use {new} (pytest-base-url owns {old})"), stacklevel=2)
    try:
        return read_settings(lookup, config.rootpath, getattr(config, "workerinput", {}).get("toolsandbox_baseline"))
    except OptionError as error:
        raise pytest.UsageError(str(error)) from None


def settings(config: pytest.Config) -> Settings:
    """The run's validated toolsandbox settings."""
    return config.stash[_SETTINGS]


def _build_role(factory: RoleFactory, scenario: Scenario, case: Case, prompts: str = "ours") -> Any:
    """An agent or user simulator for one item (resolution lives in roles/resolve.py)."""
    from pytest_toolsandbox.roles.resolve import RoleSpecError
    from pytest_toolsandbox.tools.errors import describe_exception

    try:
        role = factory(scenario, case.recording_id or case.id)
    except RoleSpecError as error:
        raise RoleError(str(error)) from None
    except PASSTHROUGH:
        raise
    except BaseException as error:  # e.g. a missing API key: one line, not a traceback per item
        raise RoleError(f"--agent/--user for {case.agent!r}: cannot build the role for {scenario.path}: "
                        f"{describe_exception(error)}") from None
    if prompts == "reference" and hasattr(role, "raw_instruction"):
        role.raw_instruction = True  # the reference's instruction is complete as it stands
    return role


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
    config.add_cleanup(functools.partial(thaw_heap, config))
    config.stash[_SETTINGS] = _settings_from(config)
    _configure_rate_limits(settings(config))
    _configure_prices(config)
    _configure_budget(config)
    if hasattr(config, "workerinput"):
        config.stash[_DONE] = frozenset(config.workerinput.get("toolsandbox_done", ()))
    else:
        _early_preflight(config)
        config.pluginmanager.register(_Controller(config), "toolsandbox-controller")


def _configure_prices(config: pytest.Config) -> None:
    """`--price-table`: LiteLLM's maintained prices before the bundled ones (without it, an installed
    litellm's copy is looked for when the first item is priced: report/usage.py)."""
    path = settings(config).price_table
    if path is None:
        return
    from pytest_toolsandbox.report.litellm_prices import PriceTableError, read_litellm
    from pytest_toolsandbox.report.usage import use_maintained_prices

    try:
        use_maintained_prices(read_litellm(path))
    except PriceTableError as error:
        raise pytest.UsageError(f"--price-table: {error}") from None


_BUDGET = pytest.StashKey["Budget"]()


def _configure_budget(config: pytest.Config) -> None:
    """`--max-spend` / `--max-run-tokens` (budget.py): the caps, and the hook that stops starting episodes."""
    run = settings(config)
    if run.max_spend is None and run.max_run_tokens is None:
        return
    from pytest_toolsandbox.budget import Budget

    budget = Budget(run.max_spend, run.max_run_tokens, run.report_dir)
    config.stash[_BUDGET] = budget
    if not hasattr(config, "workerinput"):
        budget.start()
    config.pluginmanager.register(_BudgetStop(), "toolsandbox-budget")


def _budget(config: pytest.Config) -> Budget | None:
    return config.stash.get(_BUDGET, None)


def _budget_reached(config: pytest.Config) -> str | None:
    budget = _budget(config)
    return budget.reached() if budget is not None else None


class _BudgetStop:
    """Once the budget is spent, an item whose episode has not started is not run (no report, no record)
    and the session stops: `--resume` runs those items later."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        reason = _budget_reached(item.config)
        if reason is None or not _is_scenario_id(item.nodeid):
            return None
        ahead = _ahead(item)
        if ahead is not None and ahead.job is not None and ahead.job.started is not None:
            return None  # its episode is playing: it finishes and keeps its result
        item.session.shouldstop = f"toolsandbox: {reason}"
        return True


def _configure_rate_limits(run: Settings) -> None:
    """The process's shared limiter for live requests (each xdist worker takes its share)."""
    from pytest_toolsandbox.recording.ratelimit import configure_limits

    configure_limits(run.rpm, run.tpm, max_request_tokens=run.max_request_tokens)


def _early_preflight(config: pytest.Config) -> None:
    """Stop at once (before collection and before xdist starts workers) when a model agent has no
    cassette at all and can neither replay nor record; the per-item check after collection does the rest."""
    import os
    import shlex

    from pytest_toolsandbox.recording.cassettes import pair_folder
    from pytest_toolsandbox.recording.preflight import early_problem, models_of

    run = settings(config)
    if config.option.collectonly or getattr(config.option, "help", False):
        return
    pairs = [(pair_folder(agent, run.user), models) for agent in run.agents
             if (models := models_of([agent, run.user], run.model_options))]
    if not pairs:
        return
    command = shlex.join(["pytest", *config.invocation_params.args])
    message = early_problem(pairs, run.cassette_dir, run.record_mode, command,
                            display(run.cassette_dir, config.invocation_params.dir), _local_script(config))
    if message is not None:
        why = " ($CI is set, so the default record mode is none)" if os.environ.get("CI") else ""
        raise pytest.UsageError(message.replace("forbids recording them.", f"forbids recording them{why}.", 1))


IMPORTED_MARKER = "reference-prompts.json"
"""The file `import-toolsandbox` writes beside the reference benchmark's imported scenarios (the same
name as `roles.reference_prompts.PROMPTS_FILE`, kept here so that collection imports nothing)."""


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A folder of imported reference-benchmark scenarios runs only when named (as a path argument or in
    `--scenarios`): a plain `pytest` keeps running the project's own suite after an import."""
    if not (collection_path / IMPORTED_MARKER).is_file():
        return None
    folder = collection_path.resolve()
    named = [Path(config.invocation_params.dir, arg.split("::")[0]).resolve() for arg in config.args]
    named += [Path(root).resolve() for root in settings(config).scenario_roots]
    return None if any(path == folder or path.is_relative_to(folder) for path in named) else True


def _local_script(config: pytest.Config) -> str | None:
    """The project's local model server script as the user would type it, when the project has one."""
    from pytest_toolsandbox.recording.preflight import LOCAL_SERVER_SCRIPT

    script = config.rootpath / LOCAL_SERVER_SCRIPT
    return display(script, config.invocation_params.dir) if script.is_file() else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """YAML files under a scenario directory, or named on the command line, are scenarios."""
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    roots = settings(parent.config).scenario_roots
    if parent.session.isinitpath(file_path) or any(file_path.is_relative_to(root) for root in roots):
        parent.config.stash[_SCENARIO_FOUND] = True
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


_SCENARIO_FOUND = pytest.StashKey[bool]()
"""Set when collection meets a scenario file: a run stopped during collection may be a scenario run."""


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

    @functools.cached_property
    def page_context(self) -> dict[str, Any]:
        """The scenario's goal, knowledge and reference dialogue for trajectory pages, rendered once
        for all its items."""
        from pytest_toolsandbox.report.trajectory_html import scenario_context

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
            from pytest_toolsandbox.agent_override import ignored_agent_option

            self.config.stash[_AGENT_CHECKED] = True
            reason = ignored_agent_option(collected[0], __name__, settings(self.config).agents)
            if reason:
                raise self.CollectError(reason)
        return collected


_AGENT_CHECKED = pytest.StashKey[bool]()


@dataclass(frozen=True)
class Case:
    """The parameters of one scenario item: which agent, which variant, which trial (1-based)."""

    agent: str
    variant: str
    trial: int
    id: str
    recording_id: str = ""
    """The id without the agent part: what `replay:DIR` looks up, whichever agents this run has."""


def _case(agent: str, variant: str, trial: int, run: Settings) -> Case:
    """The variant always; the agent only when several run, the trial only when several run."""
    parts = [variant, f"t{trial}"] if run.trials > 1 else [variant]
    recording = "-".join(parts)
    if len(run.agents) > 1:
        parts.insert(0, _agent_label(agent, run.agents))
    return Case(agent, variant, trial, "-".join(parts), recording)


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
            elif scenario.solvable_in is not None and variant not in scenario.solvable_in:
                marks.append(pytest.mark.xfail(reason=f"not solvable with the tools {variant} offers (solvable_in: "
                                               f"{', '.join(scenario.solvable_in)})", raises=ScenarioFailed,
                                               strict=False))
            for trial in range(1, config.trials + 1):
                case = _case(agent, variant, trial, config)
                params.append(pytest.param(case, id=case.id, marks=marks))
    metafunc.parametrize("toolsandbox_case", params)


def _probe_roles(config: pytest.Config, scenario: Scenario, cases: list[Case]) -> str | None:
    """Build every --agent / --user once before the run; the reason the first one cannot be built (a
    missing API key), so that it is one usage error instead of a traceback per item."""
    from pytest_toolsandbox.roles.resolve import RoleSpecError

    run = settings(config)
    for case in cases:
        for factory in (run.agent_factories[case.agent], run.user_factory):
            try:
                _build_role(factory, scenario, case)
            except RoleError as error:
                if not isinstance(error.__context__, RoleSpecError):  # e.g. nothing recorded for one replay item
                    return str(error)
    return None


_DONE = pytest.StashKey[frozenset[str]]()
"""`--resume`: the items with a finished record in the resumed directory (read by the controller, shipped
to xdist workers so that every worker deselects the same items)."""


def _deselect(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the items of other shards (`--ts-shard`) and those already done (`--resume`)."""
    run = settings(config)
    done = config.stash.get(_DONE, frozenset())
    if run.shard is None and not done:
        return
    from pytest_toolsandbox.shard import scenario_path, shards

    scenario_items = {item.nodeid for item in items if _is_scenario_id(item.nodeid)}
    assigned = shards(map(scenario_path, scenario_items), run.shard[1]) if run.shard else {}
    kept, dropped = [], []
    for item in items:
        scenario = item.nodeid in scenario_items
        outside = scenario and run.shard is not None and assigned[scenario_path(item.nodeid)] != run.shard[0]
        (dropped if outside or (scenario and item.nodeid in done) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Shards and resumed runs select their items; without xdist, probe the roles here (under xdist the
    controller does, see _Controller)."""
    _deselect(config, items)
    if hasattr(config, "workerinput") or getattr(config.option, "numprocesses", None):
        return
    cases: dict[str, Case] = {}
    scenario = None
    for item in items:
        parent = item.getparent(ScenarioFile)
        case = getattr(item, "callspec", None) and item.callspec.params.get("toolsandbox_case")
        if parent is not None and case:
            scenario = scenario or parent.scenario
            cases.setdefault(case.agent, case)
    reason = _probe_roles(config, scenario, list(cases.values())) if scenario is not None else None
    if reason is not None:
        raise pytest.UsageError(reason)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """A plain test run (no scenario collected) leaves the garbage collector alone."""
    if any(isinstance(item.parent, ScenarioFile) for item in session.items):
        freeze_heap(session.config)


# ---------------------------------------------------------------------------------------------
# Concurrent episodes (--concurrency N, see ahead.py): the episodes of upcoming items start early.

_POOL = pytest.StashKey["EpisodePool | None"]()
_WARNED_SEQUENTIAL = pytest.StashKey[bool]()
_OVERRIDDEN = pytest.StashKey[list[str]]()


def _pool(session: pytest.Session) -> EpisodePool | None:
    """The process's episode pool, created when the first item runs (None: one episode at a time)."""
    config = session.config
    if _POOL not in config.stash:
        option, run = config.option, settings(config)
        inspecting = option.collectonly or getattr(option, "setuponly", False) or getattr(option, "setupplan", False)
        pool = None
        if run.concurrency > 1 and not inspecting:
            from pytest_toolsandbox.ahead import EpisodePool

            warm_ups = [functools.partial(_import_all, names) for names in WARM_UP_IMPORTS]
            if not hasattr(config, "workerinput"):  # xdist workers write no report
                warm_ups[:0] = [functools.partial(_import_all, ("matplotlib",)), _load_charts]
            pool = EpisodePool(session, run.concurrency, _play_ahead, warm_ups)
        config.stash[_POOL] = pool
    return config.stash[_POOL]


def _ahead(item: pytest.Item) -> AheadEpisode | None:
    """This item's episode when it was started early by the pool."""
    pool = item.config.stash.get(_POOL, None)
    return pool.get(item) if pool is not None else None


WARM_UP_IMPORTS: tuple[tuple[str, ...], ...] = (
    ("pint", "holidays", "geopy.distance"),  # what the tools import at their first call
    ("scipy.optimize",),  # most of the scorer's import
    ("pytest_toolsandbox.evaluation.score", "pytest_toolsandbox.report.failure", "pytest_toolsandbox.report.record"),
    ("scipy.stats",),  # most of nltk's package import
    ("nltk.stem.porter",),  # the scorer's stemmer
)
"""What a concurrent run imports while every running episode waits for its model (`EpisodePool.idle`):
what the items need soon, a second of CPU that would otherwise land in the middle of the run (at a
tool's first call, at the first scoring). In steps of at most a few hundred milliseconds, each started
only where no answer is due. The report's charts (matplotlib, half a second) come first where a report
is written: what is not loaded by the end is loaded after the last item, when nothing overlaps it."""


def _import_all(names: tuple[str, ...]) -> None:
    """One warm-up step: import `names` (each once per process; later imports are lookups)."""
    for name in names:
        importlib.import_module(name)


def _load_charts() -> None:
    """Set up the report's charts (the parts of matplotlib they use) while episodes wait for their
    models, instead of after the last item, on the way to the exit."""
    from pytest_toolsandbox.report import charts

    charts.load()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    pool = _pool(item.session)
    if pool is not None:
        pool.feed(item)
    try:
        return (yield)
    finally:
        if pool is not None:
            pool.forget(item)
        freeze_settled_heap(item.config)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Ctrl-C, -x or the end: episodes not yet taken by their items are dropped (their items never ran)."""
    pool = session.config.stash.get(_POOL, None)
    if pool is not None:
        pool.close()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With concurrent episodes under `--dist load`, keep each worker's queue as deep as the episodes it
    can play ahead (see xdist_schedule.py); otherwise xdist's own scheduling."""
    concurrency = settings(config).concurrency
    if concurrency <= 1 or config.getoption("dist", None) != "load":
        return None
    from pytest_toolsandbox.ahead import AHEAD_PER_SLOT
    from pytest_toolsandbox.xdist_schedule import ConcurrentLoadScheduling

    # the item running, the one xdist holds as next, and the episodes played ahead of them
    return ConcurrentLoadScheduling(config, log, depth=AHEAD_PER_SLOT * concurrency + 2)


def _play_ahead(item: pytest.Item, scheduler: EpisodeScheduler) -> AheadEpisode | None:
    """Build `item`'s roles, world and cassette as the plugin's fixtures would, and submit its episode;
    None when the item must play in its own turn."""
    from pytest_toolsandbox.ahead import AheadEpisode, overridden_fixtures
    from pytest_toolsandbox.offpolicy import OFF_POLICY_USER
    from pytest_toolsandbox.scenario.world_builder import build_world
    from pytest_toolsandbox.scheduler import Job

    parent = item.getparent(ScenarioFile)
    case = getattr(item, "callspec", None) and item.callspec.params.get("toolsandbox_case")
    run = settings(item.config)
    if parent is None or not isinstance(case, Case) or run.user == OFF_POLICY_USER:
        return None  # off-policy episodes are scored turn by turn while they play
    if _budget_reached(item.config) is not None:
        return None  # no new episode once the budget is spent (see _BudgetStop)
    replaced = overridden_fixtures(item, __name__)
    if replaced:
        item.stash[_OVERRIDDEN] = replaced  # warned about once, from inside the item (see _warn_sequential)
        return None
    ahead = AheadEpisode(scheduler, timeout=run.episode_timeout)
    try:  # whatever the item owns fails as that item's error, in its own turn: never the pool's
        scenario = parent.scenario
        ahead.agent = _build_role(run.agent_factories[case.agent], scenario, case)
        ahead.user = _build_role(run.user_factory, scenario, case, run.prompts)
        ahead.world = build_world(scenario, run.prompts)
        ahead.recording = _episode_recording(run, scenario, case)
        if run.tool_backend == "rapidapi":
            from pytest_toolsandbox.tools.rapidapi import RapidAPIBackend

            ahead.backend = RapidAPIBackend()
    except KeyboardInterrupt:
        raise
    except (ToolsandboxError, *PASSTHROUGH) as error:
        ahead.error = error
        return ahead
    except BaseException as error:
        from pytest_toolsandbox.tools.errors import describe_exception

        ahead.error = ToolsandboxError(f"{item.nodeid}: preparing the episode raised {describe_exception(error)}")
        return ahead
    ahead.job = scheduler.submit(Job(functools.partial(_play, ahead, scenario, case, run)))
    return ahead


def _play(ahead: AheadEpisode, scenario: Scenario, case: Case, run: Settings) -> Trajectory:
    """An episode played on a scheduler thread, inside its own cassette and search backend."""
    from contextlib import ExitStack

    from pytest_toolsandbox.episode import run_episode

    with ExitStack() as stack:
        if ahead.recording is not None:
            stack.enter_context(ahead.recording.activate())
        if ahead.backend is not None:
            from pytest_toolsandbox.tools.backends import use_backend

            stack.enter_context(use_backend(ahead.backend))
        trajectory = run_episode(scenario, ahead.agent, ahead.user, variant=case.variant,
                                 max_messages=run.max_messages, world=ahead.world, passthrough=PASSTHROUGH)
    if ahead.recording is not None and trajectory.ended_by != "error":
        from pytest_toolsandbox.interruption import critical

        with critical():  # a forced stop must not leave half a cassette
            ahead.recording.finish(keep=True)  # here, off pytest's main thread, and before the item reports
    return trajectory


def _episode_recording(run: Settings, scenario: Scenario, case: Case) -> Any:
    """The item's cassette, used only by its own episode (None when no role is a model and search is
    offline: nothing goes over HTTP)."""
    from pytest_toolsandbox.recording.preflight import models_of

    if not models_of([case.agent, run.user], run.model_options) and run.tool_backend == "offline":
        return None
    from pytest_toolsandbox.limits import LimitExceeded
    from pytest_toolsandbox.recording.cassette_check import CassetteError
    from pytest_toolsandbox.recording.cassettes import cassette_path
    from pytest_toolsandbox.recording.episode_recording import EpisodeRecording

    try:
        return EpisodeRecording(cassette_path(run.cassette_dir, scenario.path, case.agent, run.user, case.variant,
                                              case.trial), run.record_mode, limits=run.limits)
    except LimitExceeded as error:
        raise InputTooLargeError(str(error)) from None
    except CassetteError as error:
        raise CassetteFileError(str(error)) from None


def _warn_sequential(item: pytest.Item) -> None:
    """Once per process: items with overridden episode fixtures play in their own turn. Warned from the
    item's own fixture, so pytest's warning capture shows it in the warnings summary (also under xdist)."""
    replaced = item.stash.get(_OVERRIDDEN, None)
    if not replaced or item.config.stash.get(_WARNED_SEQUENTIAL, False):
        return
    item.config.stash[_WARNED_SEQUENTIAL] = True
    concurrency = settings(item.config).concurrency
    item.warn(pytest.PytestWarning(
        f"toolsandbox: --concurrency {concurrency} does not apply to items whose {', '.join(replaced)} "
        "fixture is overridden (a conftest.py fixture is built only when its item is set up): they play one "
        "episode at a time. Name your agent with --agent module:factory (built per item by the plugin) to "
        "play it concurrently; see docs/plugin.md, Concurrency."))


# ---------------------------------------------------------------------------------------------
# Fixtures (override any of them in a conftest.py; see docs/plugin.md).


@dataclass(frozen=True)
class ItemContext:
    """What the plugin's fixtures need from pytest's `request`, taken once per item.

    Every fixture that names `request` makes pytest build a fixture definition for it per item
    (inspecting a signature each time); the plugin's fixtures share this one instead."""

    node: pytest.Item
    run: Settings
    ahead: AheadEpisode | None
    """The item's episode when the pool started it early (`--concurrency`)."""


@pytest.fixture
def _toolsandbox_item(request: pytest.FixtureRequest) -> ItemContext:
    """The item, the run's settings and its early-started episode (private: shared by the fixtures below)."""
    return ItemContext(request.node, settings(request.config), _ahead(request.node))


@pytest.fixture
def toolsandbox_scenario(_toolsandbox_item: ItemContext) -> Scenario:
    """The scenario of this item, as loaded from its YAML file."""
    node = _toolsandbox_item.node.getparent(ScenarioFile)
    if node is None:
        pytest.fail("toolsandbox_scenario is only available to scenario items", pytrace=False)
    return node.scenario


@pytest.fixture
def toolsandbox_agent(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario, toolsandbox_case: Case) -> Agent:
    """The agent under test, built from --agent. Override it to evaluate your own agent."""
    if _toolsandbox_item.ahead is not None:
        return _toolsandbox_item.ahead.part("agent")
    factory = _toolsandbox_item.run.agent_factories[toolsandbox_case.agent]
    return _build_role(factory, toolsandbox_scenario, toolsandbox_case)


@pytest.fixture
def toolsandbox_user(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario, toolsandbox_case: Case) -> User:
    """The user simulator, built from --user."""
    if _toolsandbox_item.ahead is not None:
        return _toolsandbox_item.ahead.part("user")
    run = _toolsandbox_item.run
    return _build_role(run.user_factory, toolsandbox_scenario, toolsandbox_case, run.prompts)


@pytest.fixture
def toolsandbox_threshold(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario) -> float | None:
    """Similarity needed to pass: the scenario file's own threshold, else --threshold; None when
    neither is set, and then the verdict decides (every milestone reached, no minefield fired)."""
    explicit = toolsandbox_scenario.explicit_threshold
    return explicit if explicit is not None else _toolsandbox_item.run.threshold


@pytest.fixture
def toolsandbox_start_world(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario) -> World:
    """The world the episode starts in: the default world with the scenario's patch and first messages.
    Override it to start a scenario from another state."""
    ahead = _toolsandbox_item.ahead
    if ahead is not None:
        return ahead.part("world")
    from pytest_toolsandbox.scenario.world_builder import build_world

    return build_world(toolsandbox_scenario, _toolsandbox_item.run.prompts)


@pytest.fixture
def toolsandbox_cassette(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario,
                         toolsandbox_case: Case) -> Iterator[Any]:
    """The item's `EpisodeRecording` (its cassette), the current one in this context while the episode
    runs; None when no role is a model. Only this episode's roles send through it (no process-wide
    patching), so episodes may run at once. An episode that ends in an error leaves no new cassette."""
    ahead = _toolsandbox_item.ahead
    recording = (ahead.part("recording") if ahead is not None
                 else _episode_recording(_toolsandbox_item.run, toolsandbox_scenario, toolsandbox_case))
    if recording is None:
        yield None
        return
    try:
        if ahead is not None:  # activated on the scheduler thread that plays the episode
            yield recording
        else:
            with recording.activate():
                yield recording
    finally:
        recording.finish(keep="toolsandbox_trajectory" in (_toolsandbox_item.node.funcargs or {}))  # None after Ctrl-C


@pytest.fixture
def toolsandbox_tool_backend(_toolsandbox_item: ItemContext, toolsandbox_cassette: Any) -> Iterator[Any]:
    """The search backend while the episode runs: None for the bundled offline one, or the RapidAPI
    backend (`--tool-backend rapidapi`), whose requests go into the item's cassette."""
    ahead = _toolsandbox_item.ahead
    if ahead is not None:  # set inside the episode's own thread
        yield ahead.part("backend")
        return
    if _toolsandbox_item.run.tool_backend == "offline":
        yield None
        return
    from pytest_toolsandbox.tools.backends import use_backend
    from pytest_toolsandbox.tools.rapidapi import RapidAPIBackend

    with use_backend(RapidAPIBackend()) as backend:
        yield backend


@pytest.fixture
def toolsandbox_episode(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario, toolsandbox_agent: Agent,
                        toolsandbox_user: User, toolsandbox_case: Case, toolsandbox_start_world: World,
                        toolsandbox_cassette: Any, toolsandbox_tool_backend: Any) -> Callable[[], Trajectory]:
    """The episode runner: a no-argument callable playing this item's episode (inside the item's
    cassette). Override it to wrap episodes (rate limits) without touching the agent."""
    from pytest_toolsandbox.episode import run_episode
    from pytest_toolsandbox.offpolicy import OFF_POLICY_USER, OffPolicyEpisode

    ahead = _toolsandbox_item.ahead
    if ahead is not None:
        return ahead
    run = _toolsandbox_item.run
    if run.user == OFF_POLICY_USER:
        return OffPolicyEpisode(toolsandbox_scenario, toolsandbox_agent, variant=toolsandbox_case.variant,
                                max_messages=run.max_messages, world=toolsandbox_start_world)
    return functools.partial(run_episode, toolsandbox_scenario, toolsandbox_agent, toolsandbox_user,
                             variant=toolsandbox_case.variant, max_messages=run.max_messages,
                             world=toolsandbox_start_world, passthrough=PASSTHROUGH)


_TRAJECTORY_JSON = pytest.StashKey[tuple[Any, str, Any]]()
"""(the trajectory, its JSON as the report keeps it, the trajectory that JSON holds)."""


@pytest.fixture
def toolsandbox_trajectory(_toolsandbox_item: ItemContext,
                           toolsandbox_episode: Callable[[], Trajectory]) -> Trajectory:
    """The played episode. A role that crashed makes this item an error, not an agent failure."""
    from pytest_toolsandbox.ahead import AheadEpisode
    from pytest_toolsandbox.tools.errors import describe_exception
    from pytest_toolsandbox.watchdog import EpisodeTimeout, call_with_timeout

    node = _toolsandbox_item.node
    timeout = _toolsandbox_item.run.episode_timeout
    _warn_sequential(node)
    try:
        if isinstance(toolsandbox_episode, AheadEpisode):  # started before this item's turn
            trajectory = toolsandbox_episode.wait(timeout)
        else:
            trajectory = call_with_timeout(toolsandbox_episode, timeout)
    except EpisodeTimeout as timeout:
        raise EpisodeTimeoutError(f"{node.nodeid}: {timeout}; raise the limit with --episode-timeout "
                                  "or the toolsandbox_episode_timeout ini key") from None
    except PASSTHROUGH:
        raise
    except BaseException as error:  # an overridden episode fixture may raise anything: this item errors alone
        raise ToolsandboxError(f"{node.nodeid}: the episode raised {describe_exception(error)}") from None
    # imported only now: the first item's import of these (with scipy) would hold the interpreter while the
    # first episodes start; during the wait above, a concurrent run imports them when nothing else runs
    from pytest_toolsandbox.report.failure import episode_error_message
    from pytest_toolsandbox.report.record import encodable
    from pytest_toolsandbox.report.truncation import for_report

    shown = for_report(trajectory, _toolsandbox_item.run.limits.max_message_chars)  # scoring keeps the full text
    text = shown.to_json()
    clean = encodable(text)
    if clean != text:  # lone surrogates (half an emoji): no file nor xdist channel takes them
        cut = shown is not trajectory
        shown = type(trajectory).from_json(clean)
        trajectory = type(trajectory).from_json(encodable(trajectory.to_json())) if cut else shown
    node.stash[_TRAJECTORY_JSON] = (trajectory, clean, shown)  # the report reuses it: serialised once
    if trajectory.ended_by == "error":
        raise EpisodeError(episode_error_message(trajectory, _page_hint(node)), trajectory)
    _save_recording(node.funcargs.get("toolsandbox_cassette"))
    return trajectory


def _save_recording(cassette: Any) -> None:
    """Save the item's cassette as soon as its episode has ended well, not at teardown: an interrupt
    between the item's report and its teardown must not keep the result but lose the recording."""
    if cassette is None:
        return
    from pytest_toolsandbox.recording.episode_recording import EpisodeRecording

    if isinstance(cassette, EpisodeRecording):
        cassette.finish(keep=True)


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
                             toolsandbox_threshold: float | None) -> list[str]:
    """Reasons to suspect the LLM user simulator spoiled the episode (empty for other users)."""
    from pytest_toolsandbox.roles.llm_user import LLMUser
    from pytest_toolsandbox.roles.simulator_guard import suspicions

    if not isinstance(toolsandbox_user, LLMUser):
        return []
    return suspicions(toolsandbox_scenario, toolsandbox_trajectory.messages,
                      milestones_met=_milestones_met(toolsandbox_evaluation, toolsandbox_threshold),
                      ended_by_user=toolsandbox_trajectory.ended_by == "user",
                      hit_cap=toolsandbox_trajectory.ended_by == "max_messages")


def _milestones_met(evaluation: Evaluation, threshold: float | None) -> bool:
    """Whether the agent did its part (for the simulator guard): every milestone reached, or the
    milestone similarity at the threshold when one is set."""
    if threshold is not None or evaluation.verdict is None:
        return evaluation.milestone_similarity >= (1.0 if threshold is None else threshold)
    return all(milestone.reached for milestone in evaluation.verdict.milestones)


def _page_hint(item: pytest.Item) -> str | None:
    """Where the item's trajectory page will be, as the user would type it."""
    from pytest_toolsandbox.report.collector import TRAJECTORY_DIR

    slug = _slug(item)
    if slug is None:
        return None
    page = settings(item.config).report_dir / TRAJECTORY_DIR / f"{slug}.html"
    return display(page, item.config.invocation_params.dir)


def _slug(item: pytest.Item) -> str | None:
    from pytest_toolsandbox.report.slug import trajectory_slug

    parent = item.getparent(ScenarioFile)
    case = getattr(item, "callspec", None) and item.callspec.params.get("toolsandbox_case")
    return trajectory_slug(parent.scenario.path, case.id) if parent is not None and case else None


def test_scenario(_toolsandbox_item: ItemContext, toolsandbox_case: Case, toolsandbox_scenario: Scenario,
                  toolsandbox_trajectory: Trajectory, toolsandbox_evaluation: Evaluation,
                  toolsandbox_threshold: float | None, toolsandbox_user_suspect: list[str]) -> None:
    """A scenario variant passes when every milestone is reached and no minefield fired (or, with a
    threshold set, when its similarity reaches the threshold)."""
    if toolsandbox_evaluation.passed(toolsandbox_threshold):
        return
    from pytest_toolsandbox.report.expected import expectations
    from pytest_toolsandbox.report.failure import failure_message

    baseline = _toolsandbox_item.run.baseline
    message = failure_message(
        toolsandbox_trajectory, toolsandbox_evaluation, toolsandbox_threshold,
        baseline_passed=(baseline.status(toolsandbox_case.agent, toolsandbox_scenario.path, toolsandbox_case.variant)
                         if baseline else None),
        report_path=_page_hint(_toolsandbox_item.node),
        expected=expectations(toolsandbox_scenario, toolsandbox_trajectory, toolsandbox_evaluation.milestones))
    raise ScenarioFailed(message + "".join(f"\n  user_sim_suspect: {reason}" for reason in toolsandbox_user_suspect))


# ---------------------------------------------------------------------------------------------
# Results on the test report (plain data, so they cross from xdist workers to the controller).


def _usage(role: object) -> dict[str, Any] | None:
    """What a role reports through `usage` (LLM roles), as plain JSON data; None otherwise.

    Real SDK usage is nested (`prompt_tokens_details`), holds None (`cache_creation_input_tokens`) or
    is a pydantic object: it is converted, never trusted."""
    from pytest_toolsandbox.jsondata import plain

    try:
        usage = plain(getattr(role, "usage", None))
    except Exception:  # a property that raises is no usage
        return None
    return usage if isinstance(usage, dict) else None


def _model(role: object) -> str | None:
    """A role's `model` as one line of text (an Enum, a client object or a raising property are data)."""
    from pytest_toolsandbox.jsondata import label

    try:
        return label(getattr(role, "model", None))
    except Exception:
        return None


def _off_policy(episode: object) -> dict[str, Any] | None:
    """Per-turn results of an off-policy episode (`--user=reference-history`); None otherwise."""
    from pytest_toolsandbox.offpolicy import OffPolicyEpisode

    return episode.as_json() if isinstance(episode, OffPolicyEpisode) and episode.turns else None


def _replayed(cassette: Any) -> bool | None:
    """Whether every request of the item came from its cassette (None: the item had no cassette)."""
    return None if cassette is None else cassette.replayed


def _record(item: pytest.Item, outcome: str, failure: BaseException | None, error: str | None) -> dict[str, Any]:
    from pytest_toolsandbox.jsondata import plain
    from pytest_toolsandbox.report.baseline import classify
    from pytest_toolsandbox.report.record import empty_evaluation_fields, evaluation_fields, trajectory_fields
    from pytest_toolsandbox.report.usage import usage_fields
    from pytest_toolsandbox.roles.base import role_name

    scenario: Scenario = item.getparent(ScenarioFile).scenario
    case: Case = item.callspec.params["toolsandbox_case"]
    values = item.funcargs
    config = settings(item.config)
    trajectory = values.get("toolsandbox_trajectory") or getattr(failure, "trajectory", None)
    evaluation = values.get("toolsandbox_evaluation")
    threshold = values.get("toolsandbox_threshold")
    baseline = config.baseline.status(case.agent, scenario.path, case.variant) if config.baseline else None
    tokens = {"agent": _usage(values.get("toolsandbox_agent")), "user": _usage(values.get("toolsandbox_user"))}
    models = {"agent": _model(values.get("toolsandbox_agent")), "user": _model(values.get("toolsandbox_user"))}
    return plain({  # plain JSON data whatever the roles exposed: it crosses the xdist channel and JSON files
        "id": item.nodeid, "scenario": scenario.name, "path": scenario.path,
        "categories": list(scenario.categories), "variant": case.variant, "trial": case.trial,
        "agent": role_name(values.get("toolsandbox_agent"), case.agent), "agent_spec": case.agent,
        "user": role_name(values.get("toolsandbox_user"), config.user),
        **trajectory_fields(trajectory),
        "agent_model": models["agent"], "user_model": models["user"],
        "outcome": outcome, "threshold": threshold,
        **(evaluation_fields(evaluation, threshold, _expected(scenario, trajectory, evaluation))
           if evaluation is not None else empty_evaluation_fields()),
        "tokens": tokens, **usage_fields(tokens, models, _replayed(values.get("toolsandbox_cassette"))),
        "user_sim_suspect": values.get("toolsandbox_user_suspect") or [],
        "off_policy": _off_policy(values.get("toolsandbox_episode")),
        "baseline": None if baseline is None else ("passed" if baseline else "failed"),
        "change": classify(baseline, outcome) if config.baseline and case.agent in config.baseline.passed
        else None,  # an agent the baseline does not gate has no change, not a "new" task
        "error": error,
    })


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

    from pytest_toolsandbox.recording.secrets import scrub_text
    from pytest_toolsandbox.report.trajectory_html import trajectory_fragment

    return [extras.html(scrub_text(trajectory_fragment(trajectory, record)))]  # pytest-html writes it, not us


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Outermost wrapper: sees the final outcome (after xfail handling) and attaches the record."""
    if call.excinfo is not None and isinstance(call.excinfo.value, ToolsandboxError):
        # the item's own error is its message (set below): pytest need not parse source files to format a
        # traceback nobody reads (and in a long test process that parse has failed inside CPython itself)
        call.excinfo.traceback = call.excinfo.traceback.filter(lambda _entry: False)
    report = yield
    parent = item.getparent(ScenarioFile)
    if parent is None or not hasattr(item, "callspec"):
        return report
    from pytest_toolsandbox.report.record import item_outcome
    from pytest_toolsandbox.report.terminal import terminal_safe

    report.toolsandbox_categories = list(parent.scenario.categories)
    # -v lines read the domain as a dotted name (`x.yaml` would show as `x::yaml`): the test name here;
    # the controller restores the node id for failure headlines once the line is printed.
    report.location = (parent.nodeid, None, item.name)
    failure = call.excinfo.value if call.excinfo is not None else None
    if isinstance(failure, ToolsandboxError) and report.failed:
        report.longrepr = terminal_safe(str(failure))
    outcome = item_outcome(report.when, report.outcome, hasattr(report, "wasxfail"))
    if outcome is None or report.when == "teardown":
        return report
    error = None
    if outcome == "error" and call.excinfo is not None:
        error = str(failure) if isinstance(failure, ToolsandboxError) else call.excinfo.exconly()[:2000]
    record = _record(item, outcome, failure, error)
    report.toolsandbox_record = record
    report.toolsandbox_slug = _slug(item)
    if item.config.getoption("xmlpath", None):  # --junitxml reads them from the item's teardown report
        from pytest_toolsandbox.report.junit import junit_properties

        item.user_properties.extend(junit_properties(record, report.toolsandbox_slug))
    report.toolsandbox_context = parent.page_context
    trajectory = item.funcargs.get("toolsandbox_trajectory") or getattr(failure, "trajectory", None)
    serialised = item.stash.get(_TRAJECTORY_JSON, None)
    if serialised is not None:  # items live to the session's end: so would their trajectories
        del item.stash[_TRAJECTORY_JSON]
    if trajectory is not None:
        if not (serialised and serialised[0] is trajectory):
            from pytest_toolsandbox.report.truncation import for_report

            shown = for_report(trajectory, settings(item.config).limits.max_message_chars)
            serialised = (trajectory, shown.to_json(), shown)
        report.toolsandbox_trajectory = serialised[1]
        if item.config.getoption("htmlpath", None):
            report.extras = [*getattr(report, "extras", []), *_html_extras(record, serialised[2])]
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_header(cells: list[str]) -> None:
    cells.insert(2, '<th class="sortable" data-column-type="category">Category</th>')
    cells.insert(3, '<th class="sortable" data-column-type="similarity">Similarity</th>')


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_row(report: pytest.TestReport, cells: list[str]) -> None:
    from pytest_toolsandbox.report.escaping import escape

    prefix = '<td class="col-testId">'
    for position, cell in enumerate(cells):  # pytest-html leaves the test id unescaped: a file name is data
        if cell.startswith(prefix) and cell.endswith("</td>") and _is_scenario_id(report.nodeid):
            cells[position] = prefix + escape(cell[len(prefix):-len("</td>")], quote=True) + "</td>"
    record = getattr(report, "toolsandbox_record", None) or {}
    score = record.get("score")
    cells.insert(2, f'<td class="col-category">{escape(", ".join(getattr(report, "toolsandbox_categories", [])))}</td>')
    cells.insert(3, f'<td class="col-similarity">{"" if score is None else f"{score:.4f}"}</td>')


# ---------------------------------------------------------------------------------------------
# The controller: the only process that sees every result and the only writer of reports.

AUTO_PROGRESS_ITEMS = 50
"""`--progress auto` shows the line for runs of more items than this even without a model role."""


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
        self.output_notes: list[str] = []
        self.runs_tests = False
        self.probed = False
        self.checked = False
        self.stopped = False
        self.baseline_summary = self._read_baseline()
        self.earlier = self._read_earlier()
        """`--resume`: the records of the run being completed, by item id."""
        self.emitter: Emitter | None = None
        self.progress_decided = False
        self.expected_ids: set[str] = set()
        """The selected scenario items (the order of the report's trajectory pages)."""
        self.failing_reports: dict[str, int] = {}
        """Failed reports per scenario item (what pytest counts in `session.testsfailed`)."""
        config.pluginmanager.register(_ProgressDisplay(self), "toolsandbox-progress")

    @functools.cached_property
    def progress(self) -> Progress:
        """The live progress counts, created (like the collector) once a scenario item is collected. A
        scheduler reports its real running count by setting `progress.running` to a no-argument
        callable (report/progress.py; without xdist the controller does it itself). At most `slots`
        episodes run at once: xdist workers × `--concurrency`."""
        from pytest_toolsandbox.report.progress import Progress

        workers = getattr(self.config.option, "numprocesses", None) or 0
        progress = Progress(slots=max(workers, 1) * self.settings.concurrency)
        if not workers and self.settings.concurrency > 1:
            progress.running = self._episodes_playing
        return progress

    def _episodes_playing(self) -> int | None:
        """Without xdist the episode scheduler is in this process: the episodes it plays now, and at
        least the item pytest is running (it may play its episode in its own turn); None before it starts."""
        pool = self.config.stash.get(_POOL, None)
        return None if pool is None else max(pool.scheduler.running, 1)

    def start_progress(self) -> Emitter | None:
        """Called as the first item starts, when the item count is known: whether and how the line shows."""
        if self.progress_decided:
            return self.emitter
        self.progress_decided = True
        if "progress" not in self.__dict__:  # no scenario item in this run: nothing to show, nothing imported
            return None
        from pytest_toolsandbox.recording.preflight import models_of
        from pytest_toolsandbox.report.progress import Emitter

        self.progress.begin()
        config, run = self.config, self.settings
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or config.option.verbose < 0 or run.progress == "off" or not self.progress.expected:
            return None
        models = any(models_of([agent, run.user], run.model_options) for agent in run.agents)
        if run.progress == "auto" and not (models or self.progress.expected > AUTO_PROGRESS_ITEMS):
            return None
        writer = config.get_terminal_writer()
        # other output while the status shows (-s or tee-sys prints, live logs) would land on it: plain lines then
        redraw = (reporter.isatty() and writer.hasmarkup and config.getoption("capture") not in ("no", "tee-sys")
                  and not config.getini("log_cli"))

        def write_line(text: str, last: bool) -> None:
            """A line of its own, after pytest's dots (under xdist pytest does not track that line). A
            line amid the run stays open when pytest starts its next output with a newline anyway (file
            names or -v lines, but not under xdist, which hides file names), which would otherwise leave
            an empty line."""
            reporter.ensure_newline()
            if writer.width_of_current_line:
                writer.line()
            writer.write(text)
            if last or not reporter.showfspath:
                writer.line()

        self.emitter = Emitter(self.progress, write_line, writer if redraw else None)
        return self.emitter

    def _read_baseline(self) -> dict[str, Any] | None:
        """The whole baseline summary, read now: this run may overwrite the file (same report dir)."""
        if self.settings.baseline is None:
            return None
        from pytest_toolsandbox.report.summary import SummaryError, load_summary

        try:
            return load_summary(self._baseline_path())
        except SummaryError:
            return None  # already reported as a usage error by read_settings when unreadable

    def _read_earlier(self) -> dict[str, Any]:
        if self.settings.resume is None:
            return {}
        from pytest_toolsandbox.resume import ResumeError, done, earlier_records

        try:
            records = earlier_records(self.settings.resume)
        except ResumeError as error:
            raise pytest.UsageError(f"--resume: {error}") from None
        self.config.stash[_DONE] = frozenset(done(records))
        return records

    def _baseline_path(self) -> Path:
        assert self.settings.baseline is not None
        return self.config.rootpath / self.settings.baseline.path

    @functools.cached_property
    def collector(self) -> RunCollector:
        """Created (and the report stack imported) only once a scenario item is collected or reported."""
        from pytest_toolsandbox.report.collector import RunCollector

        collector = RunCollector(self.settings.report_dir, self.settings.trials, resume=bool(self.earlier))
        collector.preload(self.earlier.values())
        if "progress" in self.__dict__:
            collector.expect(self.progress.expected, self.expected_ids)
        return collector

    def _expect(self, nodeids: Iterable[str]) -> None:
        """Count the selected scenario items. The report stack is not imported for that: at the end of
        collection it would delay the first episode by the import of its scoring modules."""
        ids = [nodeid for nodeid in nodeids if _is_scenario_id(nodeid)]
        if ids:
            self.expected_ids.update(ids)
            self.progress.expected = max(self.progress.expected, len(ids))
            if "collector" in self.__dict__:
                self.collector.expect(len(ids), ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        baseline = self.settings.baseline
        if baseline is not None:
            node.workerinput["toolsandbox_baseline"] = {"path": baseline.path, "passed": baseline.passed}
        node.workerinput["toolsandbox_done"] = sorted(self.config.stash.get(_DONE, frozenset()))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._expect(item.nodeid for item in session.items)
        self._preflight([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        scenario_ids = [nodeid for nodeid in ids if _is_scenario_id(nodeid)]
        if scenario_ids:
            freeze_heap(self.config)  # the controller keeps every record: its collections grow too
        self._expect(scenario_ids)
        if not self.checked:
            self._preflight(ids)
        if scenario_ids and not self.probed:
            self.probed = True
            reason = self._probe(scenario_ids[0])
            if reason is not None:
                self.stopped = True  # nothing ran: keep the last run's summary
                pytest.exit(reason, returncode=pytest.ExitCode.USAGE_ERROR)
            if self.runs_tests:
                self._remove_stale_summary()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """An overriding `toolsandbox_agent` that ignores `--agent` (see ScenarioFile.collect) stops the
        whole run, with or without xdist (whose workers would otherwise run the other files)."""
        from pytest_toolsandbox.agent_override import MESSAGE_START

        if report.failed and str(report.longrepr).startswith(MESSAGE_START):
            self.stopped = True
            pytest.exit("toolsandbox: stopped before the first item (the error above)",
                        returncode=pytest.ExitCode.USAGE_ERROR)

    def _probe(self, nodeid: str) -> str | None:
        """The roles built once for the first scenario, on the controller (workers cannot stop the run)."""
        from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario

        try:
            scenario = load_scenario(self.config.rootpath / nodeid.partition("::")[0])
        except ScenarioError:
            return None  # the workers report it as a collection error
        cases = [_case(agent, self.settings.variants[0], 1, self.settings) for agent in self.settings.agents]
        return _probe_roles(self.config, scenario.model_copy(update={"path": nodeid.partition("::")[0]}), cases)

    def _preflight(self, nodeids: list[str]) -> None:
        """Stop the whole run at once when model items lack a cassette (replay) or a key (record)."""
        import os
        import shlex

        from pytest_toolsandbox.recording.cassettes import cassette_path
        from pytest_toolsandbox.recording.preflight import RecordedItem, models_of, problem

        self.checked = True
        run = self.settings
        cases = {_case(agent, variant, trial, run).id: (agent, variant, trial)
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
                          environ_has_ci=bool(os.environ.get("CI")), local_script=_local_script(self.config))
        if message is not None:
            self.stopped = True
            pytest.exit(message, returncode=pytest.ExitCode.USAGE_ERROR)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """Only sessions that run tests write a report (not --fixtures, --collect-only, --setup-plan)."""
        option = self.config.option
        self.runs_tests = not (option.collectonly or getattr(option, "setuponly", False))
        if self.runs_tests and self._scenarios_selected():  # under xdist: when the workers' collections arrive
            self._remove_stale_summary()

    def _inspecting(self) -> bool:
        """Sessions that only show what would run (they never write or remove a report)."""
        option = self.config.option
        return any(getattr(option, name, False) for name in ("collectonly", "setuponly", "setupplan", "showfixtures",
                                                             "show_fixtures_per_test"))

    def _scenarios_selected(self) -> bool:
        return "progress" in self.__dict__ and self.progress.expected > 0

    def _remove_stale_summary(self) -> None:
        """Items are about to run (or a run stopped while collecting scenarios): the previous run's
        summary.json (and index.html) goes now, so that nothing that stops this run before its end writes
        (a hard kill, a crash of the interpreter) leaves it looking like this run's; the end of the session
        writes this run's, partial if need be."""
        from pytest_toolsandbox.report.summary import SUMMARY_NAME

        for name in (SUMMARY_NAME, "index.html"):
            try:
                (self.settings.report_dir / name).unlink(missing_ok=True)
            except OSError as error:  # a directory there, no permission: reported like any report write
                self.collector.write_errors.append(f"{error.filename or name}: {error.strerror or error}")

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not _is_scenario_id(report.nodeid):
            return
        from pytest_toolsandbox.report.trajectory_html import PageContext

        if report.failed and not hasattr(report, "wasxfail"):  # as pytest counts session.testsfailed
            self.failing_reports[report.nodeid] = self.failing_reports.get(report.nodeid, 0) + 1

        if report.location is not None:  # after the -v line: failure headlines name the scenario file
            report.location = (report.location[0], report.location[1], report.nodeid)
        trajectory = getattr(report, "toolsandbox_trajectory", None)
        if trajectory is not None:
            del report.toolsandbox_trajectory  # written to disk below; keep memory for records only
        context = getattr(report, "toolsandbox_context", None)
        budget = _budget(self.config)
        if budget is not None and getattr(report, "toolsandbox_record", None) is not None:
            budget.add(report.toolsandbox_record)
        self.collector.add_phase(report.nodeid, report.when, report.failed, report.duration,
                                 getattr(report, "worker_id", None), getattr(report, "toolsandbox_record", None),
                                 trajectory, getattr(report, "toolsandbox_slug", None),
                                 PageContext(context["goal"], context["knowledge"], tuple(context["reference"]))
                                 if context else None)
        done = self.progress.done
        if report.when == "???":
            self.progress.amend(report.nodeid, "error")
        elif report.nodeid in self.collector.records and (hasattr(report, "toolsandbox_record") or report.failed):
            self.progress.add(report.nodeid, self.collector.records[report.nodeid])  # its outcome as the summary's
        if self.emitter is not None and self.progress.done > done:
            self.emitter.item_finished()

    def _judge_trials(self, baseline: dict[str, Any] | None) -> list[Any]:
        """With trials and a baseline: each task's verdict (regressed / noisy), added to `baseline`."""
        if baseline is None or self.baseline_summary is None or self.settings.trials < 2:
            return []
        from pytest_toolsandbox.report.gate import gate_summary, judge

        alpha = self.settings.baseline_alpha
        verdicts = judge(self.baseline_summary["records"], self.collector.finished_records(), alpha)
        baseline["gate"] = gate_summary(verdicts, alpha)
        return verdicts

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
        if self.stopped:
            return
        if not self.runs_tests:
            if (exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR) and not self._inspecting()
                    and self.config.stash.get(_SCENARIO_FOUND, False)):
                self._remove_stale_summary()  # stopped while collecting scenarios: no summary is this run's
            return
        if self.earlier:
            self.collector  # noqa: B018  (a resumed run whose items were all done still writes its summary)
        if "collector" not in self.__dict__ and not self._scenarios_selected():
            return  # no scenario item selected: the last run's summary stays (docs/plugin.md)
        baseline = self.settings.baseline.as_json(self.settings.agents) if self.settings.baseline else None
        verdicts = self._judge_trials(baseline)
        budget = _budget(self.config)
        if budget is not None:
            budget.finish()
            if budget.reason is not None and self.collector.unfinished():
                self.collector.stop_reason = budget.reason
                if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                    session.exitstatus = exitstatus = pytest.ExitCode.INTERRUPTED  # docs/scale-out.md
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        self.summary = self.collector.finish(self._run(exitstatus), interrupted, baseline)
        if verdicts:
            from pytest_toolsandbox.report.gate import forgiven

            noise = sum(self.failing_reports.get(nodeid, 0) for nodeid in forgiven(verdicts, self.summary["records"]))
            if session.exitstatus == pytest.ExitCode.TESTS_FAILED and noise == session.testsfailed:
                session.exitstatus = pytest.ExitCode.OK  # every failure was a noisy trial (report/gate.py)
        if self.summary is not None and self.baseline_summary is not None:
            from pytest_toolsandbox.report.comparison_html import baseline_sections, write_comparison

            report_dir = self.settings.report_dir
            sections = baseline_sections(self.baseline_summary, self._baseline_path(), self.summary, report_dir,
                                         label=f"baseline {self.settings.baseline.path}")
            try:
                write_comparison(report_dir, sections, root="", empty=f"The baseline holds results of "
                                 f"{', '.join(self.settings.baseline.recorded_for)} only: no agent of this run "
                                 "was gated by it.")
            except OSError as error:
                self.collector.write_errors.append(f"{error.filename or report_dir}: {error.strerror or error}")
        if self.summary is not None:
            self._write_outputs()
        if self.collector.write_errors and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # an output is missing: the run did not succeed

    def _write_outputs(self) -> None:
        """The Markdown summary, the refreshed baseline, and the report directory without stale files."""
        import os

        from pytest_toolsandbox.report.outputs import write_outputs

        run = self.settings
        written = write_outputs(self.summary, run.report_dir, run.markdown, run.update_baseline, os.environ,
                                lambda path: display(path, self.config.invocation_params.dir))
        self.output_notes = written.notes
        self.collector.write_errors.extend(written.errors)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary is None:
            return
        from pytest_toolsandbox.report.table import format_table
        from pytest_toolsandbox.report.terminal import terminal_safe
        from pytest_toolsandbox.report.usage import usage_line

        summary = self.summary
        terminalreporter.write_sep("=", "toolsandbox: per-category results")
        for line in format_table(summary["aggregates"], self.settings.trials):
            terminalreporter.write_line(terminal_safe(line))
        usage = usage_line(summary["usage"]) if "usage" in summary else None
        if usage:
            terminalreporter.write_line(usage)
        if summary["baseline"]:
            from pytest_toolsandbox.report.gate_text import change_counts, gate_note

            baseline = summary["baseline"]
            terminalreporter.write_line(terminal_safe(f"baseline {baseline['path']}: {change_counts(baseline)}"))
            note = gate_note(baseline)
            if note:
                terminalreporter.write_line(terminal_safe(f"  {note}"), yellow=bool(baseline.get("ungated")))
            gate = baseline.get("gate")
            for name in ("improvement",) if gate else ("regression", "improvement"):
                for nodeid in baseline[name]:
                    terminalreporter.write_line(terminal_safe(f"  {name}: {nodeid}"))
            if gate:
                from pytest_toolsandbox.report.gate import TaskVerdict, gate_lines

                verdicts = [TaskVerdict(v["agent"], v["task"], tuple(v["baseline"]), tuple(v["now"]), v["p"],
                                        v["verdict"]) for v in gate["regressed_tasks"] + gate["noisy_tasks"]]
                for line in gate_lines(verdicts, gate["alpha"]):
                    terminalreporter.write_line(terminal_safe(line), red=line.startswith("  regressed"))
        where = display(self.settings.report_dir, self.config.invocation_params.dir)
        counts = summary["counts"]
        note = (f" — PARTIAL: {counts['finished']} of {counts['expected']} items finished"
                if summary["partial"] else "")
        if self.collector.summary_written:
            terminalreporter.write_line(f"report: {where}/index.html, {where}/summary.json{note}")
        else:
            terminalreporter.write_line(f"report: NOT written: {where}/summary.json could not be written (below); "
                                        "the results above are this run's only record", red=True)
        if summary.get("stop_reason"):
            terminalreporter.write_line(f"toolsandbox: stopped starting episodes: {summary['stop_reason']}; "
                                        f"{len(summary['unfinished'])} item(s) not run — complete the run with "
                                        f"--resume {where}", yellow=True)
        budget = _budget(self.config)
        if budget is not None and budget.max_spend is not None and budget.unpriced:
            terminalreporter.write_line(f"toolsandbox: {budget.unpriced} item(s) on models without a price do not "
                                        "count towards --max-spend (pass --price-table, or cap --max-run-tokens)",
                                        yellow=True)
        for line in self.output_notes:
            terminalreporter.write_line(terminal_safe(line))
        errors = self.collector.write_errors
        if errors:
            terminalreporter.write_line(f"toolsandbox: {len(errors)} output file(s) could not be written; results "
                                        "above are complete, the files are not (exit status 1):", red=True)
            for error in errors[:10]:
                terminalreporter.write_line(terminal_safe(f"  {error}"), red=True)

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


class _ProgressDisplay:
    """Keeps the progress status line out of pytest's way: hook wrappers around the terminal
    reporter's per-item output hide the line just before pytest writes and show it right after
    (report/progress.py explains the drawing); the final line comes before pytest's summary."""

    def __init__(self, controller: _Controller) -> None:
        self.controller = controller

    def _around(self) -> Iterator[None]:
        emitter = self.controller.start_progress()
        if emitter is not None:
            emitter.hide()
        try:
            return (yield)
        finally:
            if emitter is not None:
                emitter.show()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logstart(self) -> Iterator[None]:
        return (yield from self._around())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self) -> Iterator[None]:
        return (yield from self._around())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logfinish(self) -> Iterator[None]:
        return (yield from self._around())

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        if self.controller.emitter is not None and not self.controller.stopped:
            self.controller.emitter.end()
