"""The episode scheduler on its own: order, slots, errors, timeouts and stopping."""

from __future__ import annotations

import threading

import pytest

from pytest_toolsandbox.running.interruption import checkpoint, critical
from pytest_toolsandbox.running.scheduler import EpisodeCancelled, EpisodeScheduler, Job
from pytest_toolsandbox.running.watchdog import EpisodeTimeout


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_jobs_run_n_at_once_and_return_their_values() -> None:
    scheduler = EpisodeScheduler(3)
    together = threading.Barrier(3, timeout=30)  # only passes when three jobs run at the same time
    lock, peak, running = threading.Lock(), [0], [0]

    def job(number: int) -> int:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        if number < 3:
            together.wait()
        with lock:
            running[0] -= 1
        return number * number

    jobs = [scheduler.submit(Job(lambda number=number: job(number))) for number in range(9)]
    assert [scheduler.wait(each, None) for each in jobs] == [number * number for number in range(9)]
    assert peak[0] == 3
    assert scheduler.finished == 9 and scheduler.running == 0


def test_a_job_error_is_raised_to_the_waiting_item() -> None:
    scheduler = EpisodeScheduler(2)
    failing = scheduler.submit(Job(lambda: 1 / 0))
    fine = scheduler.submit(Job(lambda: "ok"))
    with pytest.raises(ZeroDivisionError):
        scheduler.wait(failing, None)
    assert scheduler.wait(fine, None) == "ok"


def test_jobs_see_the_context_of_their_submission() -> None:
    import contextvars

    variable: contextvars.ContextVar[str] = contextvars.ContextVar("variable", default="unset")
    scheduler = EpisodeScheduler(1)
    token = variable.set("submitted")
    job = scheduler.submit(Job(variable.get))
    variable.reset(token)
    assert scheduler.wait(job, None) == "submitted"


def test_a_stuck_episode_times_out_and_its_slot_is_replaced() -> None:
    clock = Clock()
    scheduler = EpisodeScheduler(1, clock=clock)
    entered, release = threading.Event(), threading.Event()

    def stuck() -> None:
        entered.set()
        while not release.wait(0.01):  # Python code between waits: the interrupt lands here
            pass

    job = scheduler.submit(Job(stuck))
    entered.wait(30)
    clock.now = 100.0  # the episode has now run 100 s
    with pytest.raises(EpisodeTimeout, match="within 5 s"):
        scheduler.wait(job, 5)
    assert job.done.wait(30) and isinstance(job.error, EpisodeTimeout)  # interrupted, not left running
    after = scheduler.submit(Job(lambda: "next"))
    assert scheduler.wait(after, 5) == "next"  # the single slot was given back


def test_time_in_the_queue_does_not_count_against_the_timeout() -> None:
    clock = Clock()
    scheduler = EpisodeScheduler(1, clock=clock)
    gate = threading.Event()
    first = scheduler.submit(Job(lambda: gate.wait(30)))
    queued = scheduler.submit(Job(lambda: "late but fine"))
    clock.now = 100.0  # long past the timeout, but `queued` has not started
    gate.set()
    assert scheduler.wait(first, None) is True
    assert scheduler.wait(queued, 5) == "late but fine"


def test_close_drops_queued_jobs_and_stops_running_ones() -> None:
    scheduler = EpisodeScheduler(1)
    entered = threading.Event()

    def forever() -> None:
        entered.set()
        while True:  # an episode's steps: each one begins with a checkpoint
            checkpoint()
            threading.Event().wait(0.01)

    running = scheduler.submit(Job(forever))
    queued = scheduler.submit(Job(lambda: "never"))
    entered.wait(30)
    scheduler.close()
    assert running.done.wait(30) and isinstance(running.error, EpisodeCancelled)
    with pytest.raises(EpisodeCancelled):
        scheduler.wait(queued, None)
    late = scheduler.submit(Job(lambda: "too late"))
    assert isinstance(late.error, EpisodeCancelled)


def test_a_scheduler_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least one slot"):
        EpisodeScheduler(0)


def test_close_asks_episodes_to_stop_at_a_checkpoint_and_never_cuts_a_critical_section() -> None:
    """Ctrl-C (close) must not interrupt a critical section (saving a cassette, a request over the shared
    connection pool), nor even a plain loop by force: running episodes stop at their next checkpoint."""
    scheduler = EpisodeScheduler(2)
    inside, playing_started, release = threading.Event(), threading.Event(), threading.Event()
    played: list[int] = []
    saved: list[int] = []

    def saving() -> None:
        with critical():
            inside.set()
            release.wait(30)  # an interrupt posted now would be raised at the next Python instruction
            saved.append(sum(range(1000)))

    def playing() -> None:
        playing_started.set()
        while not release.wait(0.01):  # no checkpoint in here: not stopped by close
            pass
        played.append(1)
        checkpoint()
        played.append(2)

    saving_job, playing_job = scheduler.submit(Job(saving)), scheduler.submit(Job(playing))
    assert inside.wait(30) and playing_started.wait(30)
    scheduler.close()
    release.set()
    with pytest.raises(EpisodeCancelled):  # the section ran to its end; the stop came right after it
        scheduler.wait(saving_job, None)
    with pytest.raises(EpisodeCancelled):
        scheduler.wait(playing_job, None)
    assert saved == [499500] and played == [1]


def test_a_stray_interrupt_between_jobs_costs_neither_a_runner_nor_a_job() -> None:
    """An interrupt meant for an episode that had already ended reaches its runner while it waits for
    the next job: the runner must go on serving (with one slot, a lost runner would leave every later
    job queued forever)."""
    from pytest_toolsandbox.running.interruption import interrupt

    scheduler = EpisodeScheduler(1)
    first = scheduler.submit(Job(threading.current_thread))
    runner = scheduler.wait(first, None)
    interrupt(runner, EpisodeCancelled)  # raised when the idle runner wakes for the next job
    later = scheduler.submit(Job(lambda: "served"))
    assert later.done.wait(30), "the job was never run"
    assert scheduler.wait(later, None) == "served"
    assert scheduler.running == 0
    scheduler.close()
