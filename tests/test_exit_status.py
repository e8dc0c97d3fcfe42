"""The exit status table of docs/plugin.md ("Exit status"), row by row, and which fact wins when several
hold: the controller sets the status with `exit_status` alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_toolsandbox.running.exit_status import RunEnd, exit_status

OK, FAILED, INTERRUPTED = pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED
INTERNAL, USAGE = pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR
NO_TESTS = pytest.ExitCode.NO_TESTS_COLLECTED

CASES = {
    # 0: every item passed, or failed only as a known failure (pytest counts an xfail as no failure)
    "all passed": (RunEnd(OK), OK),
    "failures all noisy trials": (RunEnd(FAILED, failures=3, noisy_failures=3), OK),
    # 1: a failure, an error, a group regression, an output not written
    "a failure": (RunEnd(FAILED, failures=1), FAILED),
    "some failures noisy, one not": (RunEnd(FAILED, failures=3, noisy_failures=2), FAILED),
    "failed with no failure counted is not forgiven": (RunEnd(FAILED, failures=0, noisy_failures=0), FAILED),
    "a group regressed while every item passed": (RunEnd(OK, group_regressed=True), FAILED),
    "a group regressed and the failures were noisy": (
        RunEnd(FAILED, failures=2, noisy_failures=2, group_regressed=True), FAILED),
    "an output not written": (RunEnd(OK, write_failed=True), FAILED),
    "noisy failures and an output not written": (
        RunEnd(FAILED, failures=1, noisy_failures=1, write_failed=True), FAILED),
    # 2: interrupted, or a budget cap / an unavailable model left the results incomplete
    "interrupted": (RunEnd(INTERRUPTED), INTERRUPTED),
    "stopped, every finished item passed": (RunEnd(OK, stopped=True), INTERRUPTED),
    "stopped wins over failures": (RunEnd(FAILED, failures=4, stopped=True), INTERRUPTED),
    "stopped wins over a group regression and a write failure": (
        RunEnd(OK, stopped=True, group_regressed=True, write_failed=True), INTERRUPTED),
    "interrupted and an output not written": (RunEnd(INTERRUPTED, write_failed=True), INTERRUPTED),
    "interrupted and a group regressed": (RunEnd(INTERRUPTED, failures=1, group_regressed=True), INTERRUPTED),
    # 3, 4, 5: pytest's word on the session stands whatever the results say
    "internal error": (RunEnd(INTERNAL, failures=1, noisy_failures=1, stopped=True, write_failed=True), INTERNAL),
    "usage error": (RunEnd(USAGE, group_regressed=True, stopped=True), USAGE),
    "no tests collected": (RunEnd(NO_TESTS, write_failed=True), NO_TESTS),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_exit_status_table(case: str) -> None:
    end, expected = CASES[case]

    assert exit_status(end) == expected


def test_the_table_covers_every_status_docs_plugin_md_documents() -> None:
    text = (Path(__file__).parents[1] / "docs" / "plugin.md").read_text(encoding="utf-8")
    section = text.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    documented = {int(row) for row in re.findall(r"^\| (\d) \|", section, flags=re.MULTILINE)}

    assert documented == {int(expected) for _, expected in CASES.values()}
