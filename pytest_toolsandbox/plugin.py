"""pytest hooks and fixtures of pytest-toolsandbox; each delegates to the module that does the work.

A scenario file is collected as a module holding one test, `test_scenario`, parametrized by (agent,
variant, trial) (running/items.py). Its fixtures build the episode's parts with running/prepare.py, play
it with running/play.py, and score it with evaluation/; the item's report carries its record
(report/results/item_report.py) to the controller (running/controller.py), which writes the reports. Override any
fixture below in a conftest.py (docs/plugin.md, Fixtures).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolsandbox.running import configure
from pytest_toolsandbox.running.configure import settings
from pytest_toolsandbox.running.errors import ToolsandboxError
from pytest_toolsandbox.running.heap import freeze_heap, freeze_settled_heap, thaw_heap
from pytest_toolsandbox.running.items import (
    Case,
    ItemContext,
    ScenarioFile,
    case_params,
    collect_scenario_file,
    imported_folder_unnamed,
)

if TYPE_CHECKING:
    from pytest_toolsandbox.evaluation.result import Evaluation
    from pytest_toolsandbox.roles.base import Agent, User
    from pytest_toolsandbox.scenario.models import Scenario
    from pytest_toolsandbox.world.trajectory import Trajectory
    from pytest_toolsandbox.world.world import World

# ---------------------------------------------------------------------------------------------
# Configuration (running/configure.py; the options themselves are declared in options.py).


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    configure.add_options(parser, pluginmanager)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Keep `--baseline X` (space form) from moving the rootdir (see `configure.keep_rootdir`)."""
    configure.keep_rootdir(early_config, parser, args)


def pytest_configure(config: pytest.Config) -> None:
    from pytest_toolsandbox.running.budget_stop import configure_budget
    from pytest_toolsandbox.running.model_stop import configure_model_stop

    configure.register_markers(config)
    config.add_cleanup(lambda: thaw_heap(config))
    run = configure.read_run_settings(config)
    configure.configure_rate_limits(run, config)
    configure.configure_prices(run)
    configure_budget(config, run)
    configure_model_stop(config)
    if hasattr(config, "workerinput"):
        from pytest_toolsandbox.running.selection import set_done

        set_done(config, frozenset(config.workerinput.get("toolsandbox_done", ())))
    else:
        from pytest_toolsandbox.running.controller import Controller

        configure.early_preflight(config)
        config.pluginmanager.register(Controller(config), "toolsandbox-controller")


def pytest_report_header(config: pytest.Config) -> list[str]:
    """The model behind each model spec, and (once per run) a deprecated or retired model."""
    from datetime import date

    from pytest_toolsandbox.running.model_notes import header_lines, run_models

    return header_lines(run_models(settings(config)), date.today())


# ---------------------------------------------------------------------------------------------
# Collection and selection (running/items.py, running/selection.py).


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """An imported reference-benchmark folder runs only when named (see `imported_folder_unnamed`)."""
    return True if imported_folder_unnamed(collection_path, config) else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    return collect_scenario_file(file_path, parent)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parent = metafunc.definition.parent
    if isinstance(parent, ScenarioFile):
        metafunc.parametrize("toolsandbox_case", case_params(parent.scenario, settings(metafunc.config)))


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Shards and resumed runs select their items; without xdist, probe the roles here (under xdist the
    controller does)."""
    from pytest_toolsandbox.running.selection import deselect, probe_collected

    deselect(config, items)
    if not (hasattr(config, "workerinput") or getattr(config.option, "numprocesses", None)):
        probe_collected(config, items)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """A plain test run (no scenario collected) leaves the garbage collector alone."""
    if any(isinstance(item.parent, ScenarioFile) for item in session.items):
        freeze_heap(session.config)


# ---------------------------------------------------------------------------------------------
# Concurrent episodes (--concurrency N, running/ahead.py): the episodes of upcoming items start early.


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    from pytest_toolsandbox.running.ahead import session_pool
    from pytest_toolsandbox.running.prepare import play_ahead

    pool = session_pool(item.session, settings(item.config).concurrency, play_ahead)
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
    from pytest_toolsandbox.running.ahead import current_pool

    pool = current_pool(session.config)
    if pool is not None:
        pool.close()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With concurrent episodes under `--dist load`, keep each worker's queue as deep as the episodes it
    can play ahead (see running/xdist_schedule.py); otherwise xdist's own scheduling."""
    concurrency = settings(config).concurrency
    if concurrency <= 1 or config.getoption("dist", None) != "load":
        return None
    from pytest_toolsandbox.running.ahead import AHEAD_PER_SLOT
    from pytest_toolsandbox.running.xdist_schedule import ConcurrentLoadScheduling

    # the item running, the one xdist holds as next, and the episodes played ahead of them
    return ConcurrentLoadScheduling(config, log, depth=AHEAD_PER_SLOT * concurrency + 2)


# ---------------------------------------------------------------------------------------------
# Fixtures (override any of them in a conftest.py; see docs/plugin.md). Each takes its part from the
# item's early-started episode when the pool prepared one, else builds it with running/prepare.py.


