"""A 4-shard CI matrix simulated on one machine: shards merged equal the single run, and how long the
slowest shard takes next to the single run.

The shipped scenarios in every augmentation variant (`--augment all`) with the reference and the
unhelpful agents run once in a single pytest process, then as N shards (`--ts-shard i/N`), the N
processes started at once as a CI matrix would start its jobs; `python -m pytest_toolsandbox merge`
joins the shards' report directories. The script checks that the merged summary has the single run's
records (apart from timings and worker ids), aggregates, usage and counts, and the same trajectory
files, and prints the wall-clock times. On one machine the shards share its cores, so the figures show
a matrix's speed-up only when the machine has a core per shard.

    python benchmarks/bench_shards.py [--shards 4] [--scenarios scenarios]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VOLATILE_RECORD_KEYS = ("duration", "worker")


def pytest_command(scenarios: str, report_dir: Path, *extra: str) -> list[str]:
    # the project's ini gates its default agent against a baseline: not wanted for these two agents
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
            str(ROOT / scenarios), "--rootdir", str(ROOT), "-o", "toolsandbox_baseline=",
            "--agent", "reference", "--agent", "unhelpful", "--augment", "all", "--progress", "off",
            "--report-dir", str(report_dir), *extra]


def last_line(done: subprocess.CompletedProcess[str] | tuple[str, str]) -> str:
    stdout, stderr = (done.stdout, done.stderr) if isinstance(done, subprocess.CompletedProcess) else done
    lines = stdout.strip().splitlines()
    return lines[-1] if lines else stderr[-300:]


def stable(summary: dict[str, Any]) -> dict[str, Any]:
    records = [{key: value for key, value in record.items() if key not in VOLATILE_RECORD_KEYS}
               for record in summary["records"]]
    return {"records": records, "aggregates": summary["aggregates"], "usage": summary["usage"],
            "counts": summary["counts"], "partial": summary["partial"]}


def trajectory_files(report_dir: Path) -> dict[str, bytes]:
    folder = report_dir / "trajectories"
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*.json"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=4, help="jobs of the simulated matrix (default: 4)")
    parser.add_argument("--scenarios", default="scenarios", help="scenario folder, relative to the repository")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        started = time.perf_counter()
        single = subprocess.run(pytest_command(args.scenarios, work / "single"), capture_output=True, text=True,
                                cwd=work, check=False)
        single_seconds = time.perf_counter() - started
        print(f"single run: {single_seconds:.1f} s  ({last_line(single)})", flush=True)

        started = time.perf_counter()
        jobs = [subprocess.Popen(pytest_command(args.scenarios, work / f"shard-{index}", "--ts-shard",
                                                f"{index}/{args.shards}"),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=work)
                for index in range(1, args.shards + 1)]
        shard_seconds = []
        for index, job in enumerate(jobs, 1):
            output = job.communicate()
            shard_seconds.append(time.perf_counter() - started)
            print(f"shard {index}/{args.shards}: finished after {shard_seconds[-1]:.1f} s  ({last_line(output)})",
                  flush=True)
        started = time.perf_counter()
        merged = subprocess.run([sys.executable, "-m", "pytest_toolsandbox", "merge",
                                 *(str(work / f"shard-{index}") for index in range(1, args.shards + 1)),
                                 "--out", str(work / "merged"), "--root", str(ROOT)],
                                capture_output=True, text=True, cwd=work, check=False)
        merge_seconds = time.perf_counter() - started
        print(f"merge: {merge_seconds:.1f} s  ({last_line(merged)})")
        if merged.returncode != 0:
            print(merged.stderr, file=sys.stderr)
            return 1

        single_summary = json.loads((work / "single" / "summary.json").read_text(encoding="utf-8"))
        merged_summary = json.loads((work / "merged" / "summary.json").read_text(encoding="utf-8"))
        same_results = stable(merged_summary) == stable(single_summary)
        same_files = trajectory_files(work / "merged") == trajectory_files(work / "single")
        sizes = [len(json.loads((work / f"shard-{index}" / "summary.json").read_text())["records"])
                 for index in range(1, args.shards + 1)]
        print(f"items: {len(single_summary['records'])} in the single run; per shard {sizes}")
        print(f"merged == single (records apart from timings and workers, aggregates, usage, counts): {same_results}")
        print(f"trajectory files identical: {same_files}")
        print(f"wall time: single run {single_seconds:.1f} s; slowest shard {max(shard_seconds):.1f} s "
              f"({args.shards} shards at once on this machine's cores); merge {merge_seconds:.1f} s")
        return 0 if same_results and same_files else 1


if __name__ == "__main__":
    sys.exit(main())
