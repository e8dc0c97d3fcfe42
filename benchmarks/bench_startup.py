"""What installing the plugin costs a project: wall time of a pytest run over a plain file of 64
unrelated tests with the plugin active and with `-p no:toolsandbox`, and of a run collecting one
scenario, interleaved so machine load affects all alike. Prints min and median per configuration.

Usage: `python benchmarks/bench_startup.py [REPETITIONS]` (default 7). To measure another checkout
(the "before" figures), run it with `PYTHONPATH=<that checkout>`; the subprocesses inherit it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "settings"

PLAIN = """
import pytest

@pytest.mark.parametrize("n", range(64))
def test_number(n):
    assert n * 2 == n + n
"""


def _wall(args: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed


def main(repetitions: int) -> None:
    scenario = sorted(SCENARIO.glob("*.yaml"))[0]
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        (cwd / "test_plain.py").write_text(PLAIN, encoding="utf-8")
        configurations = {
            "plain file, plugin active": ["test_plain.py"],
            "plain file, -p no:toolsandbox": ["test_plain.py", "-p", "no:toolsandbox"],
            "one scenario collected": [str(scenario), "--report-dir", str(cwd / "report")],
        }
        times: dict[str, list[float]] = {name: [] for name in configurations}
        for _ in range(repetitions):
            for name, args in configurations.items():
                times[name].append(_wall(args, cwd))
    plain, bare = statistics.median(times["plain file, plugin active"]), statistics.median(
        times["plain file, -p no:toolsandbox"])
    print(f"pytest wall time over {repetitions} interleaved repetitions (s)")
    for name, values in times.items():
        print(f"  {name:32s} min {min(values):6.3f}   median {statistics.median(values):6.3f}")
    print(f"  plugin overhead on a plain file: {(plain / bare - 1) * 100:+.1f} % (median), "
          f"{(min(times['plain file, plugin active']) / min(times['plain file, -p no:toolsandbox']) - 1) * 100:+.1f} %"
          " (min)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
