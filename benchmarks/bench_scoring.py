"""Scoring a long conversation: n agent/user messages against m `agent_says` milestones.

Every agent message is compared with every milestone text by ROUGE-L, so scoring does n x m ROUGE
computations. Prints the time of `evaluate` (this code), the time of the same n x m similarities
through rouge-score's own scorer (the implementation used before), and whether the two agree on
every similarity. Usage: `python benchmarks/bench_scoring.py [N] [M] [ROUNDS]` (default 200 12 5).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml
from rouge_score import rouge_scorer

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.rouge import rouge_l, token_ids
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import load_scenario
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world.trajectory import Trajectory

WORDS = tuple(" ".join([
    "the reminder for buying chocolate milk is set for tomorrow at five in the afternoon I sent your message",
    "to Homer Simpson his phone number is running low battery mode was turned off weather in Cupertino",
    "sunny twenty degrees converted dollars euros"]).split(" "))


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 24))).capitalize() + "."


def _scenario(m: int, rng: random.Random, folder: Path):
    says = [_sentence(rng) for _ in range(m)]
    document = {
        "description": "Scoring benchmark", "categories": ["single_tool_call"],
        "user": {"goal": "Chat.", "knowledge": "Nothing.", "first_message": "Hello."},
        "tools": ["get_current_timestamp"],
        "milestones": {f"m{i}": {"agent_says": text} for i, text in enumerate(says)},
        "reference": [{"agent": text} for text in says],
    }
    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return load_scenario(path)


def _long_trajectory(scenario, n: int, rng: random.Random) -> Trajectory:
    """The reference episode with its conversation replaced by n alternating user/agent texts."""
    played = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario), registry=all_tools())
    data = played.model_dump(mode="json")
    system = [message for message in data["messages"] if message["sender"] == "system"]
    talk = [{"index": 0, "sender": sender, "recipient": recipient, "content": _sentence(rng)}
            for i in range(n) for sender, recipient in [("user", "agent") if i % 2 == 0 else ("agent", "user")]]
    messages = [*system, *talk]
    for index, message in enumerate(messages):
        message["index"] = index
    data["messages"] = messages
    data["snapshots"] = {table: snaps[:1] for table, snaps in data["snapshots"].items()}
    return Trajectory.model_validate(data)


def _old_similarities(texts: list[str], targets: list[str]) -> list[float]:
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return [scorer.score(target=t, prediction=p)["rougeL"].fmeasure for t in targets for p in texts]


def _timed(work, rounds: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(rounds):
        token_ids.cache_clear()  # every round starts cold, like a fresh trajectory
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main(n: int, m: int, rounds: int) -> None:
    rng = random.Random(14)
    with tempfile.TemporaryDirectory() as folder:
        scenario = _scenario(m, rng, Path(folder))
        trajectory = _long_trajectory(scenario, n, rng)
        registry = all_tools()
        evaluate(scenario, trajectory, registry)  # warm imports and data files
        texts = [message.content for message in trajectory.messages if message.sender == "agent"]
        targets = [milestone.agent_says for milestone in scenario.milestones.values()]
        after_eval, _ = _timed(lambda: evaluate(scenario, trajectory, registry), rounds)
        after_sims, new = _timed(lambda: [rouge_l(t, p) for t in targets for p in texts], rounds)
        before_sims, old = _timed(lambda: _old_similarities(texts, targets), rounds)
    print(f"n={n} messages ({len(texts)} agent) x m={m} milestones, median of {rounds}")
    print(f"  evaluate() now:                          {after_eval * 1e3:8.1f} ms")
    print(f"  {len(new)} similarities, before (rouge-score): {before_sims * 1e3:8.1f} ms")
    print(f"  {len(new)} similarities, after (token cache):  {after_sims * 1e3:8.1f} ms "
          f"({before_sims / after_sims:.0f}x faster)")
    print(f"  identical similarities: {new == old}")


if __name__ == "__main__":
    arguments = [int(value) for value in sys.argv[1:]]
    main(*(arguments + [200, 12, 5][len(arguments):]))
