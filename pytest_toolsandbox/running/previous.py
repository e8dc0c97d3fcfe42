"""The previous run's summary, page and journal, set aside while this run has not written its own.

A run killed before its end (SIGKILL, an out-of-memory kill, Ctrl-C while collecting) writes no
summary, so the previous run's `summary.json` (`"partial": false`) and `records.jsonl` would pass for
this run's — to a reader, to `merge`, to `--resume`. They are therefore renamed to hidden names
(`.summary.json.previous`, …) as the session starts, before collection: a kill at any later point
leaves no file claiming to be this run's results. When the session selects scenario items, the set-
aside files are deleted as its first item is about to run; when it selects none (`pytest tests/` in a
repository that also has scenarios) or stops before any item runs (a missing cassette or key), they
are put back. A session stopped while collecting leaves them set aside: it cannot tell whether it
would have replaced them. (In `running/`, importing nothing of the report stack: every session that
runs tests does this, also one that never meets a scenario.)
"""

from __future__ import annotations

from pathlib import Path

from pytest_toolsandbox.basics.vocabulary import INDEX_FILE, JOURNAL_FILE, SUMMARY_FILE

SUFFIX = ".previous"


def set_aside_name(name: str) -> str:
    return f".{name}{SUFFIX}"


class PreviousReport:
    """The files of the previous run that `set_aside` moved, and where they went."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.moved: list[str] = []
        self.failures: list[tuple[str, str]] = []
        """(file, reason) of each rename or removal that failed: reported like a report write."""

    def set_aside(self, keep_journal: bool) -> None:
        """Rename summary.json, index.html and (unless `keep_journal`: `--resume` reads and rewrites it)
        records.jsonl out of the way."""
        names = [SUMMARY_FILE, INDEX_FILE] + ([] if keep_journal else [JOURNAL_FILE])
        for name in names:
            path = self.directory / name
            if not (path.is_file() or path.is_symlink()):  # absent, or a directory the write will report
                continue
            try:
                path.rename(self.directory / set_aside_name(name))
            except OSError as error:  # a directory in its place, no permission: reported like a write
                self._failed(error, path)
                continue
            self.moved.append(name)

    def discard(self) -> None:
        """This run writes its own report: the set-aside files go."""
        for name in self.moved:
            try:
                (self.directory / set_aside_name(name)).unlink(missing_ok=True)
            except OSError as error:
                self._failed(error, self.directory / set_aside_name(name))
        self.moved = []

    def keep_aside(self) -> None:
        """Leave the set-aside files where they are (this session cannot tell whose report they are)."""
        self.moved = []

    def restore(self) -> None:
        """This run writes no report: the previous one is put back where it was."""
        for name in self.moved:
            try:
                (self.directory / set_aside_name(name)).rename(self.directory / name)
            except OSError as error:
                self._failed(error, self.directory / name)
        self.moved = []

    def _failed(self, error: OSError, path: Path) -> None:
        self.failures.append((str(path), error.strerror or str(error)))
