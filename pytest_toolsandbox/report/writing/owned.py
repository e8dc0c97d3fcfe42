"""The report directory holds what this run wrote, and whatever the user put there.

Each run lists the files it wrote in `.toolsandbox-files` (paths relative to the directory). The next
run removes the files of that list it did not write again (trajectory pages of items no longer run,
the comparison page of a run without `--baseline`, listings of categories no longer present), and
directories this leaves empty. A file that is not on the list (notes, a copied baseline, an earlier
`summary.json` saved under another name) is never touched, so a report directory can be shared with
the user's own files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pytest_toolsandbox.report.writing.files import take_written, write_atomic

MANIFEST = ".toolsandbox-files"


def _listed(directory: Path) -> set[str]:
    try:
        lines = (directory / MANIFEST).read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        return set()
    return {line for line in lines if line and not line.startswith("#")}


def _inside(directory: Path, relative: str) -> Path | None:
    """The listed file, only when it lies inside the directory (a hand-edited list cannot reach out)."""
    path = Path(os.path.normpath(directory / relative))
    return path if path.is_relative_to(directory) and path != directory else None


def remove_stale(directory: Path, kept: Iterable[str] = ()) -> list[tuple[str, str]]:
    """Delete the files the previous run wrote and this one did not, write the new list; the errors.

    `kept` (paths relative to the directory) are this run's too although it did not write them now: the
    trajectories of the records a `--resume` run took over from the run it completes."""
    written = {path.relative_to(directory).as_posix() for path in take_written(directory)} | set(kept)
    errors = []
    for relative in sorted(_listed(directory) - written):
        path = _inside(directory, relative)
        if path is None or not path.is_file() or path.is_symlink():
            continue
        try:
            path.unlink()
            for parent in path.parents:
                if parent == directory or any(parent.iterdir()):
                    break
                parent.rmdir()
        except OSError as error:
            errors.append((str(path), f"not removed: {error.strerror or error}"))
    header = "# files written by pytest-toolsandbox's last run; the next run removes those it does not write\n"
    write_atomic(directory / MANIFEST, header + "".join(f"{relative}\n" for relative in sorted(written)))
    take_written(directory)  # the list itself is not a report file
    return errors
