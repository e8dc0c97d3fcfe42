"""pytest's own per-item cost on this machine, the floor under any plugin's per-item figure.

Runs, with the plugin disabled (`-p no:toolsandbox`), a file of 1,000 parametrised trivial tests using
one fixture, the same with a chain of 11 function-scoped fixtures (the plugin's item has 12), with and
without each fixture asking for `request`, and a one-test file for the fixed start-up cost. Prints the
CPU time per item ((run - one-test run) / 999, user + system of the pytest process), min and median
over the repetitions, interleaved so machine load affects all alike.

Usage: `python benchmarks/bench_floor.py [REPETITIONS]` (default 5).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ONE_FIXTURE = """
import pytest


@pytest.fixture
def value():
    return 1


@pytest.mark.parametrize("n", range({count}))
def test_trivial(value, n):
    assert value == 1
"""


def _chain(count: int, request: bool) -> str:
    """Eleven fixtures, each depending on the one before (as the plugin's do), optionally on `request`."""
    asks = "request, " if request else ""
    lines = ["import pytest", "", "", "@pytest.fixture", f"def f0({asks.rstrip(', ')}):", "    return 1", ""]
    for position in range(1, 11):
        lines += ["", "@pytest.fixture", f"def f{position}({asks}f{position - 1}):", f"    return f{position - 1}", ""]
    lines += ["", f"@pytest.mark.parametrize('n', range({count}))", "def test_trivial(f10, n):",
              "    assert f10 == 1", ""]
    return "\n".join(lines)


FILES = {
    "one fixture": lambda count: ONE_FIXTURE.format(count=count),
    "11 fixtures": lambda count: _chain(count, request=False),
    "11 fixtures, 10 asking for request": lambda count: _chain(count, request=True),
}


def _cpu(path: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:toolsandbox",
                           str(path)], cwd=path.parent, capture_output=True, text=True,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pytest {path.name} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main(repetitions: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        paths = {}
        for position, (name, text) in enumerate(FILES.items()):
            for count in (1, 1000):
                paths[name, count] = base / f"test_floor_{position}_{count}.py"
                paths[name, count].write_text(text(count))
        per_item: dict[str, list[float]] = {name: [] for name in FILES}
        for _ in range(repetitions):
            for name in FILES:
                one, many = _cpu(paths[name, 1]), _cpu(paths[name, 1000])
                per_item[name].append((many - one) / 999 * 1e3)
        for name, values in per_item.items():
            print(f"{name}: {min(values):.3f} ms CPU per item (min), {statistics.median(values):.3f} ms (median) "
                  f"over {repetitions} runs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
