"""`--concurrency N`: the episodes of upcoming items are started before their turn.

pytest runs items one after the other, and it must: fixtures, reports, -x and --lf assume it. What
can run early is the episode, which is nearly all of an item's time when a model answers over HTTP.
Before each item runs, the pool looks at the items that will follow it in this process (the rest of
`session.items`, or under xdist the worker's queue of assigned items) and submits their episodes to the
`EpisodeScheduler`, keeping at most `depth` of them ahead. Each item's fixtures then take the roles,
world, cassette and trajectory of its own episode, so the item's outcome, report and fixtures are those
of an ordinary pytest item.

Only items whose episode-building fixtures are the plugin's own can start early: a fixture overridden in
a conftest.py runs when its item is set up, which is too late to overlap. Such items play their episode
in their own turn, as with `--concurrency 1` (a warning says so once); an agent named with
`--agent module:factory` is built per item by the plugin and plays concurrently.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

import pytest

from pytest_toolsandbox.compat import queued_on_worker, xdist_worker
from pytest_toolsandbox.recording.in_flight import IN_FLIGHT
from pytest_toolsandbox.running.scheduler import EpisodeScheduler, Job
from pytest_toolsandbox.running.warmup import warm_ups

PlayAhead = Callable[[pytest.Item, EpisodeScheduler], "AheadEpisode | None"]
"""Prepares an item's episode and submits it (`prepare.play_ahead`); None when the item plays in its turn."""

EPISODE_FIXTURES = ("toolsandbox_scenario", "toolsandbox_agent", "toolsandbox_user",
                    "toolsandbox_start_world", "toolsandbox_cassette", "toolsandbox_tool_backend",
                    "toolsandbox_episode")
"""The fixtures an episode is built from: all must be the plugin's own for the episode to start early."""


@dataclass(eq=False)
class AheadEpisode:
    """An item's episode started before its turn; the item's fixtures read their values from here."""

    scheduler: EpisodeScheduler
    job: Job | None = None
    timeout: float | None = None
    agent: Any = None
    user: Any = None
    world: Any = None
    recording: Any = None
    backend: Any = None
    error: BaseException | None = None
    """What kept the episode from being prepared (a role that could not be built, a cassette that cannot
    be read, …): raised by the item's first episode fixture, in its own turn, as without concurrency."""
    idle: Callable[[], None] | None = None
    """Called while the item waits for this episode (the pool's `idle`)."""

    def part(self, name: str) -> Any:
        """The item's `agent`, `user`, `world`, `recording` or `backend`, or the error that kept the
        episode from being prepared."""
        if self.error is not None:
            raise self.error
        return getattr(self, name)

    def __call__(self) -> Any:
        """The trajectory (the `toolsandbox_episode` contract: a no-argument callable)."""
        return self.wait(self.timeout)

    def wait(self, timeout: float | None) -> Any:
        if self.error is not None:
            raise self.error
        if self.job is None:
            raise RuntimeError("this item's episode was not started")
        return self.scheduler.wait(self.job, timeout, self.idle)


