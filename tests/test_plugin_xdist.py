"""xdist aggregation and partial runs: the controller alone writes one summary, even when a run
is interrupted, stopped early, or loses a worker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_plugin_support import records_by_id, run, summary, write_suite

VOLATILE_RUN_KEYS = ("started", "finished", "duration", "workers")
VOLATILE_RECORD_KEYS = ("duration", "worker")


def stable(data: dict[str, Any]) -> dict[str, Any]:
    """The summary without timings and worker ids."""
    run_info = {key: value for key, value in data["run"].items() if key not in VOLATILE_RUN_KEYS}
    records = [{key: value for key, value in record.items() if key not in VOLATILE_RECORD_KEYS}
               for record in data["records"]]
    return {**data, "run": run_info, "records": records}


def trajectories(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): path.read_text() for path in sorted(root.rglob("*.json"))}


def test_two_workers_and_no_workers_write_identical_summaries(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    arguments = ("--augment", "base,tool_description_scrambled", "--trials", "2")
    run(pytester, "-n", "0", *arguments).assert_outcomes(passed=8, failed=8)
    serial = summary(pytester)
    serial_trajectories = trajectories(pytester.path / "toolsandbox-report" / "trajectories")
    (pytester.path / "toolsandbox-report" / "trajectories").rename(pytester.path / "serial-trajectories")
    run(pytester, "-n", "2", *arguments).assert_outcomes(passed=8, failed=8)
    parallel = summary(pytester)
    assert {record["worker"] for record in parallel["records"]} == {"gw0", "gw1"}
    assert not parallel["partial"] and parallel["counts"]["expected"] == 16
    assert stable(parallel) == stable(serial)
    assert trajectories(pytester.path / "toolsandbox-report" / "trajectories") == serial_trajectories
    assert len(serial_trajectories) == 16


INTERRUPTING_AGENT = """
import os
import pytest
from pytest_toolsandbox.roles.scripted import ReferenceAgent


class Interrupting:
    name = "reference"

    def respond(self, messages, tools):
        {action}


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    if toolsandbox_scenario.name == "half":
        return Interrupting()
    return ReferenceAgent(toolsandbox_scenario)
"""


def test_keyboard_interrupt_leaves_a_partial_summary(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    pytester.makeconftest(INTERRUPTING_AGENT.format(action="raise KeyboardInterrupt"))
    result = run(pytester, no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = summary(pytester)
    assert data["partial"] is True
    assert data["counts"]["expected"] == 4 and data["counts"]["finished"] == 1
    assert list(records_by_id(data)) == ["scenarios/messaging/wifi_status.yaml::test_scenario[base]"]
    assert "PARTIAL: 1 of 4 items finished" in result.stdout.str()
    assert ("toolsandbox: 3 item(s) not finished — complete the run with the same command and --resume "
            "toolsandbox-report (only those items run)") in result.stdout.str()


def test_stopping_at_the_first_failure_leaves_a_partial_summary(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "-x").assert_outcomes(passed=1, failed=1)
    data = summary(pytester)
    assert data["partial"] is True and data["counts"]["finished"] == 2


def test_a_crashed_worker_leaves_a_partial_summary(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    pytester.makeconftest(INTERRUPTING_AGENT.format(action="os._exit(3)"))
    result = run(pytester, "-n", "2")
    result.assert_outcomes(passed=2, failed=2)  # xdist reports the crashed item as failed, then replaces the worker
    data = summary(pytester)
    assert data["partial"] is True
    assert [crash["id"] for crash in data["crashed"]] == ["scenarios/settings/half.yaml::test_scenario[base]"]
    assert data["counts"]["finished"] == 3 and data["counts"]["expected"] == 4
    json.dumps(data)  # still plain JSON
