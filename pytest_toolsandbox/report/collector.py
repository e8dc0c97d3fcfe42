"""Controller-side results of a run; the single writer of the report directory.

xdist workers (or the in-process runner) deliver one plain-data record per item on the test
reports; the controller writes each trajectory JSON as it arrives, so memory holds records (and one
small page context per scenario file) only. At the end it writes summary.json, the static site and
the trajectory pages, read back one at a time, because a page links to its previous and next item
and only the end knows every item. Nothing here imports pytest: the plugin forwards hook calls.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_toolsandbox.report.files import write_atomic
from pytest_toolsandbox.report.leaderboard import group_page_path
from pytest_toolsandbox.report.record import Record
from pytest_toolsandbox.report.site import write_site, write_trajectory_page
from pytest_toolsandbox.report.summary import aggregate, build_summary, write_summary
from pytest_toolsandbox.report.trajectory_html import PageContext
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
        self.contexts: dict[str, PageContext] = {}
        self.expected = 0
        self.write_errors: list[str] = []
        """Files that could not be written (full disk, a file where a directory should be): the run
        goes on with its records in memory, and the plugin reports these and fails the exit status."""

    def expect(self, count: int) -> None:
        """Items selected for this run (every xdist worker reports the same collection)."""
        self.expected = max(self.expected, count)

    def add_phase(self, nodeid: str, when: str, failed: bool, duration: float, worker: str | None,
                  record: Record | None, trajectory_json: str | None, slug: str | None,
                  context: PageContext | None = None) -> None:
        """One phase report of a scenario item (setup, call, teardown, or an xdist crash); `context`
        is the scenario's goal, knowledge and reference dialogue for its trajectory pages."""
        self.durations[nodeid] += duration
        if when == "???":
            self.crashed.append({"id": nodeid, "worker": worker or "", "error": "the worker running it crashed"})
        elif record is not None:
            record = {**record, "worker": worker, "trajectory": None, "page": None}
            if context is not None:
                self.contexts.setdefault(record["path"], context)
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
        """Write the item's JSON now (its page at the end); the record links only what was written."""
        json_path = f"{TRAJECTORY_DIR}/{slug}.json"
        write_atomic(self.directory / json_path, trajectory_json)
        record["trajectory"], record["page"] = json_path, f"{TRAJECTORY_DIR}/{slug}.html"

    def _write_pages(self, records: list[Record]) -> None:
        """Every trajectory page, with links to the previous and next item (in id order) and to its listings."""
        paged = [record for record in records if record.get("page")]
        for position, record in enumerate(paged):
            try:
                trajectory = Trajectory.load(self.directory / record["trajectory"], trusted=True)  # written by this run
            except OSError as error:  # written at the item's end, unreadable now: that page alone is missing
                self.write_errors.append(f"{error.filename or record['trajectory']}: {error.strerror or error}")
                continue
            base = self.contexts.get(record["path"], PageContext())
            groups = (("all items", "all.html"),
                      *((f"category {name}", group_page_path("category", name)) for name in record["categories"]),
                      (f"variant {record['variant']}", group_page_path("variant", record["variant"])))
            context = PageContext(goal=base.goal, knowledge=base.knowledge, reference=base.reference,
                                  previous=paged[position - 1]["page"] if position else None,
                                  next=paged[position + 1]["page"] if position + 1 < len(paged) else None,
                                  groups=groups)
            self._guarded(write_trajectory_page, self.directory, record["page"], trajectory, record, context)

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
            self._write_pages(summary["records"])
        return summary