def overridden_fixtures(item: pytest.Item, plugin_module: str) -> list[str]:
    """The episode fixtures of `item` that a conftest.py (or another plugin) replaced."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return list(EPISODE_FIXTURES)
    replaced = []
    for name in EPISODE_FIXTURES:
        definitions = info.name2fixturedefs.get(name)
        if not definitions or getattr(definitions[-1].func, "__module__", None) != plugin_module:
            replaced.append(name)
    return replaced


AHEAD_PER_SLOT = 4
"""Episodes started but not yet taken by their item, per slot: enough that a slow item at the head does
not leave slots idle, few enough that finished trajectories do not pile up in memory."""


WARM_UP_WINDOW = 0.25
"""Seconds without an expected answer that a warm-up step needs: about its length (an import of a few
hundred milliseconds), so that the answers it would hold up are not due yet."""


class EpisodePool:
    """Feeds the scheduler with the episodes of the items that follow the current one."""

    def __init__(self, session: pytest.Session, slots: int,
                 play: PlayAhead,
                 warm_ups: Sequence[Callable[[], None]] = ()) -> None:
        self.session = session
        self.scheduler = EpisodeScheduler(slots)
        self.depth = AHEAD_PER_SLOT * slots
        self._play = play
        self._warm_ups = list(warm_ups)
        self._ahead: dict[str, AheadEpisode] = {}
        self._declined: set[str] = set()
        self._positions: dict[str, int] | None = None
        self._worker = xdist_worker(session.config)

    def _upcoming(self, item: pytest.Item) -> Iterator[pytest.Item]:
        items = self.session.items
        if self._worker is not None:
            yield item
            yield from (items[index] for index in queued_on_worker(self._worker))
            return
        if self._positions is None:
            self._positions = {candidate.nodeid: position for position, candidate in enumerate(items)}
        start = self._positions.get(item.nodeid)
        yield from ([item] if start is None else islice(items, start, None))

    def feed(self, item: pytest.Item) -> None:
        """Start the episodes of `item` and of the items after it, up to `depth` ahead."""
        if self.session.shouldfail or self.session.shouldstop:
            self.scheduler.close()
            return
        for upcoming in self._upcoming(item):
            if len(self._ahead) >= self.depth:
                return
            nodeid = upcoming.nodeid
            if nodeid in self._ahead or nodeid in self._declined:
                continue
            try:
                episode = self._play(upcoming, self.scheduler)
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # that item's own error, raised in its turn: the run goes on
                episode = AheadEpisode(self.scheduler, error=error)
            if episode is None:
                self._declined.add(nodeid)
            else:
                episode.idle = self.idle
                self._ahead[nodeid] = episode

    def idle(self) -> None:
        """While an item waits for its episode: once every running episode is waiting for a live
        answer and none is expected within `WARM_UP_WINDOW`, the process has nothing else to do, so
        the next warm-up step (an import the items will need soon, such as the scorer's) runs now
        instead of when the episodes need the interpreter. One step per call, so each starts only while
        still idle. Before the first answer the provider's latency is unknown, and the first requests'
        wait (the run's longest idle stretch: every episode sent its first request at once) is used."""
        if not self._warm_ups:
            return
        running = self.scheduler.running
        quiet = IN_FLIGHT.quiet_for()
        if running and IN_FLIGHT.count >= running and (quiet is None or quiet >= WARM_UP_WINDOW):
            step = self._warm_ups.pop(0)
            with contextlib.suppress(Exception):  # an import that fails must fail where it is needed, not here
                step()

    def get(self, item: pytest.Item) -> AheadEpisode | None:
        return self._ahead.get(item.nodeid)

    def forget(self, item: pytest.Item) -> None:
        """The item is finished: its episode no longer counts against the depth."""
        self._ahead.pop(item.nodeid, None)

    def close(self) -> None:
        """Stop: episodes not started are dropped, running ones stopped; their items never ran."""
        self.scheduler.close()
        self._ahead.clear()


_POOL = pytest.StashKey["EpisodePool | None"]()


def session_pool(session: pytest.Session, concurrency: int, play: PlayAhead) -> EpisodePool | None:
    """The process's episode pool, created when the first item runs (None: one episode at a time, and
    always for sessions that only show what would run)."""
    config = session.config
    if _POOL not in config.stash:
        option = config.option
        inspecting = option.collectonly or getattr(option, "setuponly", False) or getattr(option, "setupplan", False)
        pool = None
        if concurrency > 1 and not inspecting:
            pool = EpisodePool(session, concurrency, play, warm_ups(writes_report=not hasattr(config, "workerinput")))
        config.stash[_POOL] = pool
    return config.stash[_POOL]


def current_pool(config: pytest.Config) -> EpisodePool | None:
    """The pool if one was created (never creates it)."""
    return config.stash.get(_POOL, None)


def ahead_of(item: pytest.Item) -> AheadEpisode | None:
    """This item's episode when it was started early by the pool."""
    pool = current_pool(item.config)
    return pool.get(item) if pool is not None else None
