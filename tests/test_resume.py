"""`--resume DIR`: a run killed mid-way (SIGINT, SIGKILL) or left with errored items, completed by a
second run, gives the summary of one uninterrupted run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.test_plugin_support import run, summary, write_suite
from tests.test_plugin_xdist import trajectories
from tests.test_report_merge import page_links, stable_records

STOPPING_AGENT = """
import os
import signal

import pytest

from pytest_toolsandbox.roles.scripted import ReferenceAgent

STARTED = [0]


class Crashing:
    name = "reference"

    def respond(self, messages, tools):
        raise ConnectionError("the provider is down")


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    STARTED[0] += 1
    if STARTED[0] == int(os.environ.get("STOP_AT_ITEM", "0")):
        os.kill(os.getpid(), getattr(signal, os.environ["STOP_SIGNAL"]))
    if toolsandbox_scenario.name in os.environ.get("OUTAGE_FOR", "").split(","):
        return Crashing()
    return ReferenceAgent(toolsandbox_scenario)
"""

ARGUMENTS = ("--trials", "2", "--augment", "base,tool_description_scrambled")


def assert_same_run(resumed: dict[str, Any], single: dict[str, Any]) -> None:
    assert stable_records(resumed) == stable_records(single)
    assert resumed["aggregates"] == single["aggregates"]
    assert resumed["counts"] == single["counts"]
    assert resumed["partial"] is False and resumed["unfinished"] == []


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    write_suite(pytester)
    pytester.makeconftest(STOPPING_AGENT)
    run(pytester, *ARGUMENTS, "--report-dir", "single").assert_outcomes(passed=8, failed=8)
    return pytester


@pytest.mark.parametrize(("stop", "returncode"), [("SIGINT", pytest.ExitCode.INTERRUPTED), ("SIGKILL", -9)])
def test_a_killed_run_resumed_equals_an_uninterrupted_run(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                          stop: str, returncode: int) -> None:
    monkeypatch.setenv("STOP_AT_ITEM", "7")
    monkeypatch.setenv("STOP_SIGNAL", stop)
    killed = suite.runpytest_subprocess("-p", "no:cacheprovider", *ARGUMENTS, "--report-dir", "report")
    assert killed.ret == returncode
    report = suite.path / "report"
    if stop == "SIGINT":  # pytest ended the session: a partial summary
        data = summary(suite, "report")
        assert data["partial"] is True and data["counts"]["finished"] == 6 and len(data["unfinished"]) == 10
    else:  # no summary, but the journal of the six finished items
        assert not (report / "summary.json").exists()
        header, *lines = (report / "records.jsonl").read_text().splitlines()
        assert json.loads(header)["fingerprint"]["agents"] == ["reference"] and len(lines) == 6
    monkeypatch.delenv("STOP_AT_ITEM")
    resumed = run(suite, *ARGUMENTS, "--resume", "report")
    outcomes = resumed.parseoutcomes()  # the six finished items are not run again
    assert outcomes["passed"] + outcomes["failed"] == 10 and outcomes["deselected"] == 6
    assert_same_run(summary(suite, "report"), summary(suite, "single"))
    assert trajectories(report / "trajectories") == trajectories(suite.path / "single" / "trajectories")
    assert page_links(report) == page_links(suite.path / "single")


def test_errored_items_run_again(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OUTAGE_FOR", "half,wifi_off")
    run(suite, *ARGUMENTS, "--report-dir", "report").assert_outcomes(passed=4, failed=4, errors=8)
    assert summary(suite, "report")["counts"]["error"] == 8
    monkeypatch.delenv("OUTAGE_FOR")
    resumed = run(suite, *ARGUMENTS, "--resume", "report")
    resumed.assert_outcomes(passed=4, failed=4)
    assert_same_run(summary(suite, "report"), summary(suite, "single"))


def test_resuming_a_finished_run_runs_nothing_and_keeps_its_results(suite: pytest.Pytester) -> None:
    resumed = run(suite, *ARGUMENTS, "--resume", "single")
    assert resumed.ret == pytest.ExitCode.NO_TESTS_COLLECTED or "16 deselected" in resumed.stdout.str()
    data = summary(suite, "single")
    assert data["counts"]["finished"] == 16 and data["partial"] is False


def test_resume_needs_an_earlier_run(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    (pytester.path / "nothing").mkdir()
    result = run(pytester, "--resume", "nothing")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "nothing holds no summary.json nor records.jsonl: nothing to resume" in result.stderr.str()


def test_shards_and_resume_work_under_xdist(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OUTAGE_FOR", "half")
    run(suite, *ARGUMENTS, "--report-dir", "report", "-n", "2").assert_outcomes(passed=8, failed=4, errors=4)
    monkeypatch.delenv("OUTAGE_FOR")
    run(suite, *ARGUMENTS, "--resume", "report", "-n", "2").assert_outcomes(failed=4)
    assert_same_run(summary(suite, "report"), summary(suite, "single"))





def test_an_ini_report_dir_gives_way_to_resume_and_a_typed_one_must_agree(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "first").assert_outcomes(passed=2, failed=2)
    pytester.makeini("[pytest]\ntoolsandbox_report_dir = elsewhere\n")

    resumed = run(pytester, "--resume", "first")
    assert resumed.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), resumed.stderr.str()
    assert summary(pytester, "first")["counts"]["finished"] == 4 and not (pytester.path / "elsewhere").exists()

    clash = run(pytester, "--resume", "first", "--report-dir", "toolsandbox-report")
    assert clash.ret == pytest.ExitCode.USAGE_ERROR
    assert "drop --report-dir" in clash.stderr.str() and "toolsandbox-report or make it the same" in clash.stderr.str()
