"""Hostile files and pipes against the command line and the loaders (issue 7, classes 7 and 9).

Malformed baselines, trajectories and scenario values must give an error naming the file, the field
and the fix — never a traceback, never gigabytes of memory.
"""

from __future__ import annotations

import subprocess
import sys


def test_cli_output_piped_into_a_closed_reader_ends_quietly() -> None:
    process = subprocess.Popen([sys.executable, "-m", "pytest_toolsandbox", "tools", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()  # like `| head -1`
    error = process.stderr.read().decode()
    process.wait(timeout=60)
    assert "Traceback" not in error and "BrokenPipeError" not in error