@pytest.fixture
def _toolsandbox_item(request: pytest.FixtureRequest) -> ItemContext:
    """The item, the run's settings and its early-started episode (private: shared by the fixtures below)."""
    from pytest_toolsandbox.running.ahead import ahead_of

    return ItemContext(request.node, settings(request.config), ahead_of(request.node))


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
    from pytest_toolsandbox.running.prepare import build_agent

    return build_agent(toolsandbox_scenario, toolsandbox_case, _toolsandbox_item.run)


@pytest.fixture
def toolsandbox_user(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario, toolsandbox_case: Case) -> User:
    """The user simulator, built from --user."""
    if _toolsandbox_item.ahead is not None:
        return _toolsandbox_item.ahead.part("user")
    from pytest_toolsandbox.running.prepare import build_user

    return build_user(toolsandbox_scenario, toolsandbox_case, _toolsandbox_item.run)


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
    if _toolsandbox_item.ahead is not None:
        return _toolsandbox_item.ahead.part("world")
    from pytest_toolsandbox.running.prepare import start_world

    return start_world(toolsandbox_scenario, _toolsandbox_item.run)


@pytest.fixture
def toolsandbox_cassette(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario,
                         toolsandbox_case: Case) -> Iterator[Any]:
    """The item's `EpisodeRecording` (its cassette), the current one in this context while the episode
    runs; None when no role is a model. Only this episode's roles send through it (no process-wide
    patching), so episodes may run at once. An episode that ends in an error leaves no new cassette."""
    from pytest_toolsandbox.running.prepare import open_recording

    ahead = _toolsandbox_item.ahead
    recording = (ahead.part("recording") if ahead is not None
                 else open_recording(toolsandbox_scenario, toolsandbox_case, _toolsandbox_item.run))
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
    from pytest_toolsandbox.running.prepare import search_backend

    backend = search_backend(_toolsandbox_item.run)
    if backend is None:
        yield None
        return
    from pytest_toolsandbox.tools.backends import use_backend

    with use_backend(backend) as used:
        yield used


@pytest.fixture
def toolsandbox_episode(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario, toolsandbox_agent: Agent,
                        toolsandbox_user: User, toolsandbox_case: Case, toolsandbox_start_world: World,
                        toolsandbox_cassette: Any, toolsandbox_tool_backend: Any) -> Callable[[], Trajectory]:
    """The episode runner: a no-argument callable playing this item's episode (inside the item's
    cassette). Override it to wrap episodes (rate limits) without touching the agent."""
    if _toolsandbox_item.ahead is not None:
        return _toolsandbox_item.ahead
    from pytest_toolsandbox.running.prepare import episode_runner

    return episode_runner(toolsandbox_scenario, toolsandbox_agent, toolsandbox_user, toolsandbox_case,
                          toolsandbox_start_world, _toolsandbox_item.run)


@pytest.fixture
def toolsandbox_trajectory(_toolsandbox_item: ItemContext,
                           toolsandbox_episode: Callable[[], Trajectory]) -> Trajectory:
    """The played episode. A role that crashed makes this item an error, not an agent failure."""
    from pytest_toolsandbox.running.play import play_item

    return play_item(_toolsandbox_item, toolsandbox_episode)


@pytest.fixture
def toolsandbox_world(toolsandbox_trajectory: Trajectory) -> World:
    """The world as the episode left it, with its snapshot history (for extra assertions)."""
    return toolsandbox_trajectory.world()


@pytest.fixture
def toolsandbox_evaluation(_toolsandbox_item: ItemContext, toolsandbox_scenario: Scenario,
                           toolsandbox_trajectory: Trajectory,
                           toolsandbox_episode: Callable[[], Trajectory]) -> Evaluation:
    """The trajectory scored against the scenario's milestones and minefields under the run's rules
    (off-policy: the share of user turns the agent handled like the reference)."""
    from pytest_toolsandbox.evaluation import evaluate
    from pytest_toolsandbox.running.offpolicy import OffPolicyEpisode

    if isinstance(toolsandbox_episode, OffPolicyEpisode):
        return toolsandbox_episode.evaluation()
    return evaluate(toolsandbox_scenario, toolsandbox_trajectory, rules=_toolsandbox_item.run.rules)


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
                      milestones_met=toolsandbox_evaluation.milestones_met(toolsandbox_threshold),
                      ended_by_user=toolsandbox_trajectory.ended_by == "user",
                      hit_cap=toolsandbox_trajectory.ended_by == "max_messages")


# ---------------------------------------------------------------------------------------------
# Results on the test report (report/results/item_report.py): plain data, so they cross from xdist workers.


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Outermost wrapper: sees the final outcome (after xfail handling) and attaches the record."""
    if call.excinfo is not None and isinstance(call.excinfo.value, ToolsandboxError):
        # the item's own error is its message (report/results/item_report.py): pytest need not parse source files to
        # format a traceback nobody reads (and in a long test process that parse has failed inside CPython)
        call.excinfo.traceback = call.excinfo.traceback.filter(lambda _entry: False)
    report = yield
    if isinstance(item.parent, ScenarioFile):
        from pytest_toolsandbox.report.results.item_report import attach

        attach(item, call, report)
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_header(cells: list[str]) -> None:
    from pytest_toolsandbox.report.results.item_report import html_table_header

    html_table_header(cells)


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_row(report: pytest.TestReport, cells: list[str]) -> None:
    from pytest_toolsandbox.report.results.item_report import html_table_row

    html_table_row(report, cells)
