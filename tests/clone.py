"""A fresh clone of the repository's user-facing files, and command lines run in it as a user types them.

The clone holds what a user's checkout holds (ini, scenarios, cassettes, baselines, scripts, docs, tests);
the plugin is imported from this checkout (PYTHONPATH). The environment has no API keys,
no `CI`, no `*_BASE_URL` and no proxies unless a test sets them. The ini's local-server URL stays as
committed (the cassettes' requests name it); the runs here replay it and never record from it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLONED = ("pyproject.toml", "README.md", "scenarios", "cassettes", "baselines", "scripts", "docs", "tests")
UNSET = ("CI", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GITHUB_STEP_SUMMARY",
         "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "PYTEST_ADDOPTS")


def shipped_outcome() -> tuple[int, int]:
    """The committed baseline's passes and known failures: what the Quickstart's replay must show."""
    import json

    baseline = ROOT / "baselines" / "qwen2.5-coder-1.5b-instruct.json"
    items = json.loads(baseline.read_text(encoding="utf-8"))["items"]
    passed = sum(1 for item in items if item["passed"])
    return passed, len(items) - passed


def shipped_counts() -> str:
    """The committed baseline's outcome as pytest and the summary word it, zero counts left out
    (`158 xfailed`, `3 passed, 155 xfailed`)."""
    return ", ".join(f"{count} {word}" for count, word in zip(shipped_outcome(), ("passed", "xfailed"), strict=True)
                     if count)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_clone(target: Path) -> Path:
    """Copy the user-facing files into `target`; returns it."""
    for name in CLONED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


def clone_env(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in UNSET}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def argv(command: str) -> list[str]:
    """The command's words, with `pytest` and `python` as this interpreter (the venv under test)."""
    words = shlex.split(command)
    if words[0] == "pytest":
        return [sys.executable, "-m", "pytest", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    return words


def run_line(command: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
