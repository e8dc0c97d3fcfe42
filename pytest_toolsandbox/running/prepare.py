"""The one place an item's episode is prepared: its agent, user simulator, starting world, recording
(cassette) and search backend, each built from the item's scenario, its case and the run's settings.

The plugin's fixtures build the parts one by one (a conftest.py may override any of them), and the
concurrent pool (`--concurrency`, ahead.py) builds them all at once ahead of the item's turn
(`play_ahead`); both call the builders below, so an episode is the same whichever way it is played.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolsandbox.running.configure import settings
from pytest_toolsandbox.running.errors import (
    PASSTHROUGH,
    CassetteFileError,
    InputTooLargeError,
    RoleError,
    ToolsandboxError,
)
from pytest_toolsandbox.running.items import PLUGIN_MODULE, Case, scenario_and_case

SETUP_FAILURES: tuple[type[BaseException], ...] = (ToolsandboxError, *PASSTHROUGH)
"""What setting up an episode ahead may raise that its item reports when its turn comes."""

if TYPE_CHECKING:
    from pytest_toolsandbox.options import Settings
    from pytest_toolsandbox.roles.resolve import RoleFactory
    from pytest_toolsandbox.running.ahead import AheadEpisode
    from pytest_toolsandbox.running.scheduler import EpisodeScheduler
    from pytest_toolsandbox.scenario.models import Scenario
    from pytest_toolsandbox.world.trajectory import Trajectory
    from pytest_toolsandbox.world.world import World

_OVERRIDDEN = pytest.StashKey[list[str]]()
_WARNED_SEQUENTIAL = pytest.StashKey[bool]()


def build_role(factory: RoleFactory, scenario: Scenario, case: Case, prompts: str = "ours") -> Any:
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


def build_agent(scenario: Scenario, case: Case, run: Settings) -> Any:
    """The agent under test, from `--agent`."""
    return build_role(run.agent_factories[case.agent], scenario, case)


def build_user(scenario: Scenario, case: Case, run: Settings) -> Any:
    """The user simulator, from `--user` (with the reference's instructions under `--prompts reference`)."""
    return build_role(run.user_factory, scenario, case, run.prompts)


def start_world(scenario: Scenario, run: Settings) -> World:
    """The default world with the scenario's patch and first messages."""
    from pytest_toolsandbox.scenario.world_builder import build_world

    return build_world(scenario, run.prompts)


def open_recording(scenario: Scenario, case: Case, run: Settings) -> Any:
    """The item's cassette, used only by its own episode (None when no role is a model and search is
    offline: nothing goes over HTTP)."""
    from pytest_toolsandbox.recording.preflight import models_of

    if not models_of([case.agent, run.user], run.model_options) and run.tool_backend == "offline":
        return None
    from pytest_toolsandbox.basics.limits import LimitExceeded
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


def search_backend(run: Settings) -> Any:
    """The search backend the episode uses: None for the bundled offline one, else the RapidAPI backend
    (`--tool-backend rapidapi`), whose requests go into the item's cassette."""
    if run.tool_backend != "rapidapi":
        return None
    from pytest_toolsandbox.tools.rapidapi import RapidAPIBackend

    return RapidAPIBackend()


def episode_runner(scenario: Scenario, agent: Any, user: Any, case: Case, world: World,
                   run: Settings) -> Callable[[], Trajectory]:
    """A no-argument callable that plays the episode (off-policy under `--user=reference-history`)."""
    from pytest_toolsandbox.running.episode import run_episode
    from pytest_toolsandbox.running.offpolicy import OFF_POLICY_USER, OffPolicyEpisode

    if run.user == OFF_POLICY_USER:
        return OffPolicyEpisode(scenario, agent, variant=case.variant, max_messages=run.max_messages, world=world)
    return functools.partial(run_episode, scenario, agent, user, variant=case.variant,
                             max_messages=run.max_messages, world=world, passthrough=PASSTHROUGH, rules=run.rules)


def play_ahead(item: pytest.Item, scheduler: EpisodeScheduler) -> AheadEpisode | None:
    """Prepare `item`'s episode with the builders above and submit it to the scheduler; None when the
    item must play in its own turn (off-policy, the budget spent, or an episode fixture overridden)."""
    from pytest_toolsandbox.running.ahead import AheadEpisode, overridden_fixtures
    from pytest_toolsandbox.running.budget_stop import budget_reached
    from pytest_toolsandbox.running.offpolicy import OFF_POLICY_USER
    from pytest_toolsandbox.running.scheduler import Job

    found = scenario_and_case(item)
    run = settings(item.config)
    if found is None or run.user == OFF_POLICY_USER:
        return None  # off-policy episodes are scored turn by turn while they play
    if budget_reached(item.config) is not None:
        return None  # no new episode once the budget is spent (see budget_stop.py)
    replaced = overridden_fixtures(item, PLUGIN_MODULE)
    if replaced:
        item.stash[_OVERRIDDEN] = replaced  # warned about once, from inside the item (see warn_sequential)
        return None
    parent, case = found
    ahead = AheadEpisode(scheduler, timeout=run.episode_timeout)
    try:  # whatever the item owns fails as that item's error, in its own turn: never the pool's
        scenario = parent.scenario
        ahead.agent = build_agent(scenario, case, run)
        ahead.user = build_user(scenario, case, run)
        ahead.world = start_world(scenario, run)
        ahead.recording = open_recording(scenario, case, run)
        ahead.backend = search_backend(run)
    except KeyboardInterrupt:
        raise
    except SETUP_FAILURES as error:
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

    with ExitStack() as stack:
        if ahead.recording is not None:
            stack.enter_context(ahead.recording.activate())
        if ahead.backend is not None:
            from pytest_toolsandbox.tools.backends import use_backend

            stack.enter_context(use_backend(ahead.backend))
        trajectory = episode_runner(scenario, ahead.agent, ahead.user, case, ahead.world, run)()
    if ahead.recording is not None and trajectory.ended_by != "error":
        from pytest_toolsandbox.running.interruption import critical

        with critical():  # a forced stop must not leave half a cassette
            ahead.recording.finish(keep=True)  # here, off pytest's main thread, and before the item reports
    return trajectory


def warn_sequential(item: pytest.Item) -> None:
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
