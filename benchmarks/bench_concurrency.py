"""How close do concurrent episodes come to the provider's latency bound? Wall time of 200 episodes against a
fake OpenAI-compatible server that answers every request after a fixed delay.

The episodes: the first 25 scenario files under scenarios/ in path order (`--bases`), each in the paper's
eight tool augmentations (`--augment all`), so 200 items, played by `openai:fake` (the fake provider of
tests/fake_provider.py, run as its own process so it does not share pytest's interpreter lock) with the
scripted user, recorded (`--ts-record-mode all`) into a scratch cassette directory. The provider calls
two tools after every user message, then answers in text, and serves up to `--server-limit` requests
at once. Each configuration runs in a fresh pytest process over a copy of the scenarios with an empty
ini file (the repository's own ini would replay the local model's cassettes).

For every concurrency × `-n` it prints the wall time as a user waits for it, split into start-up (launch to
the first model request: imports, collection, xdist workers), the episode phase (the first request's
arrival to the last answer, measured by the server) and the tail (scoring the last items, writing the
report, exiting); the model calls (summary.json usage); the ideal time, calls × delay / (concurrency ×
processes), and the issue's literal ideal, calls × delay / concurrency; wall / ideal and phase / ideal;
the speed-up over concurrency 1 with the same `-n`; the peak number of requests in flight; and the CPU
seconds pytest used (with its workers): when they come near the wall time, the run is bound by the
machine, not by the provider's latency.

    python benchmarks/bench_concurrency.py [--quick] [--delay 0.5] [--concurrency 1 8 32 64] [--workers 0 2]

Concurrency 1 at 200 episodes takes about calls × delay (some 5 minutes at 0.5 s); `--quick` plays the
first 5 bases (40 episodes).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.request import Request, urlopen

ROOT = Path(__file__).resolve().parents[1]
DEV_ONLY_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:anyio", "-p", "no:benchmark")
"""pytest plugins of this project's development dependencies, which a user's install does not have;
hypothesis's alone imports all of hypothesis at the end of every run (over a second of CPU)."""


@dataclass(frozen=True)
class Row:
    """One configuration's figures."""

    concurrency: int
    workers: int
    wall: float
    startup: float
    phase: float
    tail: float
    calls: int
    served: int
    rate_limited: int
    peak: int
    cpu: float
    outcomes: str
    errors: tuple[str, ...]


def _bases(count: int) -> list[Path]:
    return sorted((ROOT / "scenarios").rglob("*.yaml"))[:count]


def _copy_suite(bases: list[Path], scratch: Path) -> None:
    for path in bases:
        target = scratch / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    (scratch / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")


def _start_server(delay: float, limit: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "tests.fake_provider", "--port", "0", "--delay", str(delay),
                                "--max-concurrent", str(limit)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("listening on "):
        process.kill()
        raise SystemExit(f"the fake provider did not start: {line!r}")
    return process, line.removeprefix("listening on ").strip()


def _server(url: str, path: str, method: str = "GET") -> dict[str, Any]:
    with urlopen(Request(url + path, b"" if method == "POST" else None, method=method), timeout=60) as response:
        return json.loads(response.read())


def _compile_plugin() -> None:
    """Write the plugin's bytecode caches, as the first run on a user's machine does: where the
    environment forbids writing them (PYTHONDONTWRITEBYTECODE), every run would compile the plugin's
    modules from source again, a start-up cost no installed package has."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "pytest_toolsandbox")], check=True,
                   stdout=subprocess.DEVNULL)


def _plugin_options(scratch: Path) -> set[str]:
    """Which of the concurrency and rate-limit options this checkout's plugin has."""
    shown = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=scratch, capture_output=True, text=True,
                           check=False).stdout
    return {option for option in ("--concurrency", "--rpm", "--tpm") if option in shown}


def _run(scratch: Path, url: str, concurrency: int, workers: int, options: set[str]) -> Row:
    name = f"c{concurrency}-n{workers}"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *DEV_ONLY_PLUGINS, "scenarios",
               "--agent", "openai:fake", "--model-base-url", url + "/v1", "--user", "scripted", "--augment", "all",
               "--ts-record-mode", "all", "--cassette-dir", f"cassettes-{name}", "--report-dir", f"report-{name}",
               "--llm-retry-delay", "0.1", "-n", str(workers)]
    if "--concurrency" in options:
        command += ["--concurrency", str(concurrency)]
    command += [argument for option in ("--rpm", "--tpm") if option in options for argument in (option, "0")]
    _server(url, "/reset", "POST")
    cpu_before = _children_cpu()
    launched = time.time()
    done = subprocess.run(command, cwd=scratch, capture_output=True, text=True, check=False)
    ended = time.time()
    cpu = _children_cpu() - cpu_before
    summary_path = scratch / f"report-{name}" / "summary.json"
    if not summary_path.exists():
        output = done.stdout[-2000:] + done.stderr[-2000:]
        raise SystemExit(f"{name}: no summary.json (exit {done.returncode}):\n{output}")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    stats = _server(url, "/stats")
    counts = summary["counts"]
    first, last = stats["first_arrival"] or launched, stats["last_answer"] or ended
    return Row(concurrency, workers, ended - launched, first - launched, last - first, ended - last,
               summary["usage"]["tokens"]["agent"]["requests"], stats["served"], stats["rate_limited"],
               stats["peak_in_flight"], cpu,
               f"{counts['passed']}p/{counts['failed']}f/{counts['error']}e of {counts['expected']}",
               tuple(f"{record['id']}: {str(record['error']).splitlines()[0] if record['error'] else ''}"
                     for record in summary["records"] if record["outcome"] == "error"))


