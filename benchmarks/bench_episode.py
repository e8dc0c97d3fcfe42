"""Throughput and memory of the engine: play and score every shipped scenario in every variant.

Prints, per stage, episodes per second and the peak memory traced by tracemalloc, so changes to the
world, tools or scoring can be compared run to run. Usage: `python benchmarks/bench_episode.py [ROUNDS]`.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario
from pytest_toolsandbox.tools.augment import VARIANTS
from pytest_toolsandbox.tools.registry import all_tools

ROOT = Path(__file__).resolve().parents[1]


def _play(cases: list, registry: dict) -> list:
    return [(scenario, run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario), variant=variant,
                                   registry=registry)) for scenario, variant in cases]


def _score(trajectories: list, registry: dict) -> list[float]:
    return [evaluate(scenario, trajectory, registry).score for scenario, trajectory in trajectories]


def _peak_mib(work) -> tuple[object, float]:
    """Run `work()` under tracemalloc (slow, so never timed) and return its result and peak MiB."""
    tracemalloc.start()
    result = work()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, peak / 2**20


def main(rounds: int) -> None:
    registry = all_tools()
    scenarios = [load_scenario(path) for path in find_scenarios(ROOT / "scenarios")]
    cases = [(scenario, variant) for scenario in scenarios for variant in VARIANTS] * rounds
    _score(_play(cases[:1], registry), registry)  # warm caches (pint, ROUGE, data files)

    started = time.perf_counter()
    trajectories = _play(cases, registry)
    played = time.perf_counter() - started
    started = time.perf_counter()
    scores = _score(trajectories, registry)
    scored = time.perf_counter() - started
    one_round = cases[:len(cases) // rounds]
    played_once, peak_play = _peak_mib(lambda: _play(one_round, registry))
    _, peak_score = _peak_mib(lambda: _score(played_once, registry))

    count = len(trajectories)
    print(f"{len(scenarios)} scenarios × {len(VARIANTS)} variants × {rounds} rounds = {count} episodes")
    print(f"{'stage':<8} {'seconds':>8} {'episodes/s':>11} {'ms/episode':>11} {'peak MiB (1 round)':>19}")
    for stage, seconds, peak in (("play", played, peak_play), ("score", scored, peak_score)):
        print(f"{stage:<8} {seconds:>8.2f} {count / seconds:>11.1f} {1000 * seconds / count:>11.2f} {peak:>19.1f}")
    print(f"mean score {sum(scores) / count:.4f} (the reference dialogues should all score 1.0)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
