"""Stopping an episode's thread: cooperatively at checkpoints, by force only outside critical sections,
and never in a way that leaves the process's shared HTTP connection pool locked."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from pytest_toolsandbox.recording.episode_recording import EpisodeRecording
from pytest_toolsandbox.running.interruption import Stoppable, checkpoint, critical
from tests.fake_provider import Behaviour, FakeProvider


class Stop(BaseException):
    """The error the tests stop their tasks with."""


def run_in_thread(task: Stoppable, function: object) -> tuple[threading.Thread, list[BaseException]]:
    """`task.run(function)` on a new thread; what it raised ends up in the returned list."""
    raised: list[BaseException] = []

    def target() -> None:
        try:
            task.run(function)  # type: ignore[arg-type]
        except BaseException as error:
            raised.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, raised


def test_a_requested_stop_is_raised_at_the_next_checkpoint() -> None:
    task, inside, release = Stoppable(), threading.Event(), threading.Event()
    steps: list[int] = []

    def episode() -> None:
        for step in range(1000):
            checkpoint()
            steps.append(step)
            if step == 2:
                inside.set()
                release.wait(30)

    thread, raised = run_in_thread(task, episode)
    assert inside.wait(30)
    task.stop(Stop)
    release.set()
    thread.join(30)
    assert steps == [0, 1, 2] and len(raised) == 1 and isinstance(raised[0], Stop)


def test_a_forced_stop_ends_a_loop_without_checkpoints() -> None:
    task, inside = Stoppable(), threading.Event()

    def runaway() -> None:
        inside.set()
        while True:
            threading.Event().wait(0.01)  # Python code between waits: the forced stop lands here

    thread, raised = run_in_thread(task, runaway)
    assert inside.wait(30)
    task.stop(Stop, force=True)
    thread.join(30)
    assert not thread.is_alive() and isinstance(raised[0], Stop)


def test_a_forced_stop_waits_for_the_critical_section_and_is_raised_as_it_ends() -> None:
    task, inside, release = Stoppable(), threading.Event(), threading.Event()
    finished: list[int] = []

    def saving() -> None:
        with critical():
            inside.set()
            release.wait(30)  # a forced stop posted now would land at the next Python instruction
            finished.append(sum(range(1000)))
        finished.append(-1)  # not reached: the stop is raised as the section ends

    thread, raised = run_in_thread(task, saving)
    assert inside.wait(30)
    task.stop(Stop, force=True)
    release.set()
    thread.join(30)
    assert finished == [499500] and isinstance(raised[0], Stop)


def test_a_stop_belongs_to_its_task_not_to_other_threads() -> None:
    """A stop asked of a task never reaches code running outside it (pytest's own thread here)."""
    elsewhere = Stoppable()
    elsewhere.stop(Stop, force=True)  # not running: nothing is raised anywhere
    ran: list[str] = []
    checkpoint()
    with critical():
        ran.append("critical")
    assert elsewhere.requested is Stop and ran == ["critical"]


def test_stopping_episodes_mid_request_never_locks_the_shared_connection_pool(tmp_path: Path) -> None:
    """Sixteen episodes keep sending requests through the process's shared live transports and are
    stopped by force at random moments, round after round; the pool must still serve a request after
    each round. Raising the stop anywhere inside the pool's Python code (as before critical sections)
    left its lock held on the first round."""
    import httpx2

    chooser = random.Random(7)
    with FakeProvider(Behaviour(delay=0.0)) as provider:
        url = provider.url + "/v1/chat/completions"

        def client(name: str) -> httpx2.Client:
            return EpisodeRecording(tmp_path / f"{name}.yaml.xz", "all").http_client(timeout=30)

        for round_number in range(6):
            def episode(name: str) -> None:
                http = client(name)
                while True:
                    http.post(url, json={"messages": [{"role": "user", "content": name}]})

            tasks = [Stoppable() for _ in range(16)]
            threads = [run_in_thread(task, lambda name=f"{round_number}-{number}": episode(name))[0]
                       for number, task in enumerate(tasks)]
            before = provider.stats().served
            assert provider.wait_until_served(before + chooser.randint(16, 200), timeout=60)
            for task in tasks:
                task.stop(Stop, force=True)
            for thread in threads:
                thread.join(30)
            assert not any(thread.is_alive() for thread in threads), f"round {round_number}: a task did not stop"
            probe, raised = run_in_thread(Stoppable(), lambda: client("probe").post(url, json={"messages": []}))
            probe.join(30)
            assert not probe.is_alive() and not raised, f"round {round_number}: the shared pool is locked"


@pytest.mark.parametrize("force", [False, True])
def test_the_first_requested_error_wins(force: bool) -> None:
    task = Stoppable()

    class Later(BaseException):
        pass

    task.stop(Stop, force=force)
    task.stop(Later, force=force)
    assert task.requested is Stop
