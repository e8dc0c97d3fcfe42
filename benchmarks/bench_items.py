"""Per-item wall cost of a whole-suite run and the size of its report directory.

Runs every shipped scenario in every variant (about 1,200 items, reference agent, offline) with
`-n 0` and `-n 2`, plus a one-item run for the fixed start-up cost, and prints per configuration the
wall time, the cost per item ((wall - one-item wall) / (items - 1)), the same for the CPU time of the
pytest processes (user + system: less disturbed by other load on a shared machine; with `-n 2` it is
the sum over both workers and the controller), the report directory's size per item, and whether
both runs wrote byte-identical trajectory files and summaries (timings aside). The agent is named
on the command line (`--agent reference`), so the project's ini default (a replayed model) does not
apply.

The machine's own speed drifts (on the 2-core VM this was tuned on, the same command ran 1.7x slower
a few minutes later), so the whole measurement is repeated (one-item run, then `-n 0`, then `-n 2`,
so drift touches all three alike) and the per-item cost is summarised as the minimum, the least
disturbed estimate, and the median.

Usage: `python benchmarks/bench_items.py [VARIANTS] [REPEATS]` (default `all` and 3; `base` gives ~150
items). To measure another checkout (the "before" figures), run it with `PYTHONPATH=<that checkout>`.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(args: list[str], report: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds and the item count of one run. Runs outside the checkout (`python -m`
    puts its working directory first on sys.path, which would shadow PYTHONPATH); the scenario paths
    keep the checkout as pytest's rootdir."""
    started, cpu = time.perf_counter(), _cpu()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--agent", "reference",
                           "--report-dir", str(report), *args], cwd=report.parent, capture_output=True, text=True,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    elapsed, cpu = time.perf_counter() - started, _cpu() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    return elapsed, cpu, len(summary["records"])


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _digest(report: Path) -> str:
    """Trajectory files plus the summary's records without timings and worker names."""
    digest = hashlib.sha256()
    for path in sorted((report / "trajectories").rglob("*.json")):
        digest.update(str(path.relative_to(report)).encode() + path.read_bytes())
    records = json.loads((report / "summary.json").read_text(encoding="utf-8"))["records"]
    for record in records:
        record.pop("duration", None)
        record.pop("worker", None)
    digest.update(json.dumps(records, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def main(variants: str, repeats: int) -> None:
    one = sorted((ROOT / "scenarios" / "settings").glob("*.yaml"))[0]
    per_item: dict[str, list[float]] = {"0": [], "2": []}
    digests = set()
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(1, repeats + 1):
            base = Path(folder) / f"r{repeat}"
            base.mkdir()
            single, single_cpu, _ = _run([str(one)], base / "single")
            print(f"[{repeat}/{repeats}] one-item run: {single:.2f} s wall, {single_cpu:.2f} s CPU")
            for workers in ("0", "2"):
                report = base / f"n{workers}"
                wall, cpu, items = _run([str(ROOT / "scenarios"), "--augment", variants, "-n", workers], report)
                size = _size(report)
                digest = _digest(report)
                digests.add(digest)
                cost = (wall - single) / (items - 1) * 1e3
                per_item[workers].append(cost)
                print(f"[{repeat}/{repeats}] -n {workers}: {items} items in {wall:.2f} s, {cost:.2f} ms per item "
                      f"({(cpu - single_cpu) / (items - 1) * 1e3:.2f} ms CPU); "
                      f"report {size / 2**20:.1f} MiB, {size / items / 1024:.1f} KiB per item; digest {digest}")
    for workers, costs in per_item.items():
        print(f"per item with -n {workers}: min {min(costs):.2f} ms, median {statistics.median(costs):.2f} ms "
              f"over {len(costs)} repetitions")
    print(f"identical trajectories and records across -n 0 / -n 2 and repetitions: {len(digests) == 1}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "all", int(sys.argv[2]) if len(sys.argv) > 2 else 3)
