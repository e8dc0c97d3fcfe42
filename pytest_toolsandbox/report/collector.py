"""Controller-side results of a run; the single writer of the report directory.

xdist workers (or the in-process runner) deliver one plain-data record per item on the test
reports; the controller writes each trajectory (JSON and HTML page) as it arrives, so memory holds
records only, and writes summary.json and the static site once at the end. Nothing here imports
pytest: the plugin forwards hook calls.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_toolsandbox.report.files import write_atomic
from pytest_toolsandbox.report.record import Record
from pytest_toolsandbox.report.site import write_site, write_trajectory_page
from pytest_toolsandbox.report.summary import aggregate, build_summary, write_summary
from pytest_toolsandbox.world.trajectory import Trajectory

TRAJECTORY_DIR = "trajectories"


class RunCollector:
    """Accumulates records, durations and crashes; turns them into the summary and the site."""

    def __init__(self, directory: Path, trials: int) -> None:
        self.directory = directory
        self.trials = trials
        self.records: dict[str, Record] = {}
        self.durations: dict[str, float] = defaultdict(float)
        self.crashed: list[dict[str, str]] = []
        self.expected = 0
        self.write_errors: list[str] = []
        """Files that could not be written (full disk, a file where a directory should be): the run
        goes on with its records in memory, and the plugin reports these and fails the exit status."""

    def expect(self, count: int) -> None:
        """Items selected for this run (every xdist worker reports the same collection)."""
        self.expected = max(self.expected, count)

    def add_phase(self, nodeid: str, when: str, failed: bool, duration: float, worker: str | None,
                  record: Record | None, trajectory_json: str | None, slug: str | None) -> None:
        """One phase report of a scenario item (setup, call, teardown, or an xdist crash)."""
        self.durations[nodeid] += duration
        if when == "???":
            self.crashed.append({"id": nodeid, "worker": worker or "", "error": "the worker running it crashed"})
        elif record is not None:
            record = {**record, "worker": worker, "trajectory": None, "page": None}
            if trajectory_json is not None and slug is not None:
                self._guarded(self._write_trajectory, record, trajectory_json, slug)
            self.records[nodeid] = record
        elif when == "teardown" and failed and nodeid in self.records:
            # an error now: no longer a baseline change (see baseline.classify)
            self.records[nodeid].update(outcome="error", change=None,
                                        error=self.records[nodeid]["error"] or "teardown failed")

    def _guarded(self, write: Callable[..., Any], *args: Any) -> bool:
        """Run one write; an OSError is remembered instead of ending the session."""
        try:
            write(*args)
        except OSError as error:
            where = error.filename or self.directory
            self.write_errors.append(f"{where}: {error.strerror or error}")
            return False
        return True

    def _write_trajectory(self, record: Record, trajectory_json: str, slug: str) -> None:
        """Write the item's JSON and page; the record links only the files that exist."""
        json_path, page = f"{TRAJECTORY_DIR}/{slug}.json", f"{TRAJECTORY_DIR}/{slug}.html"
        write_atomic(self.directory / json_path, trajectory_json)
        record["trajectory"] = json_path
        write_trajectory_page(self.directory, page, Trajectory.from_json(trajectory_json), record)
        record["page"] = page

    def finished_records(self) -> list[Record]:
        return [{**record, "duration": round(self.durations[nodeid], 6)} for nodeid, record in self.records.items()]

    def aggregates(self) -> dict[str, dict[str, Any]]:
        return aggregate(self.finished_records(), self.trials)

    def partial(self, interrupted: bool) -> bool:
        return interrupted or bool(self.crashed) or len(self.records) < self.expected

    def finish(self, run: dict[str, Any], interrupted: bool, baseline: dict[str, Any] | None) -> dict[str, Any] | None:
        """Write summary.json and the static site; None when the run had no scenario items."""
        if not self.records and not self.expected and not self.crashed:
            return None
        records = self.finished_records()
        if baseline is not None:
            baseline = {**baseline, **{change: sorted(r["id"] for r in records if r.get("change") == change)
                                       for change in ("regression", "improvement", "known_failure")}}
        summary = build_summary(run, records, self.trials, self.expected, self.partial(interrupted), baseline)
        summary["crashed"] = sorted(self.crashed, key=lambda crash: crash["id"])
        if self._guarded(write_summary, self.directory, summary):
            self._guarded(write_site, self.directory, summary)
        return summary
