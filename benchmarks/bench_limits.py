"""Cost of the worst turns the limits allow: a flood of calls in one turn, and a batch of conflicting
parallel calls at the per-turn cap (the race check's worst case). Prints seconds and peak memory.

Usage: `python benchmarks/bench_limits.py`. Figures, and what the same turns cost without the limits:
benchmarks/README.md.
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ScriptedUser
from pytest_toolsandbox.running.episode import MAX_CALLS_PER_TURN, run_episode
from pytest_toolsandbox.scenario.loader import load_scenario
from pytest_toolsandbox.world.messages import ToolCall

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios/messaging/send_message_cellular_off.yaml"


class Batch:
    """One turn of `count` calls that all conflict (each toggles wifi), then a text reply."""

    name = "batch"

    def __init__(self, count: int) -> None:
        self.count, self.done = count, False

    def respond(self, messages, tools) -> Turn:
        if self.done:
            return Turn(text="Done.")
        self.done = True
        return Turn(tool_calls=tuple(ToolCall(id=f"c{k}", name="set_wifi_status",
                                              arguments='{"on": %s}' % ("true" if k % 2 else "false"))
                                     for k in range(self.count)))


def measure(count: int) -> None:
    scenario = load_scenario(SCENARIO)
    tracemalloc.start()
    started = time.perf_counter()
    trajectory = run_episode(scenario, Batch(count), ScriptedUser(scenario), max_messages=1000)
    played = time.perf_counter()
    evaluate(scenario, trajectory)
    scored = time.perf_counter()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{count:>6} calls in one turn: play {played - started:6.2f} s (incl. race check), "
          f"score {scored - played:6.2f} s, peak {peak / 2**20:7.1f} MiB, {len(trajectory.messages)} messages")


if __name__ == "__main__":
    for count in (MAX_CALLS_PER_TURN, 160, 10_000):
        measure(count)
