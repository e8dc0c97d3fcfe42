"""Episodes played ahead of their items: up to N at once, each in a thread of its own.

With a model behind an API, an episode spends nearly all its time waiting for HTTP answers, so one
process can keep dozens of episodes in flight while pytest runs items one after the other: the plugin
submits the episodes of upcoming items here, and each item, when its turn comes, only waits for its own
result (`wait`). Threads rather than asyncio because agents and user simulators are ordinary blocking
callables (the SDKs' sync clients, user code); each episode has its own world, roles and cassette, so
episodes share nothing but the process.

Runner threads take jobs in submission order (= item order), so the item pytest is about to run is
always among the first to start. An episode that outlives its timeout is stopped by force like the
single-episode watchdog does, and its thread is replaced when it stays stuck in C code, so the pool
keeps its N slots. `close` drops every job not yet started and asks the running ones to stop at their
next checkpoint (Ctrl-C, -x); see `interruption.py` for why that is not done by force.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_toolsandbox.running.interruption import Stoppable
from pytest_toolsandbox.running.watchdog import EpisodeTimeout


class EpisodeCancelled(BaseException):
    """Raised inside a running episode when the run stops (Ctrl-C, -x/--maxfail): its result is unused."""


@dataclass(eq=False)
class Job:
    """One episode to play: `function` runs in `context` on a runner thread."""

    function: Callable[[], Any]
    context: contextvars.Context = field(default_factory=contextvars.copy_context)
    done: threading.Event = field(default_factory=threading.Event)
    started: float | None = None
    thread: threading.Thread | None = None
    value: Any = None
    error: BaseException | None = None
    abandoned: bool = False
    stoppable: Stoppable = field(default_factory=Stoppable)

    def run(self) -> None:
        try:
            self.value = self.context.run(self.stoppable.run, self.function)
        except BaseException as error:  # handed to the waiting item, which decides what it means
            self.error = error
        finally:
            self.done.set()


class EpisodeScheduler:
    """A fixed number of runner threads playing submitted jobs in order."""

    def __init__(self, slots: int, clock: Callable[[], float] = time.monotonic) -> None:
        if slots < 1:
            raise ValueError("an episode scheduler needs at least one slot")
        self.slots = slots
        self._clock = clock
        self._queue: deque[Job] = deque()
        self._changed = threading.Condition()
        self._running: set[Job] = set()
        self._retired: set[threading.Thread] = set()
        """Runners whose stuck job was abandoned to a replacement: they must not serve again."""
        self._closed = False
        self.finished = 0
        for _ in range(slots):
            self._start_runner()

    @property
    def running(self) -> int:
        """Episodes being played right now."""
        with self._changed:
            return len(self._running)

    def submit(self, job: Job) -> Job:
        with self._changed:
            if self._closed:
                job.error = EpisodeCancelled("the run is stopping")
                job.done.set()
                return job
            self._queue.append(job)
            self._changed.notify()
        return job

    def wait(self, job: Job, timeout: float | None, idle: Callable[[], None] | None = None) -> Any:
        """The job's value (or its exception, raised here), or EpisodeTimeout once it has run `timeout`
        seconds. Time spent queued does not count: the limit is on the episode, not on the pool.
        `idle` is called every 50 ms while the job is not done."""
        while not job.done.wait(0.05 if timeout or idle else None):
            if idle is not None:
                idle()
            with self._changed:
                started = job.started
            if timeout and started is not None and self._clock() - started >= timeout:
                self._abandon(job)
                raise EpisodeTimeout(f"the episode did not finish within {timeout:g} s (--episode-timeout)")
        if job.error is not None:
            raise job.error
        return job.value

    def close(self) -> None:
        """Stop scheduling: queued jobs are dropped, running episodes are asked to stop at their next
        checkpoint (not by force: the run is ending, and a forced stop could break what they share)."""
        with self._changed:
            self._closed = True
            dropped, self._queue = list(self._queue), deque()
            for job in self._running:
                job.stoppable.stop(EpisodeCancelled)
            self._changed.notify_all()
        for job in dropped:
            job.error = EpisodeCancelled("the run stopped before this episode started")
            job.done.set()

    def _abandon(self, job: Job) -> None:
        """Stop a running job by force; a fresh runner takes its slot in case the thread stays blocked in C."""
        with self._changed:
            if job.abandoned or job not in self._running:
                return
            job.abandoned = True
            self._running.discard(job)
            if job.thread is not None:
                self._retired.add(job.thread)
            job.stoppable.stop(EpisodeTimeout, force=True)
        self._start_runner()

    def _start_runner(self) -> None:
        threading.Thread(target=self._work, name="toolsandbox-episode", daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                self._take_jobs()
                return
            except (EpisodeCancelled, EpisodeTimeout):
                if not self._after_stray_interrupt():
                    return

    def _after_stray_interrupt(self) -> bool:
        """An interrupt landed outside an episode (it arrived after its episode ended, or between two
        jobs). Whether this runner goes on serving: not when the pool is closing or its slot went to a
        replacement; otherwise yes, so that no queued job waits for a runner that is gone. A job it had
        taken but not yet started goes back to the head of the queue."""
        current = threading.current_thread()
        with self._changed:
            if self._closed or current in self._retired:
                return False
            for job in [job for job in self._running if job.thread is current]:
                self._running.discard(job)
                if job.done.is_set():  # it had ended; the interrupt came before its runner noted that
                    self.finished += 1
                else:
                    job.thread = job.started = None
                    self._queue.appendleft(job)
            self._changed.notify_all()
            return True

    def _take_jobs(self) -> None:
        while True:
            with self._changed:
                while not self._queue and not self._closed:
                    self._changed.wait()
                if self._closed:
                    return
                job = self._queue.popleft()
                job.thread, job.started = threading.current_thread(), self._clock()
                self._running.add(job)
            job.run()
            with self._changed:
                if job.abandoned:  # a replacement runner took this slot
                    return
                self._running.discard(job)
                self.finished += 1