def _children_cpu() -> float:
    """CPU seconds (user + system) of finished child processes, xdist workers included."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _print(rows: list[Row], delay: float) -> None:
    header = (f"{'conc':>4} {'-n':>2} {'wall s':>7} {'start':>6} {'phase':>7} {'tail':>6} {'calls':>6} {'peak':>4} "
              f"{'ideal':>7} {'issue':>7} {'wall/id':>7} {'phase/id':>8} {'speedup':>7} {'cpu s':>6}  outcomes")
    print(header)
    serial = {row.workers: row.wall for row in rows if row.concurrency == 1}
    for row in rows:
        processes = max(row.workers, 1)
        ideal = row.calls * delay / (row.concurrency * processes)
        literal = row.calls * delay / row.concurrency
        speedup = f"{serial[row.workers] / row.wall:.1f}x" if row.workers in serial else "-"
        print(f"{row.concurrency:>4} {row.workers:>2} {row.wall:>7.1f} {row.startup:>6.1f} {row.phase:>7.1f} "
              f"{row.tail:>6.1f} {row.calls:>6} {row.peak:>4} {ideal:>7.1f} {literal:>7.1f} "
              f"{row.wall / ideal:>7.2f} {row.phase / ideal:>8.2f} {speedup:>7} {row.cpu:>6.1f}  {row.outcomes}"
              + (f"  [server answered {row.served}, {row.rate_limited} x 429]"
                 if row.served != row.calls or row.rate_limited else ""))
        for error in row.errors:
            print(f"      error: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 bases (40 episodes) instead of 25 (200)")
    parser.add_argument("--bases", type=int, default=25, help="scenario files, × 8 augmentations")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the server holds every answer")
    parser.add_argument("--server-limit", type=int, default=128, help="requests the server serves at once")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2], help="-n values")
    args = parser.parse_args()
    bases = _bases(5 if args.quick else args.bases)
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as name:
        scratch = Path(name)
        _copy_suite(bases, scratch)
        _compile_plugin()
        options = _plugin_options(scratch)
        levels = [level for level in args.concurrency if level == 1 or "--concurrency" in options]
        print(f"{len(bases)} bases × 8 augmentations = {len(bases) * 8} episodes, delay {args.delay:g} s, "
              f"server limit {args.server_limit}; plugin options present: {', '.join(sorted(options)) or 'none'}"
              + ("" if len(levels) == len(args.concurrency) else "; concurrency > 1 skipped (no --concurrency)"))
        print(f"bases: {bases[0].relative_to(ROOT)} … {bases[-1].relative_to(ROOT)}; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        server, url = _start_server(args.delay, args.server_limit)
        rows: list[Row] = []
        try:
            for workers in args.workers:
                for level in levels:
                    rows.append(_run(scratch, url, level, workers, options))
                    print(f"  done: concurrency {level}, -n {workers}: {rows[-1].wall:.1f} s", file=sys.stderr,
                          flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)
        _print(rows, args.delay)


if __name__ == "__main__":
    main()
