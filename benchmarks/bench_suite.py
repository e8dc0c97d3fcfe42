"""Wall time of the whole scenario suite through pytest, as a user runs it: `--augment all`, reference agent.

Runs `pytest SCENARIOS --augment all` twice in a fresh interpreter each — without xdist (`-n 0`) and
with two workers (`-n 2`) — and prints the wall time, the number of items and the milliseconds per
item (process start-up and collection included: that is what a user waits for), plus a `--collect-only`
run so the fixed start-up cost can be told apart from the cost per item. The report goes to a
temporary directory. Usage: `python benchmarks/bench_suite.py [SCENARIOS_DIR]` (default: scenarios/).
Issue 9's target: the whole 1,200-item suite under 60 s with `-n 2` on a 2-core machine.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(scenarios: Path, *options: str) -> tuple[float, float, int, int, str]:
    """(wall seconds, CPU seconds, passed, failed, last line) of one pytest run."""
    with tempfile.TemporaryDirectory() as report:
        command = [sys.executable, "-m", "pytest", str(scenarios), "--augment", "all", "-q", "-p", "no:cacheprovider",
                   "--report-dir", report, "--scenarios", str(scenarios), *options]
        started, cpu = time.perf_counter(), _children_cpu()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
    counted = re.compile(r"\d+ (passed|failed|tests? collected)")
    summary = next((line for line in reversed(done.stdout.splitlines()) if counted.search(line)),
                   done.stdout.strip()[-300:] or done.stderr[-300:])
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", summary)) else 0
    failed = int(m.group(1)) if (m := re.search(r"(\d+) failed", summary)) else 0
    return seconds, cpu, passed, failed, summary.strip()


def main(scenarios: Path) -> int:
    print(f"pytest {scenarios} --augment all (reference agent)")
    startup, startup_cpu, _, _, collected = run(scenarios, "--collect-only")
    print(f"start-up + collection (--collect-only): {startup:.1f} s wall, {startup_cpu:.1f} s CPU ({collected})")
    print(f"{'workers':>8} {'seconds':>8} {'items':>6} {'failed':>7} {'ms/item':>8} {'ms/item after start-up':>23}"
          f" {'CPU s':>7} {'CPU ms/item':>12}")
    status = 0
    for workers in (0, 2):
        seconds, cpu, passed, failed, summary = run(scenarios, "-n", str(workers))
        items = passed + failed
        per_item = 1000 * seconds / items if items else float("nan")
        marginal = 1000 * (seconds - startup) / items if items else float("nan")
        cpu_item = 1000 * cpu / items if items else float("nan")
        print(f"{'-n ' + str(workers):>8} {seconds:>8.1f} {items:>6} {failed:>7} {per_item:>8.1f} {marginal:>23.1f}"
              f" {cpu:>7.1f} {cpu_item:>12.1f}")
        if failed or not items:
            print(f"  {summary}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "scenarios"))
