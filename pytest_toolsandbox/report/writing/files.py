"""Atomic, scrubbed file writes: a reader (CI, a browser, another run's --baseline) never sees half a
file, nor a secret (every report file is written here, through `secrets.scrub_text`)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from pytest_toolsandbox.basics.surrogates import encodable
from pytest_toolsandbox.recording.secrets import scrub_text

_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_WRITTEN: set[Path] = set()
"""Every file written since its directory's last `take_written` (report/writing/owned.py removes stale ones)."""


def take_written(directory: Path) -> set[Path]:
    """The files written under `directory` since the last call (forgotten once taken)."""
    taken = {path for path in list(_WRITTEN) if path.is_relative_to(directory)}
    _WRITTEN.difference_update(taken)
    return taken


def remove_written(path: Path) -> None:
    """Delete a file this run wrote (its room is needed for a more important one): no longer this run's."""
    path.unlink(missing_ok=True)
    _WRITTEN.discard(path)


def write_atomic(path: Path, text: str) -> None:
    """Write `text`, scrubbed of secrets, to `path` through a temporary file in the same directory and a rename.

    An OSError names `path` (not the temporary file, not none when a flush failed), so a full disk is
    reported file by file. The temporary file is created like any other file (mode 0o666 minus the umask, not mkstemp's
    0o600), so the report stays readable by whoever may read the directory. Text that UTF-8 cannot
    encode (lone surrogates: half an emoji) is written with U+FFFD in their place, as the conversation
    already holds it (basics/surrogates.py), instead of failing the run at its end. The directory is
    created when the first write into it finds none (not checked before every write: a report writes
    thousands of files into a few directories).
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        try:
            descriptor = os.open(temporary, _NEW_FILE, 0o666)
        except (FileNotFoundError, NotADirectoryError):  # no directory yet (its first file), or a file in its way
            path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(temporary, _NEW_FILE, 0o666)
        try:
            with open(descriptor, "w", encoding="utf-8") as stream:
                stream.write(encodable(scrub_text(text)))
            os.replace(temporary, path)
            _WRITTEN.add(path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    except OSError as error:  # named after the file meant, not its temporary (a full disk fails the flush)
        raise OSError(error.errno, error.strerror or str(error), str(path)) from error
