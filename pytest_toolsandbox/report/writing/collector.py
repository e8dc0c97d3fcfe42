"""Controller-side results of a run; the single writer of the report directory.

xdist workers (or the in-process runner) deliver one plain-data record per item on the test
reports; the controller writes each trajectory JSON as it arrives, so memory holds records (and one
small page context per scenario file) only. At the end it writes summary.json and the static site.

A trajectory page links to the previous and next item in id order, which only the end knows for sure.
The collected ids say what to expect, so a page is written as soon as its item and both neighbours have
finished (their teardown reported) with trajectories: while the run goes on, not after its last item
(the pages were a third of a 200-item run's report time). At the end, a page is written again only if
what it shows changed since (a neighbour that never ran, a record amended later); trajectories are
read back one at a time either way. Nothing here imports pytest: the plugin forwards hook calls.
"""

from __future__ import annotations

import contextlib
import errno
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pytest_toolsandbox.report.pages.leaderboard import group_page_path
from pytest_toolsandbox.report.pages.site import write_site, write_trajectory_page
from pytest_toolsandbox.report.pages.trajectory_html import PageContext
from pytest_toolsandbox.report.results.journal import Journal
from pytest_toolsandbox.report.results.record import Record
from pytest_toolsandbox.report.results.summary import SUMMARY_NAME, aggregate, build_summary, write_summary
from pytest_toolsandbox.report.writing.files import remove_written, write_atomic
from pytest_toolsandbox.report.writing.write_failures import WriteFailures
from pytest_toolsandbox.world.trajectory import Trajectory

TRAJECTORY_DIR = "trajectories"


