"""Do our own rate limits slow a hosted run below what the provider allows? Wall time of 20 items at 1 s
server latency and `--concurrency 8` against the fake provider of tests/fake_provider.py, listening on
127.0.0.2 (an address the plugin does not count as a local server, so its default limits of 60
requests and 100,000 tokens per minute apply as to a hosted API).

Four runs, each a fresh pytest process over a copy of the first 20 scenario files under scenarios/ with
the scripted user, recording into a scratch cassette directory:

- limiter off (`--rpm 0 --tpm 0`), the server announcing nothing: the latency bound;
- our defaults, the server announcing nothing: how much the defaults cost;
- our defaults, the server announcing generous limits (10,000 requests and 10,000,000 tokens per minute)
  in OpenAI's `x-ratelimit-*` headers: the limiter should take them and run as fast as when off;
- our defaults, the server announcing and enforcing tight limits (`--tight-rpm`, default 40 requests
  per minute, as a bucket of one minute that refills continuously): the run should be paced to them
  with no 429.

For each it prints the wall time, the requests the server answered, the 429s it sent, and the lines in
which the terminal names the limit the run waited for.

    python benchmarks/bench_rate_limits.py [--delay 1.0] [--items 20] [--concurrency 8] [--tight-rpm 40]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_provider import Behaviour, FakeProvider  # noqa: E402

GENEROUS = (10_000.0, 10_000_000.0)


def scenarios(count: int, into: Path) -> Path:
    """A copy of the first `count` scenario files, with an empty ini (the repository's replays its cassettes)."""
    for source in sorted((ROOT / "scenarios").rglob("*.yaml"))[:count]:
        target = into / "scenarios" / source.relative_to(ROOT / "scenarios")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    (into / "pytest.ini").write_text("[pytest]\n")
    return into


def measure(label: str, behaviour: Behaviour, project: Path, concurrency: int, *extra: str) -> None:
    environ = {key: value for key, value in os.environ.items() if key not in ("CI", "OPENAI_API_KEY")}
    with FakeProvider(behaviour, host="127.0.0.2") as server:
        cassettes = tempfile.mkdtemp(prefix="bench-cassettes-")
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "scenarios", "-q", "-p", "no:cacheprovider", "--agent", "openai:fake",
             "--model-base-url", server.url + "/v1", "--concurrency", str(concurrency), "--cassette-dir", cassettes,
             "--ts-record-mode", "all", "--llm-retry-delay", "0.5", *extra],
            cwd=project, env=environ, capture_output=True, text=True)
        wall = time.perf_counter() - started
        stats = server.stats()
        shutil.rmtree(cassettes, ignore_errors=True)
    waits = [line.strip() for line in result.stdout.splitlines() if line.startswith("rate limit:")]
    print(f"{label:<44} wall {wall:6.1f} s   exit {result.returncode}   answered {stats.served:4}   "
          f"429s {stats.rate_limited:3}")
    for line in waits:
        print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=1.0, help="seconds before each answer")
    parser.add_argument("--items", type=int, default=20, help="scenario files played (one item each)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--tight-rpm", type=float, default=40.0, help="requests per minute of the tight server")
    args = parser.parse_args()
    project = scenarios(args.items, Path(tempfile.mkdtemp(prefix="bench-rate-limits-")))
    try:
        quiet = Behaviour(delay=args.delay)
        measure("limiter off, no headers", quiet, project, args.concurrency, "--rpm", "0", "--tpm", "0")
        measure("our defaults, no headers", quiet, project, args.concurrency)
        rpm, tpm = GENEROUS
        measure(f"our defaults, server announces {rpm:g} rpm", Behaviour(delay=args.delay, rpm=rpm, tpm=tpm),
                project, args.concurrency)
        measure(f"our defaults, server enforces {args.tight_rpm:g} rpm", Behaviour(delay=args.delay,
                rpm=args.tight_rpm, tpm=tpm), project, args.concurrency)
    finally:
        shutil.rmtree(project, ignore_errors=True)


if __name__ == "__main__":
    main()
