"""Stopping an episode's thread from outside without breaking what it shares with other episodes.

An episode runs on a thread of its own (the scheduler's runners, the watchdog's workers) and sometimes
has to stop early: Ctrl-C or `-x` cancel it, `--episode-timeout` abandons it. CPython can raise an
exception inside another thread (`interrupt`), but it lands at whatever Python instruction that thread
runs next. Inside code that holds a lock shared across threads it can leave that lock held for ever: a
process-wide HTTP connection pool, for one, whose lock is taken and released in Python code, is then
deadlocked for every later request of the process (this happened once `-x` cancelled episodes that were
waiting for answers).

So stopping is cooperative first. A stop is a request (`Stoppable.stop`) that the episode honours at its
next `checkpoint()`: every step of the episode loop and every HTTP request about to be sent has one. A
forced stop (timeouts: a runaway agent loop never reaches a checkpoint) additionally raises the error in
the thread at once, but never while it is inside a `critical()` section (sending through a connection
pool, waiting for the shared rate limiter, writing a cassette): then the error is raised as the section ends. Nothing
is lost by waiting there: a thread blocked in a socket read cannot be interrupted in any case.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

_local = threading.local()


def interrupt(thread: threading.Thread, error: type[BaseException]) -> None:
    """Raise `error` inside `thread` at its next Python instruction (CPython's documented C API)."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(error))


class Stoppable:
    """The stop switch of one task (an episode) while `run` runs it on some thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._critical = 0
        self.requested: type[BaseException] | None = None
        """The error the task is asked to stop with (the first one asked for wins)."""

    def run(self, function: Callable[[], T]) -> T:
        """`function()` on the calling thread, stoppable while it runs."""
        with self._lock:
            self._thread = threading.current_thread()
        outer, _local.task = _current(), self
        try:
            return function()
        finally:
            _local.task = outer
            with self._lock:  # a forced stop posted just before this is raised here, still inside `run`
                self._thread = None
                self._critical = 0

    def stop(self, error: type[BaseException], *, force: bool = False) -> None:
        """Ask the task to stop with `error` at its next checkpoint; with `force`, raise it in the task's
        thread at once unless that thread is in a critical section (then as the section ends)."""
        with self._lock:
            if self.requested is None:
                self.requested = error
            if force and self._thread is not None and self._critical == 0:
                interrupt(self._thread, self.requested)


def _current() -> Stoppable | None:
    return getattr(_local, "task", None)


def checkpoint() -> None:
    """Raise the stop requested for the task running on this thread, if any (cheap: called every step)."""
    task = _current()
    if task is not None and task.requested is not None:
        raise task.requested


@contextmanager
def critical() -> Iterator[None]:
    """A block a forced stop must not cut in half: it holds locks shared with other episodes, or writes
    a file that must be whole. A stop requested meanwhile is raised when the block ends."""
    task = _current()
    if task is None:
        yield
        return
    with task._lock:
        task._critical += 1
    try:
        yield
    finally:
        with task._lock:
            task._critical -= 1
    checkpoint()
