"""The episode watchdog's long-lived worker threads: reused between calls, never after a timeout."""

from __future__ import annotations

import threading

import pytest

from pytest_toolsandbox.running.watchdog import EpisodeTimeout, call_with_timeout


def test_sequential_calls_share_one_worker_thread_off_the_callers() -> None:
    first = call_with_timeout(threading.current_thread, 5)
    second = call_with_timeout(threading.current_thread, 5)
    assert first is second
    assert first is not threading.current_thread() and first.daemon


def test_a_worker_whose_call_timed_out_is_replaced_and_ends_with_its_call() -> None:
    release, stuck = threading.Event(), []

    def blocked() -> None:
        stuck.append(threading.current_thread())
        release.wait()  # in C: the interrupt fires once this returns

    with pytest.raises(EpisodeTimeout, match=r"did not finish within 0\.05 s"):
        call_with_timeout(blocked, 0.05)
    assert call_with_timeout(threading.current_thread, 5) is not stuck[0]  # the stuck worker is not reused
    assert stuck[0].is_alive()
    release.set()
    stuck[0].join(5)
    assert not stuck[0].is_alive()  # the interrupt ended the abandoned call, and the worker with it


def test_a_call_inside_a_call_gets_a_worker_of_its_own() -> None:
    def outer() -> tuple[threading.Thread, threading.Thread]:
        return threading.current_thread(), call_with_timeout(threading.current_thread, 5)

    mine, inner = call_with_timeout(outer, 5)
    assert mine is not inner


def test_errors_reach_the_caller_and_the_worker_serves_on() -> None:
    with pytest.raises(ValueError, match="bad agent"):
        call_with_timeout(lambda: (_ for _ in ()).throw(ValueError("bad agent")), 5)
    with pytest.raises(SystemExit):
        call_with_timeout(lambda: (_ for _ in ()).throw(SystemExit(3)), 5)
    assert call_with_timeout(lambda: 42, 5) == 42


def test_concurrent_callers_do_not_wait_for_each_other() -> None:
    inside, results = threading.Barrier(2, timeout=5), []

    def meet() -> str:
        inside.wait()  # both calls must be running at once to pass the barrier
        return "met"

    callers = [threading.Thread(target=lambda: results.append(call_with_timeout(meet, 5))) for _ in range(2)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(10)
    assert results == ["met", "met"]
