"""A wall-clock limit for one episode.

An agent can hang forever (an HTTP call that never answers, a loop). The episode therefore runs in a
daemon thread while the caller waits at most `seconds`; on expiry the caller gets `EpisodeTimeout` at
once (so the item becomes an error and the run goes on, also inside an xdist worker), and the episode
thread is asked to stop by an asynchronous `EpisodeTimeout` that fires as soon as it runs Python code
again. A call blocked inside C (a socket read) cannot be interrupted from outside; its daemon thread is
abandoned and ends with the process. Setting an SDK's own request timeout below the episode timeout
stops such calls at the source.
"""

from __future__ import annotations

import contextvars
import ctypes
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class EpisodeTimeout(Exception):
    """The episode did not finish within its wall-clock limit."""


def interrupt(thread: threading.Thread, error: type[BaseException] = EpisodeTimeout) -> None:
    """Raise `error` inside `thread` at its next Python instruction (CPython's documented C API)."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(error))


def call_with_timeout(function: Callable[[], T], seconds: float | None) -> T:
    """`function()`, or EpisodeTimeout after `seconds` (None or 0: no limit, run in this thread).

    `function` sees the caller's context variables. Whatever it raises — including BaseExceptions
    such as SystemExit, which would otherwise end only the helper thread silently — is raised again in
    the caller's thread.
    """
    if not seconds:
        return function()
    outcome: dict[str, object] = {}
    context = contextvars.copy_context()  # the caller's context variables (e.g. the search backend)

    def target() -> None:
        try:
            outcome["value"] = context.run(function)
        except BaseException as error:  # handed to the caller, who decides what it means
            outcome["error"] = error

    thread = threading.Thread(target=target, name="toolsandbox-episode", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        interrupt(thread)
        raise EpisodeTimeout(f"the episode did not finish within {seconds:g} s (--episode-timeout)")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
