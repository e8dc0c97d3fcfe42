"""Says at the end of a run which rate limit requests waited for, and whose limit it was.

Each process's limiter (ratelimit.py) adds up, per limit, the seconds its requests waited. An xdist
worker hands its figures to the controller with its `workeroutput`; the controller (or the single
process) prints one line per limit that held requests back for at least `REPORTED_SECONDS`, so a run
slowed by our default, by the user's `--rpm`/`--tpm` or by the provider's announced limit says so.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_toolsandbox.recording.ratelimit import shared_limiter

WAITS = "toolsandbox_rate_limit_waits"
REPORTED_SECONDS = 1.0
"""Waits shorter than this in total are a run's normal pacing, not worth a line."""


class RateLimitReport:
    def __init__(self) -> None:
        self.waited: dict[str, float] = {}

    def _add(self, waits: dict[str, float]) -> None:
        for label, seconds in waits.items():
            self.waited[label] = self.waited.get(label, 0.0) + seconds

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        waits = dict(shared_limiter().waited)
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
        for line in self.lines():
            terminalreporter.write_line(line, yellow=True)
