"""Our scorer and the reference implementation's, on the same dialogues of the imported benchmark.

For every imported scenario (`import-toolsandbox` output) these dialogues are played in our engine under
the reference's rules (`--rules reference`): the synthesised witness; the witness with one step removed
(the middle one; a one-step witness has its answer replaced by a refusal); the witness opened by a call
to a tool that does not exist; and, where a milestone allows a tolerance on a call's number, the witness
with each such argument moved by half its tolerance. Each trajectory is scored by our `evaluate` and, in
the reference package's own interpreter, by its `Evaluation.evaluate` or as its runner scores a crash
(`toolsandbox_reference_scores.py`). Prints the agreement and every disagreement.

    python benchmarks/bench_toolsandbox_agreement.py --python /path/to/reference/venv/bin/python \
        [--scenarios scenarios/toolsandbox] [--tolerance 1e-6]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.rules import REFERENCE
from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.reference import ReferenceCall, ReferenceStep
from pytest_toolsandbox.suite.play import play_reference
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world.clock import DEFAULT_NOW, DEFAULT_TIMEZONE

SCORER = Path(__file__).with_name("toolsandbox_reference_scores.py")
REFUSAL = "I'm sorry, I can't help with that."


UNKNOWN_TOOL = ReferenceCall(tool="lookup_everything", arguments={})
"""A tool no scenario offers: the reference's agent raises on it."""


def removed(steps: list[ReferenceStep]) -> list[ReferenceStep]:
    """The witness one step removed (or, with one step, its answer replaced by a refusal)."""
    if len(steps) <= 1:
        return [ReferenceStep(agent=REFUSAL)]
    middle = (len(steps) - 1) // 2
    return [*steps[:middle], *steps[middle + 1:]]


def tolerances(scenario: Scenario) -> dict[tuple[str, str], float]:
    """(tool, argument) → the finite tolerance a milestone allows on it."""
    found = {}
    for milestone in scenario.milestones.values():
        targets = milestone.tool_call if isinstance(milestone.tool_call, list) else [milestone.tool_call or {}]
        for target in targets:
            finite = {name: value for name, value in milestone.tolerance.items() if math.isfinite(value)}
            found.update({(tool, name): value for tool in target for name, value in finite.items()})
    return found


def shifted(steps: list[ReferenceStep], allowed: dict[tuple[str, str], float]) -> list[ReferenceStep] | None:
    """The witness with every number a tolerance covers moved by half its tolerance (None: nothing to move)."""
    def move(call: ReferenceCall) -> ReferenceCall:
        return call.model_copy(update={"arguments": {
            name: value + allowed[(call.tool, name)] / 2 if (call.tool, name) in allowed and _number(value) else value
            for name, value in call.arguments.items()}})

    moved = [step.model_copy(update={"calls": tuple(move(call) for call in step.calls)}) for step in steps]
    return moved if moved != steps else None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def dialogues(scenario: Scenario) -> dict[str, list[ReferenceStep]]:
    steps = list(scenario.reference)
    kinds = {"witness": steps, "removed": removed(steps),
             "unknown_tool": [ReferenceStep(calls=(UNKNOWN_TOOL,)), *steps]}
    moved = shifted(steps, tolerances(scenario))
    if moved is not None:
        kinds["shifted"] = moved
    return kinds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="interpreter with tool_sandbox installed")
    parser.add_argument("--scenarios", default="scenarios/toolsandbox")
    parser.add_argument("--tolerance", type=float, default=1e-6)
    args = parser.parse_args()
    registry = all_tools()
    cases, ours = [], {}
    started = time.perf_counter()
    for path in find_scenarios(args.scenarios):
        scenario = load_scenario(path, registry)
        variant = (scenario.solvable_in or ["base"])[0]
        for kind, steps in dialogues(scenario).items():
            trajectory = play_reference(scenario, registry, variant, reference=steps, rules=REFERENCE)
            case_id = f"{scenario.name}:{kind}"
            ours[case_id] = evaluate(scenario, trajectory, registry, rules=REFERENCE).score
            data = json.loads(trajectory.to_json())
            item = scenario.name + ("" if variant == "base" else f"_{variant}")  # the reference's item name
            cases.append({"id": case_id, "scenario": item, "messages": data["messages"],
                          "snapshots": data["snapshots"]})
    played = time.perf_counter() - started
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    environment.update(TZ=DEFAULT_TIMEZONE, TOOLSANDBOX_NOW=DEFAULT_NOW)
    completed = subprocess.run([args.python, "-I", str(SCORER)], input=json.dumps(cases), capture_output=True,
                               text=True, env=environment, check=False)
    if completed.returncode != 0:
        print(completed.stderr[-3000:], file=sys.stderr)
        return 2
    theirs = json.loads(completed.stdout.strip().splitlines()[-1])
    differing = {case: (ours[case], theirs[case]) for case in ours if abs(ours[case] - theirs[case]) > args.tolerance}
    for case, (mine, reference) in sorted(differing.items()):
        print(f"  {case}: ours {mine:.6f}, reference {reference:.6f}")
    for kind in ("witness", "removed", "unknown_tool", "shifted"):
        mine = [case for case in ours if case.endswith(f":{kind}")]
        agreeing = sum(case not in differing for case in mine)
        print(f"  {kind}: {agreeing}/{len(mine)} agree; scores in ours: 1.0 in {sum(ours[c] >= 1.0 for c in mine)}, "
              f"0 in {sum(ours[c] == 0.0 for c in mine)}")
    print(f"{len(ours) - len(differing)}/{len(ours)} dialogues agree within {args.tolerance:g} "
          f"({len({case.split(':')[0] for case in ours})} scenarios, reference rules); played in {played:.0f} s")
    return 0 if not differing else 1


if __name__ == "__main__":
    sys.exit(main())
