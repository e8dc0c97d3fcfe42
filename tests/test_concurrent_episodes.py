"""`--concurrency N` in real pytest runs: episodes overlap, outcomes and files do not change.

The suite is the four-scenario one of test_plugin_support (one pass, one partial, one refusal, one
state change); agents are named `module:Class`, so the plugin builds them per item and can start their
episodes before their turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_plugin_support import records_by_id, run, summary, write_suite

AGENTS = r'''
import threading

from pytest_toolsandbox.roles.scripted import ReferenceAgent

GATHERED = threading.Barrier(4, timeout=60)
RELEASE = threading.Event()


class Gathering(ReferenceAgent):
    """The reference agent, except that its first turn waits until four episodes have reached it:
    the run only completes when four episodes are in flight at the same time."""

    def __init__(self, scenario):
        super().__init__(scenario)
        self.waited = False

    def respond(self, messages, tools):
        if not self.waited:
            self.waited = True
            GATHERED.wait()
        return super().respond(messages, tools)


class HangsOnWifiStatus(ReferenceAgent):
    def __init__(self, scenario):
        super().__init__(scenario)
        self.hangs = scenario.name == "wifi_status"

    def respond(self, messages, tools):
        if self.hangs:
            while not RELEASE.wait(0.01):
                pass
        return super().respond(messages, tools)
'''

EXPECTED = {"scenarios/settings/wifi_off.yaml::test_scenario[base]": "passed",
            "scenarios/messaging/wifi_status.yaml::test_scenario[base]": "passed",
            "scenarios/settings/half.yaml::test_scenario[base]": "failed",
            "scenarios/settings/refuse.yaml::test_scenario[base]": "failed"}
_TIMING = {"duration", "worker"}


def _suite(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    pytester.makepyfile(concurrent_agents=AGENTS)
    pytester.syspathinsert()


def _outcomes(pytester: pytest.Pytester, report: str = "toolsandbox-report") -> dict[str, str]:
    return {nodeid: record["outcome"] for nodeid, record in records_by_id(summary(pytester, report)).items()}


def _comparable(pytester: pytest.Pytester, report: str) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """Records without timings, and every trajectory JSON file's bytes."""
    data = summary(pytester, report)
    records = [{key: value for key, value in record.items() if key not in _TIMING} for record in data["records"]]
    folder = pytester.path / report / "trajectories"
    files = {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*.json"))}
    return records, files


def test_four_episodes_are_in_flight_at_once(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    result = run(pytester, "--agent", "concurrent_agents:Gathering", "--concurrency", "4")
    result.assert_outcomes(passed=2, failed=2)
    assert _outcomes(pytester) == EXPECTED


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "two-workers"])
def test_results_and_files_match_a_sequential_run(pytester: pytest.Pytester, workers: list[str]) -> None:
    _suite(pytester)
    common = ["--agent", "reference", "--agent", "unhelpful", "--augment", "base,tool_name_scrambled"]
    run(pytester, *common, "--concurrency", "1", "--report-dir", "sequential").assert_outcomes(passed=4, failed=12)
    run(pytester, *common, *workers, "--concurrency", "5", "--report-dir", "concurrent").assert_outcomes(
        passed=4, failed=12)
    sequential, concurrent = _comparable(pytester, "sequential"), _comparable(pytester, "concurrent")
    assert sequential[0] == concurrent[0]
    assert sequential[1] == concurrent[1] and len(sequential[1]) == 16


def test_an_overridden_agent_fixture_plays_in_its_turn_with_one_warning(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    pytester.makeconftest("""
import pytest
from pytest_toolsandbox.roles.scripted import ReferenceAgent


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    return ReferenceAgent(toolsandbox_scenario)
""")
    result = run(pytester, "--concurrency", "4")
    result.assert_outcomes(passed=2, failed=2)
    assert _outcomes(pytester) == EXPECTED
    output = result.stdout.str()
    assert output.count("--concurrency 4 does not apply to items whose toolsandbox_agent fixture is overridden") == 1
    assert "--agent module:factory" in output


def test_an_episode_started_early_that_hangs_errors_its_item_alone(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    result = run(pytester, "--agent", "concurrent_agents:HangsOnWifiStatus", "--concurrency", "4",
                 "--episode-timeout", "1")
    result.assert_outcomes(passed=1, failed=2, errors=1)
    records = records_by_id(summary(pytester))
    hung = records["scenarios/messaging/wifi_status.yaml::test_scenario[base]"]
    assert hung["outcome"] == "error" and "did not finish within 1 s" in hung["error"]
    assert {nodeid: record["outcome"] for nodeid, record in records.items() if nodeid != hung["id"]} == {
        nodeid: outcome for nodeid, outcome in EXPECTED.items() if nodeid != hung["id"]}


def test_exitfirst_stops_at_the_first_failure(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    result = run(pytester, "-x", "--agent", "unhelpful", "--concurrency", "3")
    result.assert_outcomes(failed=1)
    data = summary(pytester)
    assert data["partial"] and data["counts"]["finished"] == 1
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_selection_plays_only_the_selected_items(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    result = run(pytester, "-k", "half or refuse", "--concurrency", "4")
    result.assert_outcomes(failed=2, deselected=2)
    assert set(_outcomes(pytester)) == {"scenarios/settings/half.yaml::test_scenario[base]",
                                        "scenarios/settings/refuse.yaml::test_scenario[base]"}


def test_the_concurrency_is_recorded_and_validated(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    run(pytester, "--concurrency", "3").assert_outcomes(passed=2, failed=2)
    assert summary(pytester)["run"]["options"]["concurrency"] == 3
    result = run(pytester, "--concurrency", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--concurrency / toolsandbox_concurrency: '0' must be between 1 and 512" in result.stderr.str()


def test_in_process_agents_default_to_one_episode_at_a_time(pytester: pytest.Pytester) -> None:
    _suite(pytester)
    run(pytester).assert_outcomes(passed=2, failed=2)
    assert json.loads(Path(pytester.path / "toolsandbox-report" / "summary.json").read_text(
        encoding="utf-8"))["run"]["options"]["concurrency"] == 1
