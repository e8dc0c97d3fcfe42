"""The report files a run could not write, and how the terminal names them.

A full disk fails every later write: a run of 158 items then misses its summary, the journal's tail,
158 trajectory files and as many pages. Each write is attempted on its own (what fits is kept) and
its failure remembered here; the terminal then shows one line per file that matters on its own
(summary.json, records.jsonl, index.html, the Markdown summary, a baseline) and one line per
directory of per-item files (`trajectories/`, `categories/`), so the line saying that summary.json is
missing is never lost among a hundred trajectory lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

GROUPED_DIRECTORIES = ("trajectories", "categories", "variants")
"""Directories of the report whose files are one per item or per group: counted, not listed."""


@dataclass
class WriteFailures:
    """Files not written, in the order they failed (a file failing twice counts once, its last reason)."""

    directory: Path
    failures: dict[str, str] = field(default_factory=dict)

    def add(self, path: str | Path, reason: str) -> None:
        self.failures.pop(str(path), None)
        self.failures[str(path)] = reason

    def add_error(self, error: OSError, fallback: str | Path) -> None:
        """An OSError of a write: the file it names (else `fallback`) and its reason."""
        self.add(error.filename or fallback, error.strerror or str(error))

    def discard(self, path: str | Path) -> None:
        """`path` was written after all (a retry once room was made): no longer missing."""
        self.failures.pop(str(path), None)

    def extend(self, other: WriteFailures) -> None:
        for path, reason in other.failures.items():
            self.add(path, reason)

    def __len__(self) -> int:
        return len(self.failures)

    def __iter__(self) -> Iterator[str]:
        return (f"{path}: {reason}" for path, reason in self.failures.items())

    def _group(self, path: str) -> str | None:
        """The per-item directory `path` lies in (relative to the report), or None for a file of its own."""
        try:
            relative = Path(path).relative_to(self.directory)
        except ValueError:
            return None
        head = relative.parts[0] if len(relative.parts) > 1 else None
        return head if head in GROUPED_DIRECTORIES else None

    def lines(self) -> list[str]:
        """One line per file of its own, then one per per-item directory (count, reason, an example)."""
        single: list[str] = []
        groups: dict[str, list[tuple[str, str]]] = {}
        for path, reason in self.failures.items():
            group = self._group(path)
            if group is None:
                single.append(f"{path}: {reason}")
            else:
                groups.setdefault(group, []).append((path, reason))
        for group, members in groups.items():
            reasons = sorted({reason for _, reason in members})
            single.append(f"{self.directory / group}/: {len(members)} file(s) not written ({'; '.join(reasons)}), "
                          f"e.g. {members[0][0]}")
        return single
