"""records.jsonl: every finished item's record, appended as the item ends.

summary.json is written once, at the end of a session; a controller killed before that (SIGKILL, an
out-of-memory kill, a CI job cancelled past its grace period) would lose every result although each
trajectory file is already on disk. The journal keeps one record per line, flushed when its item
ends, so `--resume` and `merge` can rebuild the run from it. A line cut short by the kill is ignored:
that item is run again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from pytest_toolsandbox.basics.jsondata import plain
from pytest_toolsandbox.recording.secrets import scrub_text

JOURNAL_NAME = "records.jsonl"

Record = dict[str, Any]


class Journal:
    """Appends records to `directory/records.jsonl`; the file is opened at the first record, so a
    session that finishes no item leaves an earlier run's journal alone."""

    def __init__(self, directory: Path, append: bool) -> None:
        self.path = directory / JOURNAL_NAME
        self.append = append
        self._stream: IO[str] | None = None

    def write(self, record: Record) -> None:
        if self._stream is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._stream = open(self.path, "a" if self.append else "w", encoding="utf-8",  # noqa: SIM115
                                errors="backslashreplace")
        try:
            line = json.dumps(record, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            line = json.dumps(plain(record), ensure_ascii=False, allow_nan=False)
        self._stream.write(scrub_text(line) + "\n")  # like every report file: no key in it
        self._stream.flush()  # in the kernel's hands now: a killed process loses nothing written

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def read_journal(directory: Path) -> list[Record]:
    """The records of `directory/records.jsonl` in the order they were written (later lines of the
    same item win when the caller keys them); a missing file is an empty journal, a line that is not a
    whole JSON object (the last one, cut short by a kill) is skipped."""
    path = directory / JOURNAL_NAME
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            records.append(record)
    return records
