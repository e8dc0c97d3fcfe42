"""Atomic file writes: a reader (CI, a browser, another run's --baseline) never sees half a file."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory and a rename.

    The temporary file is created like any other file (mode 0o666 minus the umask, not mkstemp's
    0o600), so the report stays readable by whoever may read the directory. Text that UTF-8 cannot
    encode (lone surrogates) is written as `\\udXXX` escapes, which JSON reads back, instead of
    failing the run at its end.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
