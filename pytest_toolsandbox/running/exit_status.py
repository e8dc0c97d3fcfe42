"""The exit status of a run, decided in one place (the table in docs/plugin.md, "Exit status").

pytest decides a status from its items; the controller knows more when the session ends: a budget cap
or an unavailable model that left the results incomplete, the baseline gate (failed trials of tasks it
found noisy; a category or the run that dropped across its tasks), and report files it could not write.
Each of these may change only a status pytest gave for a finished run (0 or 1): an interruption, an
internal error, a usage error or an empty selection says more about the session than any result does.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

FINISHED = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
"""The statuses of a run whose items all ran: the only ones the run's results can change."""


@dataclass(frozen=True)
class RunEnd:
    """What the exit status depends on when the session ends."""

    pytest_status: int
    """The status pytest decided from the items and the session (ExitCode)."""
    failures: int = 0
    """Failed reports pytest counted (`session.testsfailed`): failures and errors."""
    noisy_failures: int = 0
    """Of those, the failed trials of tasks the baseline gate found noisy (report/ci/gate.py `forgiven`)."""
    group_regressed: bool = False
    """The gate found the run or a category worse across its tasks (report/ci/group_gate.py)."""
    stopped: bool = False
    """A budget cap stopped new episodes while items were left, or a model became unavailable: the
    results are incomplete."""
    write_failed: bool = False
    """A report file (summary, page, Markdown, baseline) could not be written."""


def exit_status(end: RunEnd) -> int:
    """The run's exit status, in this order: pytest's word on an unfinished session stands; incomplete
    results are an interruption (2) whatever they hold; failures that are all noisy trials pass (0); a
    group regression or a missing output fails a run that would pass (1)."""
    if end.pytest_status not in FINISHED:
        return end.pytest_status
    if end.stopped:
        return pytest.ExitCode.INTERRUPTED
    all_noisy = 0 < end.noisy_failures == end.failures
    if end.pytest_status == pytest.ExitCode.TESTS_FAILED and not all_noisy:
        return pytest.ExitCode.TESTS_FAILED
    if end.group_regressed or end.write_failed:
        return pytest.ExitCode.TESTS_FAILED
    return pytest.ExitCode.OK
