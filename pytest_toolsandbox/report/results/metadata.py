"""Run metadata for summary.json: versions and the git commit, so a result can be reproduced."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

_DISTRIBUTIONS = ("pytest-toolsandbox", "pytest", "pluggy", "pytest-xdist", "pytest-html", "polars", "pydantic")


def versions() -> dict[str, str]:
    """Python and the installed versions of the distributions a result depends on."""
    found = {"python": platform.python_version()}
    for name in _DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state(root: Path) -> dict[str, object]:
    """The commit being evaluated and whether tracked files differ from it (None outside git)."""
    sha = _git(root, "rev-parse", "HEAD")
    if sha is None:
        return {"sha": None, "dirty": None}
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return {"sha": sha, "dirty": bool(status) if status is not None else None}
