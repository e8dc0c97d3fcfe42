"""A wall-clock limit for one episode.

An agent can hang forever (an HTTP call that never answers, a loop). The episode therefore runs in a
daemon thread while the caller waits at most `seconds`; on expiry the caller gets `EpisodeTimeout` at
once (so the item becomes an error and the run goes on, also inside an xdist worker), and the episode
thread is stopped by force (`interruption.py`): an `EpisodeTimeout` raised as soon as it runs Python
code again outside a critical section. A call blocked inside C (a socket read) cannot be interrupted
from outside; its daemon thread is abandoned and ends with the process. Setting an SDK's own request
timeout below the episode timeout stops such calls at the source.

The threads are long-lived: starting a thread per item cost more than a short offline episode's
bookkeeping, so an idle worker takes the next call. A worker whose call timed out is never reused (it
may still be stuck, or its interrupt may still be pending); a new one replaces it when needed. Nested or
concurrent calls each get a worker of their own, so a call never waits behind another.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from pytest_toolsandbox.running.interruption import Stoppable

T = TypeVar("T")


class EpisodeTimeout(Exception):
    """The episode did not finish within its wall-clock limit."""


class _Call:
    """One function handed to a worker; `done` is held until its outcome is set."""

    __slots__ = ("abandoned", "context", "done", "error", "function", "stoppable", "value")

    def __init__(self, function: Callable[[], Any]) -> None:
        self.function = function
        self.context = contextvars.copy_context()  # the caller's context variables (e.g. the search backend)
        self.done = threading.Lock()
        self.done.acquire()
        self.value: Any = None
        self.error: BaseException | None = None
        self.abandoned = False
        """Set by the caller before it stops the worker's call: the worker must not take another call."""
        self.stoppable = Stoppable()

    def run(self) -> None:
        try:
            self.value = self.context.run(self.stoppable.run, self.function)
        except BaseException as error:  # handed to the caller, who decides what it means
            self.error = error
        finally:
            self.done.release()


class _Worker:
    """A daemon thread running the calls put on its queue, one at a time; None ends it."""

    def __init__(self) -> None:
        self.calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name="toolsandbox-episode", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            while (call := self.calls.get()) is not None:
                call.run()
                if call.abandoned:
                    return
                del call  # an idle worker must not keep the last episode's trajectory alive
        except EpisodeTimeout:  # the interrupt of a call that ended just before it arrived
            return


_idle: list[_Worker] = []
_idle_lock = threading.Lock()


def call_with_timeout(function: Callable[[], T], seconds: float | None) -> T:
    """`function()`, or EpisodeTimeout after `seconds` (None or 0: no limit, run in this thread).

    `function` sees the caller's context variables. Whatever it raises — including BaseExceptions
    such as SystemExit, which would otherwise end only the helper thread silently — is raised again in
    the caller's thread.
    """
    if not seconds:
        return function()
    call = _Call(function)
    with _idle_lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
    worker.calls.put(call)
    try:
        finished = call.done.acquire(timeout=max(seconds, 0.0))
    except BaseException:  # Ctrl-C while waiting: the worker ends once its call does
        worker.calls.put(None)
        raise
    if not finished:
        call.abandoned = True
        call.stoppable.stop(EpisodeTimeout, force=True)
        worker.calls.put(None)  # wakes the worker if the call ends just as it is abandoned
        raise EpisodeTimeout(f"the episode did not finish within {seconds:g} s (--episode-timeout)")
    with _idle_lock:
        _idle.append(worker)
    if call.error is not None:
        raise call.error
    return call.value
