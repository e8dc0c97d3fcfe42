"""When does `pytest -n N` pay off? Wall-clock time of the shipped scenarios with and without xdist.

Two agents: the offline reference agent (no latency: the work is a few milliseconds per item) and
the same agent behind a simulated model latency (LATENCY seconds per agent turn, as a remote model
would take). Each configuration runs in a fresh pytest process; the figures include start-up,
collection, the run and the report, as a user would wait for them.

    python benchmarks/bench_xdist.py [--latency 0.3] [--workers 0 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SLOW_AGENT = '''
import os
import time

from pytest_toolsandbox.roles.scripted import ReferenceAgent


class SlowAgent:
    """The reference agent behind a fixed latency per turn, standing in for a remote model."""

    name = "slow-reference"

    def __init__(self, scenario):
        self.inner = ReferenceAgent(scenario)
        self.latency = float(os.environ["BENCH_LATENCY"])

    def respond(self, messages, tools):
        time.sleep(self.latency)
        return self.inner.respond(messages, tools)
'''


def _run(agent: str, workers: int, latency: float, helper_dir: Path) -> tuple[float, str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "scenarios"),
               "--rootdir", str(ROOT), "--agent", agent, "--augment", "all",
               "--report-dir", str(helper_dir / f"report-{agent.replace(':', '_')}-{workers}")]
    if workers:
        command += ["-n", str(workers)]
    env = {**os.environ, "BENCH_LATENCY": str(latency),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(helper_dir), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=helper_dir, check=False)
    elapsed = time.perf_counter() - started
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    return elapsed, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per agent turn of the slow agent")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2], help="-n values to compare")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        helper_dir = Path(scratch)
        (helper_dir / "bench_slow_agent.py").write_text(SLOW_AGENT, encoding="utf-8")
        print(f"{'agent':<34} {'-n':>3} {'seconds':>8}  result")
        for agent in ("reference", "bench_slow_agent:SlowAgent"):
            for workers in args.workers:
                elapsed, result = _run(agent, workers, args.latency, helper_dir)
                label = agent if agent == "reference" else f"reference + {args.latency:g} s/turn"
                print(f"{label:<34} {workers:>3} {elapsed:>8.1f}  {result}")


if __name__ == "__main__":
    main()
