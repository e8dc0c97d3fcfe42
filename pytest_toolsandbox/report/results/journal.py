"""records.jsonl: the run's fingerprint, then every finished item's record, appended as the item ends.

summary.json is written once, at the end of a session; a controller killed before that (SIGKILL, an
out-of-memory kill, a CI job cancelled past its grace period) would lose every result although each
trajectory file is already on disk. The journal keeps one record per line, written when its item
ends, so `--resume` and `merge` can rebuild the run from it. Its first line names the run it belongs
to (`{"journal": 1, "fingerprint": …, "started": …}`, report/results/fingerprint.py), so a reader never takes
an earlier run's journal for this one's.

Each line goes to the file in one `write` of an unbuffered descriptor. A line the disk cannot take
whole (ENOSPC) is cut off again, so the journal only ever holds whole lines and a later, smaller
line may still fit; nothing stays in a buffer to fail again when the file is closed. A line cut
short by a kill is ignored when read: that item is run again.

At the end of a run summary.json holds every record the journal holds. On a full disk the journal
therefore lends its space to the summary (it is removed, the summary written, and the journal written
again from memory, as far as it fits), and one that lost lines is written again once the summary is
there: nothing that fits is missing from either.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_toolsandbox.basics.jsondata import plain
from pytest_toolsandbox.basics.surrogates import encodable
from pytest_toolsandbox.basics.vocabulary import JOURNAL_FILE
from pytest_toolsandbox.recording.secrets import scrub_text
from pytest_toolsandbox.report.writing.files import write_atomic

JOURNAL_NAME = JOURNAL_FILE
JOURNAL_FORMAT = 1

Record = dict[str, Any]


def _line(data: dict[str, Any]) -> str:
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        text = json.dumps(plain(data), ensure_ascii=False, allow_nan=False)
    return scrub_text(text) + "\n"  # like every report file: no key in it


class Journal:
    """Appends records to `directory/records.jsonl`. `start` writes the file afresh with its header (and,
    for a resumed run, the records it took over); without `start` the file is opened at the first
    record, so a session that finishes no item leaves an earlier run's journal alone."""

    def __init__(self, directory: Path, append: bool) -> None:
        self.path = directory / JOURNAL_NAME
        self.append = append
        self.lost = 0
        """Records that could not be written (a full disk)."""
        self.header: dict[str, Any] | None = None
        """The run's fingerprint line, once `start` wrote it (written again by `rewrite`)."""
        self._descriptor: int | None = None

    def start(self, header: dict[str, Any], records: Iterable[Record] = ()) -> None:
        """Replace the journal by `header` and `records` at once (a rename: a kill leaves the old file or
        the new one, never a mix), then append to it."""
        self.close()
        write_atomic(self.path, _line({"journal": JOURNAL_FORMAT, **header}) + "".join(map(_line, records)))
        self.header = header
        self.append = True

    def remove(self) -> None:
        """Delete the file, freeing its space for summary.json (which holds its records); `rewrite` follows."""
        self.close()
        self.path.unlink(missing_ok=True)

    def rewrite(self, records: Iterable[Record]) -> OSError | None:
        """Write the journal again from memory: its header, then `records`, each line whole or not at all
        (`lost` counts those that did not fit); the last failure, or None when every line was written.

        In place, not through a rename (which would need room for two copies on a full disk): a kill
        meanwhile leaves part of the journal, while summary.json, written before, holds every record."""
        self.close()
        self.append, self.lost = False, 0
        records = list(records)
        failure = None
        if self.header is not None:
            try:
                self._write_line(_line({"journal": JOURNAL_FORMAT, **self.header}))
            except OSError as error:  # lines without the header that names their run would be misread
                self.lost = len(records)
                self.remove()
                return error
        for record in records:
            try:
                self.write(record)
            except OSError as error:
                failure = error
        return failure

    def _open(self) -> int:
        if self._descriptor is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if self.append else os.O_TRUNC)
            self._descriptor = os.open(self.path, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
            self.append = True
        return self._descriptor

    def write(self, record: Record) -> None:
        """Append one record as one whole line; an OSError leaves the file as it was and is raised."""
        try:
            self._write_line(_line(record))
        except OSError:
            self.lost += 1
            raise

    def _write_line(self, line: str) -> None:
        data = encodable(line).encode("utf-8")
        descriptor = self._open()
        start = os.fstat(descriptor).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view):]
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(descriptor, start)  # no half line for the next one to be glued to
            raise

    def close(self) -> None:
        if self._descriptor is not None:
            descriptor, self._descriptor = self._descriptor, None
            with contextlib.suppress(OSError):  # nothing is buffered: every line was written or reported
                os.close(descriptor)


@dataclass
class JournalContents:
    """What a journal holds: its header (None for a journal without one) and its records in order."""

    header: dict[str, Any] | None = None
    records: list[Record] = field(default_factory=list)


def read_journal(directory: Path) -> JournalContents:
    """The header and records of `directory/records.jsonl` in the order they were written (later lines of
    the same item win when the caller keys them); a missing file is an empty journal, a line that is not a
    whole JSON object (the last one, cut short by a kill) is skipped."""
    path = directory / JOURNAL_NAME
    contents = JournalContents()
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return contents
    for number, line in enumerate(text.splitlines()):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if number == 0 and isinstance(record, dict) and "journal" in record:
            contents.header = record
        elif isinstance(record, dict) and isinstance(record.get("id"), str):
            contents.records.append(record)
    return contents
