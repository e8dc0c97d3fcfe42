"""`--resume DIR`: what an earlier, unfinished run into DIR left, so that only the rest runs again.

The earlier records come from DIR/summary.json (a run that ended, even by Ctrl-C) and then from
DIR/records.jsonl (every item finished since, also by a run killed before writing its summary).
An item is done when it has a record that is not an infrastructure error: errored items run again,
and so do items that never finished. The resumed run writes its records into the same directory and
its summary holds the earlier ones too, so that it equals the summary of one uninterrupted run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_toolsandbox.report.journal import JOURNAL_NAME, read_journal
from pytest_toolsandbox.report.summary import SUMMARY_NAME, SummaryError, checked_summary, load_summary

Record = dict[str, Any]


class ResumeError(ValueError):
    """A directory that holds nothing to resume, or records that cannot be read."""


def earlier_records(directory: Path) -> dict[str, Record]:
    """Item id → the latest record of it in `directory` (summary first, then the journal's lines)."""
    summary_path, journal_path = directory / SUMMARY_NAME, directory / JOURNAL_NAME
    if not summary_path.is_file() and not journal_path.is_file():
        raise ResumeError(f"{directory} holds no {SUMMARY_NAME} nor {JOURNAL_NAME}: nothing to resume; pass the "
                          "report directory of the run to complete (its --report-dir)")
    records: dict[str, Record] = {}
    try:
        if summary_path.is_file():
            records.update((record["id"], record) for record in load_summary(summary_path)["records"])
        journal = checked_summary(journal_path, {"records": read_journal(directory)})
    except SummaryError as error:
        raise ResumeError(str(error)) from None
    records.update((record["id"], record) for record in journal["records"])
    return records


def done(records: dict[str, Record]) -> set[str]:
    """Ids of the items that need not run again."""
    return {nodeid for nodeid, record in records.items() if record.get("outcome") != "error"}
