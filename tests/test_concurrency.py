"""Concurrent episodes (`--concurrency N`) against the fake provider: the same results as one at a time,
recorded and replayed either way; a 429 storm pauses the pool instead of failing items; Ctrl-C leaves a
valid partial summary; `-x` and `-k` keep their meaning."""

from __future__ import annotations

import json
import lzma
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fake_provider import Behaviour, FakeProvider
from tests.test_plugin_support import QUIET, WIFI_OFF, WIFI_STATUS, run, summary, write_suite

# With the fake provider's agent, WIFI_STATUS passes in the base variant (its only tool is the one the
# milestone wants) and WIFI_OFF fails (the agent sends set_wifi_status(on=true)). Folders sort the passing
# files first, so a stop at the first failure has a known place.
PASSING = {f"scenarios/a_pass/status_{n}.yaml": WIFI_STATUS for n in range(6)}
FAILING = {f"scenarios/b_fail/wifi_off_{n}.yaml": WIFI_OFF for n in range(6)}
SUITE = {**PASSING, **FAILING}
DELAY = 0.05


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    monkeypatch.delenv("CI", raising=False)
    with FakeProvider(Behaviour(delay=DELAY, max_concurrent=64)) as server:
        yield server


def model_args(server: FakeProvider, concurrency: int, *extra: str, name: str = "run") -> tuple[str, ...]:
    return ("--agent", "openai:fake", "--model-base-url", server.url + "/v1", "--concurrency", str(concurrency),
            "--llm-retry-delay", "0.01", "--cassette-dir", f"cassettes-{name}", "--report-dir", f"report-{name}",
            *extra)


def stable(data: dict[str, Any]) -> dict[str, Any]:
    """The summary without run metadata (timings, options) and per-record timing and worker."""
    records = [{key: value for key, value in record.items() if key not in ("duration", "worker")}
               for record in data["records"]]
    return {**{key: value for key, value in data.items() if key != "run"}, "records": records}


def trajectories(root: Path) -> dict[str, str]:
    """The trajectory files of a report directory by relative path."""
    folder = root / "trajectories"
    return {str(path.relative_to(folder)): path.read_text() for path in sorted(folder.rglob("*.json"))}


def outcomes(data: dict[str, Any]) -> dict[str, str]:
    return {record["id"]: record["outcome"] for record in data["records"]}


def test_concurrent_runs_record_and_replay_the_same_results_as_sequential_ones(
        pytester: pytest.Pytester, provider: FakeProvider) -> None:
    write_suite(pytester, SUITE)
    augment = ("--augment", "base,3_distraction_tools")
    recorded: dict[int, dict[str, Any]] = {}
    for concurrency in (1, 64):
        provider.reset()
        result = run(pytester, *model_args(provider, concurrency, *augment, "--ts-record-mode", "all",
                                           name=f"record-{concurrency}"))
        stats = provider.stats()
        assert result.ret == 1 and stats.rate_limited == 0
        assert stats.peak_in_flight == 1 if concurrency == 1 else stats.peak_in_flight > 1
        recorded[concurrency] = summary(pytester, f"report-record-{concurrency}")
        assert stats.served == recorded[concurrency]["usage"]["tokens"]["agent"]["requests"]
    sequential, concurrent = recorded[1], recorded[64]
    assert len(sequential["records"]) == 24 and not sequential["partial"]
    assert set(outcomes(sequential).values()) == {"passed", "failed"}
    assert stable(concurrent) == stable(sequential)
    assert trajectories(pytester.path / "report-record-64") == trajectories(pytester.path / "report-record-1")

    provider.stop()  # replays must not need the server
    for recorded_at, replayed_at in ((64, 1), (1, 64)):
        replay_dir = f"replay-{replayed_at}"
        run(pytester, "--agent", "openai:fake", "--model-base-url", provider.url + "/v1", *augment,
            "--concurrency", str(replayed_at), "--ts-record-mode", "none",
            "--cassette-dir", f"cassettes-record-{recorded_at}", "--report-dir", replay_dir)
        replayed = summary(pytester, replay_dir)
        assert outcomes(replayed) == outcomes(sequential)
        assert all(record["replayed"] for record in replayed["records"])
        assert trajectories(pytester.path / replay_dir) == trajectories(pytester.path / "report-record-1")
    assert stable(summary(pytester, "replay-1")) == stable(summary(pytester, "replay-64"))


