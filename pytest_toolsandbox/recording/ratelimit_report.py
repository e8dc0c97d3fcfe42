"""Says which rate limit requests waited for, and whose limit it was: as soon as one first holds requests
back, and in total at the end of the run.

Each process's limiter (ratelimit.py) adds up, per limit, the seconds its requests waited. A limit is
named on the terminal once its waits reach `REPORTED_SECONDS` (after the test report that follows: an
xdist worker attaches the newly reached limits to that report for the controller to print), so a run
slowed for an hour by our default, by the user's `--rpm`/`--tpm` or by the provider's announced limit
says so while it can still be stopped and rerun with other limits. At the end, an xdist worker hands its
totals to the controller with its `workeroutput`; the controller (or the single process) prints one line
per limit that held requests back for at least `REPORTED_SECONDS`.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_toolsandbox.recording.ratelimit import RateLimiter, shared_limiter

WAITS = "toolsandbox_rate_limit_waits"
FIRST_WAITS = "toolsandbox_rate_limit_first_waits"
"""The test report attribute carrying the limits a worker's requests have newly waited for."""
REPORTED_SECONDS = 1.0
"""Waits shorter than this in total are a run's normal pacing, not worth a line."""


def first_wait_line(label: str, seconds: float) -> str:
    return f"rate limit: requests are waiting for {label} ({seconds:.1f} s so far; the total comes at the end)"


class RateLimitReport:
    def __init__(self, config: pytest.Config | None = None, limiter: RateLimiter | None = None) -> None:
        self.config = config
        self.limiter = limiter or shared_limiter()
        """The limiter configured for this session (not whichever a later session in the process made)."""
        self.waited: dict[str, float] = {}
        self._named: set[str] = set()
        """Limits this process already named (a worker: sent to the controller; else printed)."""
        self._shown: set[str] = set()
        """Limits the terminal named (from any process)."""

    def _newly_reached(self) -> dict[str, float]:
        """The limits this process's requests have waited for `REPORTED_SECONDS` or more, not named yet."""
        fresh = {label: seconds for label, seconds in dict(self.limiter.waited).items()
                 if seconds >= REPORTED_SECONDS and label not in self._named}
        self._named.update(fresh)
        return fresh

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A worker attaches the limits it newly waited for (xdist sends them with the report); the
        controller, or the single process, names each limit the first time one holds requests back."""
        carried = getattr(report, FIRST_WAITS, None)
        if self.config is not None and hasattr(self.config, "workerinput"):
            fresh = self._newly_reached()
            if fresh:
                setattr(report, FIRST_WAITS, fresh)
            return
        fresh = carried if isinstance(carried, dict) else self._newly_reached()
        reporter = self.config.pluginmanager.get_plugin("terminalreporter") if self.config is not None else None
        if fresh and reporter is not None:
            self._show(reporter, [first_wait_line(str(label), float(seconds)) for label, seconds in fresh.items()
                                  if str(label) not in self._shown])
            self._shown.update(map(str, fresh))

    @staticmethod
    def _show(reporter: Any, lines: list[str]) -> None:
        """Lines on the terminal, made safe (labels hold model names from requests); the terminal module is
        imported only when a line is shown, so a session without model requests imports no report code."""
        from pytest_toolsandbox.report.text.terminal import terminal_safe

        for line in lines:
            reporter.ensure_newline()
            reporter.write_line(terminal_safe(line), yellow=True)

    def _add(self, waits: dict[str, float]) -> None:
        for label, seconds in waits.items():
            self.waited[label] = self.waited.get(label, 0.0) + seconds

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        waits = dict(self.limiter.waited)
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[WAITS] = waits
        else:
            self._add(waits)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        waits = getattr(node, "workeroutput", {}).get(WAITS)
        if isinstance(waits, dict):
            self._add({str(label): float(seconds) for label, seconds in waits.items()})

    def lines(self) -> list[str]:
        return [f"rate limit: requests waited {seconds:.1f} s in total (summed over requests) for {label}"
                for label, seconds in sorted(self.waited.items(), key=lambda item: -item[1])
                if seconds >= REPORTED_SECONDS]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines():
            self._show(terminalreporter, self.lines())