class RunCollector:
    """Accumulates records, durations and crashes; turns them into the summary and the site."""

    def __init__(self, directory: Path, trials: int, resume: bool = False, rules: str = "ours") -> None:
        self.directory = directory
        self.trials = trials
        self.rules = rules
        self.journal = Journal(directory, append=resume)
        """Each record as its item ends (report/results/journal.py): what survives a killed controller."""
        self.stop_reason: str | None = None
        """Why the run stopped before its last item when it was not interrupted (a budget cap)."""
        self.records: dict[str, Record] = {}
        self.durations: dict[str, float] = defaultdict(float)
        self.crashed: list[dict[str, str]] = []
        self.contexts: dict[str, PageContext] = {}
        self.expected = 0
        self.write_errors = WriteFailures(directory)
        """Files that could not be written (full disk, a file where a directory should be): the run
        goes on with its records in memory, and the plugin reports these and fails the exit status."""
        self.disk_full = False
        """A write failed for lack of space: trajectories and early pages are no longer tried."""
        self.summary_written = False
        """Whether `finish` wrote summary.json (the terminal must not point to a file that is not there)."""
        self._order: list[str] = []
        """The ids of the selected scenario items in id order (the order of the pages' links)."""
        self._position: dict[str, int] = {}
        self._settled: set[str] = set()
        """Items whose last phase was reported: their records no longer change."""
        self._early_pages: dict[str, tuple[Any, ...]] = {}
        """Pages written during the run, with what they were written from (see `_page_inputs`)."""

    def expect(self, count: int, ids: Iterable[str] = ()) -> None:
        """Items selected for this run, and their ids (every xdist worker reports the same collection)."""
        known = set(self._order)
        if not known.issuperset(ids):
            self._order = sorted(known.union(ids))
            self._position = {nodeid: position for position, nodeid in enumerate(self._order)}
        self.expected = max(self.expected, count, len(self._order))

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
                self._write_trajectory(record, trajectory_json, slug)
            self.records[nodeid] = record
        elif when == "teardown" and failed and nodeid in self.records:
            # an error now: no longer a baseline change (see baseline.classify)
            self.records[nodeid].update(outcome="error", change=None,
                                        error=self.records[nodeid]["error"] or "teardown failed")
        if when in ("teardown", "???"):
            self._settled.add(nodeid)
            if nodeid in self.records:
                self._journal(self._finished_record(nodeid))
            self._write_settled_pages(nodeid)

    def preload(self, records: Iterable[Record]) -> None:
        """Records of an earlier run into the same directory (`--resume`): kept as they are, their
        trajectory files already in place; their pages are written again at the end (new neighbours)."""
        for record in records:
            nodeid = record["id"]
            self.records[nodeid] = {key: value for key, value in record.items() if key != "duration"}
            self.durations[nodeid] = float(record.get("duration") or 0.0)
            self._settled.add(nodeid)
        self.expect(0, self.records)

    def start_journal(self, header: dict[str, Any]) -> None:
        """Begin this run's journal: `header` (the run's fingerprint), then the records taken over from
        the run being resumed, written at once in place of whatever journal the directory held."""
        self._guarded(self.journal.start, header, [self._finished_record(nodeid) for nodeid in self.records])

    def _journal(self, record: Record) -> None:
        try:
            self.journal.write(record)
        except OSError as error:
            self.write_errors.add(self.journal.path, f"{error.strerror or error} ({self.journal.lost} record(s) "
                                  "missing from it)")
            self.disk_full = self.disk_full or error.errno in (errno.ENOSPC, errno.EDQUOT)

    def _guarded(self, write: Callable[..., Any], *args: Any) -> bool:
        """Run one write; an OSError is remembered instead of ending the session."""
        try:
            write(*args)
        except OSError as error:
            self.write_errors.add_error(error, self.directory)
            self.disk_full = self.disk_full or error.errno in (errno.ENOSPC, errno.EDQUOT)
            return False
        return True

    def _write_file(self, path: Path, text: str) -> None:
        """One file of the site: written if it fits, else remembered, and the next one tried all the same."""
        self._guarded(write_atomic, path, text)

    def _write_trajectory(self, record: Record, trajectory_json: str, slug: str) -> None:
        """Write the item's JSON now (its page at the end); the record links only what was written. Once the
        disk is full, trajectories are no longer tried: what space is freed goes to the records."""
        json_path = f"{TRAJECTORY_DIR}/{slug}.json"
        if self.disk_full:
            self.write_errors.add(self.directory / json_path, "not tried: the disk is full")
            return
        if self._guarded(write_atomic, self.directory / json_path, trajectory_json):
            record["trajectory"], record["page"] = json_path, f"{TRAJECTORY_DIR}/{slug}.html"

    def _write_settled_pages(self, nodeid: str) -> None:
        """The pages of `nodeid` and its neighbours that can be written now, in the order they will
        have at the end if every expected item finishes."""
        position = self._position.get(nodeid)
        if position is None:
            return
        for index in range(max(position - 1, 0), min(position + 2, len(self._order))):
            neighbourhood = self._order[max(index - 1, 0):index + 2]
            if self.disk_full or self._order[index] in self._early_pages or not all(
                    other in self._settled and (self.records.get(other) or {}).get("page") for other in neighbourhood):
                continue
            record = self._finished_record(self._order[index])
            previous = self.records[self._order[index - 1]]["page"] if index else None
            following = self.records[self._order[index + 1]]["page"] if index + 1 < len(self._order) else None
            inputs = self._page_inputs(record, previous, following)
            try:
                self._write_page(*inputs)
            except OSError:  # written (and reported) at the end instead
                continue
            self._early_pages[record["id"]] = inputs

    def _page_inputs(self, record: Record, previous: str | None, following: str | None) -> tuple[Any, ...]:
        """Everything a trajectory page is made of, apart from its trajectory file."""
        base = self.contexts.get(record["path"], PageContext())
        groups = (("all items", "all.html"),
                  *((f"category {name}", group_page_path("category", name)) for name in record["categories"]),
                  (f"variant {record['variant']}", group_page_path("variant", record["variant"])))
        return record, PageContext(goal=base.goal, knowledge=base.knowledge, reference=base.reference,
                                   previous=previous, next=following, groups=groups)

    def _write_page(self, record: Record, context: PageContext) -> None:
        trajectory = Trajectory.load(self.directory / record["trajectory"], trusted=True)  # written by this run
        write_trajectory_page(self.directory, record["page"], trajectory, record, context)

    def _write_pages(self, records: list[Record]) -> None:
        """Every trajectory page not written during the run as it is now, with links to the previous and
        next item (in id order) and to its listings."""
        paged = [record for record in records if record.get("page")]
        for position, record in enumerate(paged):
            inputs = self._page_inputs(record, paged[position - 1]["page"] if position else None,
                                       paged[position + 1]["page"] if position + 1 < len(paged) else None)
            if self._early_pages.get(record["id"]) == inputs:
                continue
            try:
                self._write_page(*inputs)
            except OSError as error:  # written at the item's end, unreadable now: that page alone is missing
                self.write_errors.add_error(error, self.directory / record["page"])

    def _finished_record(self, nodeid: str) -> Record:
        """The record as the summary and the page show it: with the item's duration over all phases."""
        return {**self.records[nodeid], "duration": round(self.durations[nodeid], 6)}

    def finished_records(self) -> list[Record]:
        return [self._finished_record(nodeid) for nodeid in self.records]

    def aggregates(self) -> dict[str, dict[str, Any]]:
        return aggregate(self.finished_records(), self.trials, self.rules)

    def partial(self, interrupted: bool) -> bool:
        return interrupted or bool(self.crashed) or len(self.records) < self.expected or bool(self.stop_reason)

    def unfinished(self) -> list[str]:
        """Selected items without a record (never run, interrupted, crashed): what `--resume` runs."""
        return [nodeid for nodeid in self._order if nodeid not in self.records]

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
        summary["unfinished"] = self.unfinished()
        summary["stop_reason"] = self.stop_reason
        self.journal.close()
        self.summary_written = self._write_summary(summary)
        write_site(self.directory, summary, self._write_file)  # what fits is written, the summary or not
        self._write_pages(summary["records"])
        return summary

    def _write_summary(self, summary: dict[str, Any]) -> bool:
        """Write summary.json, which holds every record. On a full disk it is given the room of what can
        be written again from it: the trajectory pages written during the run (written again after it,
        as far as room is left), then the journal (a copy of its records, written again right after it,
        also when it lost lines to the full disk). Trajectory files are kept: nothing else holds them."""
        written = self._guarded(write_summary, self.directory, summary)
        if not written and self.disk_full:
            for record, _ in self._early_pages.values():
                with contextlib.suppress(OSError):
                    remove_written(self.directory / record["page"])
            self._early_pages.clear()
            written = self._guarded(write_summary, self.directory, summary)
        lent = not written and self.disk_full
        if lent:
            self.journal.remove()
            written = self._guarded(write_summary, self.directory, summary)
        if lent or (written and self.journal.lost):
            error = self.journal.rewrite(summary["records"])
            if error is None:
                self.write_errors.discard(self.journal.path)
            else:
                self.write_errors.add(self.journal.path, f"{error.strerror or error} ({self.journal.lost} record(s) "
                                      "missing from it)")
        if written:
            self.write_errors.discard(self.directory / SUMMARY_NAME)
        return written
