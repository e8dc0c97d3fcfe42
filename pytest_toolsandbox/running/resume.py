"""`--resume DIR`: what an earlier, unfinished run into DIR left, so that only the rest runs again.

The earlier records come from DIR/summary.json (a run that ended, even by Ctrl-C) and then from
DIR/records.jsonl (every item finished since, also by a run killed before writing its summary).
An item is done when it has a record that is not an infrastructure error: errored items run again,
and so do items that never finished. The resumed run writes its records into the same directory and
its summary holds the earlier ones too, so that it equals the summary of one uninterrupted run.

The directory is untrusted input: it must hold the fingerprint of a run with this run's agents, users,
variants, trials and result options (report/results/fingerprint.py), else resuming stops with one line saying
what differs; a scenario file edited since stops it too. Records that cannot belong to that run (a
scenario it did not select or that no longer exists, another agent, variant or trial) are dropped and
counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_toolsandbox.report.results.fingerprint import (
    RUN_FIELDS,
    FingerprintError,
    belongs,
    changed_scenarios,
    checked_fingerprint,
    option_differences,
)
from pytest_toolsandbox.report.results.journal import JOURNAL_NAME, read_journal
from pytest_toolsandbox.report.results.summary import SUMMARY_NAME, SummaryError, checked_summary, load_summary

Record = dict[str, Any]


class ResumeError(ValueError):
    """A directory that holds nothing to resume, records that cannot be read, or another run's."""


@dataclass(frozen=True)
class Earlier:
    """What the resumed run takes over: item id → latest record, the run's fingerprint, records dropped."""

    records: dict[str, Record]
    fingerprint: dict[str, Any]
    dropped: int


def _fingerprint(directory: Path, summary: dict[str, Any] | None, header: dict[str, Any] | None) -> dict[str, Any]:
    """The earlier run's fingerprint, from its summary or its journal (they must agree when both hold one)."""
    from_summary = (summary.get("run") or {}).get("fingerprint") if summary else None
    from_journal = header.get("fingerprint") if header else None
    if from_summary is not None and from_journal is not None and from_summary != from_journal:
        raise ResumeError(f"{directory}: {SUMMARY_NAME} and {JOURNAL_NAME} belong to different runs; start a new run "
                          "into another --report-dir")
    where = directory / (SUMMARY_NAME if from_summary is not None or from_journal is None else JOURNAL_NAME)
    try:
        return checked_fingerprint(from_summary if from_summary is not None else from_journal, str(where))
    except FingerprintError as error:
        raise ResumeError(str(error)) from None


def earlier_records(directory: Path, now: dict[str, Any], root: Path) -> Earlier:
    """The records of `directory` (summary first, then the journal's lines) a run fingerprinted `now`
    (without its scenarios) may take over; scenario files are looked up under `root`."""
    summary_path, journal_path = directory / SUMMARY_NAME, directory / JOURNAL_NAME
    if not summary_path.is_file() and not journal_path.is_file():
        raise ResumeError(f"{directory} holds no {SUMMARY_NAME} nor {JOURNAL_NAME}: nothing to resume; pass the "
                          "report directory of the run to complete (its --report-dir)")
    try:
        summary = load_summary(summary_path) if summary_path.is_file() else None
        journal = read_journal(directory)
        checked_summary(journal_path, {"records": journal.records})
    except SummaryError as error:
        raise ResumeError(str(error)) from None
    fingerprint = _fingerprint(directory, summary, journal.header)
    differences = option_differences(fingerprint, now, RUN_FIELDS)
    if differences:
        raise ResumeError(f"{directory} holds another run ({'; '.join(differences)}): pass that run's options to "
                          "complete it, or start a new run without --resume")
    changed, gone = changed_scenarios(fingerprint["scenarios"], root)
    if changed:
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        raise ResumeError(f"{directory}: {changed[0]}{more} changed since that run, so its records are not this "
                          "run's; start a new run without --resume")
    # the journal repeats the summary's records (and may hold later ones): each id counted once, the last kept
    candidates = {record.get("id", f"#{position}"): record for position, record
                  in enumerate((*(summary["records"] if summary else []), *journal.records))}
    known = {**fingerprint, "scenarios": {path: digest for path, digest in fingerprint["scenarios"].items()
                                          if path not in gone}}
    records: dict[str, Record] = {}
    dropped = 0
    for record in candidates.values():
        if belongs(record, known):
            records[record["id"]] = record
        else:
            dropped += 1
    return Earlier(records, fingerprint, dropped)


def done(records: dict[str, Record]) -> set[str]:
    """Ids of the items that need not run again."""
    return {nodeid for nodeid, record in records.items() if record.get("outcome") != "error"}