def test_a_429_storm_pauses_the_pool_once_and_fails_no_item(pytester: pytest.Pytester, provider: FakeProvider) -> None:
    write_suite(pytester, SUITE)
    augment = ("--augment", "base,3_distraction_tools")
    run(pytester, *model_args(provider, 8, *augment, name="calm"))
    calm = summary(pytester, "report-calm")
    provider.stop()
    retry_after = 1.0
    storm = Behaviour(delay=DELAY, max_concurrent=64, storm_after=20, storm_window=retry_after,
                      retry_after=retry_after)
    with FakeProvider(storm) as stormy:
        run(pytester, *model_args(stormy, 8, *augment, name="storm"))
        stats = stormy.stats()
    stormed = summary(pytester, "report-storm")
    assert stormed["counts"]["error"] == 0
    assert outcomes(stormed) == outcomes(calm)
    # Every call that met the storm waited out its retry-after (with --llm-retry-delay 0.01, a call
    # retrying on its own schedule would hit the window again and again): at most one 429 per running
    # episode, all in one burst.
    assert 1 <= stats.rate_limited <= 8
    assert stats.bursts(gap=retry_after / 2) == 1
    assert stats.served == stormed["usage"]["tokens"]["agent"]["requests"]


def test_under_xdist_each_worker_is_sent_enough_items_to_fill_its_slots(pytester: pytest.Pytester,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """xdist's own `load` scheduling would send each of two workers 96 // 2 // 4 = 12 items at first and
    top a worker up only once it is down to two, so at most 24 episodes could ever be in flight; with
    the plugin's scheduling each worker holds enough items for its 16 slots. The server answers nothing
    until 25 requests are in flight, so the test does not depend on how long an answer takes."""
    monkeypatch.delenv("CI", raising=False)
    write_suite(pytester, SUITE)
    with FakeProvider(Behaviour(delay=0.0, max_concurrent=64, hold_until_in_flight=25)) as server:
        result = pytester.runpytest_subprocess(*QUIET, "-n", "2", *model_args(server, 16, "--augment", "all"))
        stats = server.stats()
    data = summary(pytester, "report-run")
    assert data["counts"]["finished"] == 96 and data["counts"]["error"] == 0, result.stdout.str()[-3000:]
    assert {record["worker"] for record in data["records"]} == {"gw0", "gw1"}
    assert not stats.hold_timed_out and stats.peak_in_flight > 24, stats


def test_ctrl_c_at_concurrency_64_leaves_a_valid_partial_summary(pytester: pytest.Pytester,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    write_suite(pytester, SUITE)
    # 12 files × 8 variants × 2 trials = 192 episodes of at most 3 calls. The server answers 400 requests and
    # holds the rest: at most 64 episodes are running with at most 2 answers each, so at least 90 episodes
    # finish and at most 133, and the interrupt lands while the rest wait, however fast the machine.
    with FakeProvider(Behaviour(delay=0.0, max_concurrent=64, answer_at_most=400)) as server:
        command = [sys.executable, "-m", "pytest", *QUIET, *model_args(server, 64, "--augment", "all", "--trials", "2",
                                                                          "--ts-record-mode", "all")]
        process = subprocess.Popen(command, cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        output: list[str] = []
        reader = threading.Thread(target=lambda: output.extend(process.stdout or ()), daemon=True)
        reader.start()
        try:
            assert server.wait_until_served(400, timeout=120), "".join(output)
            finished = pytester.path / "report-run" / "trajectories"
            deadline = time.monotonic() + 120
            while (len(list(finished.rglob("*.json"))) < 10 and time.monotonic() < deadline
                   and process.poll() is None):
                threading.Event().wait(0.05)  # polling the report directory, not timing anything
            process.send_signal(signal.SIGINT)
            status = process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
        reader.join(timeout=30)
    assert status == 2, "".join(output)
    data = summary(pytester, "report-run")
    assert data["partial"] is True
    assert 0 < data["counts"]["finished"] == len(data["records"]) < data["counts"]["expected"] == 192
    cassettes = pytester.path / "cassettes-run"
    saved = {path for path in cassettes.rglob("*") if path.is_file()}
    for path in saved:
        assert path.name.endswith(".yaml.xz"), f"leftover {path}"
        assert yaml.safe_load(lzma.decompress(path.read_bytes()))["interactions"], path
    for record in data["records"]:  # every reported item kept its recording: saved when its episode ended
        assert record["outcome"] in ("passed", "failed"), record["error"]
        trajectory = json.loads((pytester.path / "report-run" / record["trajectory"]).read_text())
        assert trajectory["messages"]
        cassette = (cassettes / record["path"].removesuffix(".yaml") / "openai_fake--scripted"
                    / f"{record['variant']}-t{record['trial']}.yaml.xz")
        assert cassette in saved, record["id"]


def test_x_stops_at_the_first_failure_and_k_runs_only_the_selection(pytester: pytest.Pytester,
                                                                     provider: FakeProvider) -> None:
    # 6 passing items, then 66 failing ones: the scheduler keeps at most 4 × 8 episodes started ahead, so
    # the episodes begun before the first failure cannot reach the end of the list.
    write_suite(pytester, {**SUITE, **{f"scenarios/c_more/more_{n}.yaml": WIFI_OFF for n in range(60)}})
    result = run(pytester, *model_args(provider, 8, "-x", name="x"))
    result.assert_outcomes(passed=6, failed=1)
    stopped = summary(pytester, "report-x")
    assert stopped["partial"] and [record["outcome"] for record in stopped["records"]] == ["passed"] * 6 + ["failed"]
    calls_per_episode = {record["tokens"]["agent"]["requests"] for record in stopped["records"]}
    assert len(calls_per_episode) == 1  # the fake provider's episodes here all take the same number of calls
    assert provider.stats().served < 72 * calls_per_episode.pop()  # scheduling stopped before the end

    # A server of its own: a request the stopped run had already sent may still be answered meanwhile.
    with FakeProvider(Behaviour(delay=DELAY, max_concurrent=64)) as fresh:
        result = run(pytester, *model_args(fresh, 8, "-k", "wifi_off_2 or status_4", name="k"))
        served = fresh.stats().served
    result.assert_outcomes(passed=1, failed=1)
    selected = summary(pytester, "report-k")
    assert sorted(record["path"] for record in selected["records"]) == [
        "scenarios/a_pass/status_4.yaml", "scenarios/b_fail/wifi_off_2.yaml"]
    assert served == selected["usage"]["tokens"]["agent"]["requests"]  # nothing else was played


WARM_UP_PROBE = """
import json, sys
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef, request):
    if fixturedef.argname == "toolsandbox_evaluation":
        with open("loaded-before-scoring.jsonl", "a") as out:
            loaded = {name: name in sys.modules for name in ("pint", "nltk.stem.porter", "matplotlib")}
            out.write(json.dumps(loaded) + "\\n")
"""


def test_the_scorer_and_charts_load_while_every_episode_waits_for_its_model(pytester: pytest.Pytester,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The first item is scored after its episode's model calls (1 s each): by then the pool has used
    moments when every running episode waited for an answer to import the tools' libraries, the scorer
    and nltk's stemmer, and matplotlib follows at the next such moment; otherwise they would load in the
    middle of the run (at a tool's first call, at the first scoring) and at its end (the report)."""
    monkeypatch.delenv("CI", raising=False)
    write_suite(pytester, PASSING)
    pytester.makeconftest(WARM_UP_PROBE)
    with FakeProvider(Behaviour(delay=1.0, max_concurrent=64)) as server:
        result = pytester.runpytest_subprocess(*QUIET, *model_args(server, 4))
    result.assert_outcomes(passed=6)
    probes = [json.loads(line) for line in (pytester.path / "loaded-before-scoring.jsonl").read_text().splitlines()]
    assert probes[0]["pint"] and probes[0]["nltk.stem.porter"], probes  # warm-up steps before the first scoring
    assert probes[-1]["matplotlib"], probes  # the last: long before the report, which would load it
