"""Our scorer and the reference implementation's, on the same dialogues of the imported benchmark.

For every imported scenario (`import-toolsandbox` output) two dialogues are played in our engine: the
synthesised witness, and the witness with one step removed (the middle one; a one-step witness has its
answer replaced by a refusal). Each trajectory is scored by our `evaluate` and, in the reference
package's own interpreter, by its `Evaluation.evaluate` (`toolsandbox_reference_scores.py`). Prints the
agreement and every disagreement.

    python benchmarks/bench_toolsandbox_agreement.py --python /path/to/reference/venv/bin/python \
        [--scenarios scenarios/toolsandbox] [--tolerance 1e-6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario
from pytest_toolsandbox.scenario.reference import ReferenceStep
from pytest_toolsandbox.suite.play import play_reference
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world.clock import DEFAULT_NOW, DEFAULT_TIMEZONE

SCORER = Path(__file__).with_name("toolsandbox_reference_scores.py")
REFUSAL = "I'm sorry, I can't help with that."


def perturbed(steps: list[ReferenceStep]) -> list[ReferenceStep]:
    """The witness one step removed (or, with one step, its answer replaced by a refusal)."""
    if len(steps) <= 1:
        return [ReferenceStep(agent=REFUSAL)]
    middle = (len(steps) - 1) // 2
    return [*steps[:middle], *steps[middle + 1:]]


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
        for kind, steps in (("witness", scenario.reference), ("perturbed", perturbed(list(scenario.reference)))):
            trajectory = play_reference(scenario, registry, variant, reference=steps)
            case_id = f"{scenario.name}:{kind}"
            ours[case_id] = evaluate(scenario, trajectory, registry).score
            data = json.loads(trajectory.to_json())
            cases.append({"id": case_id, "scenario": scenario.name, "messages": data["messages"],
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
    perfect = sum(1 for case in ours if case.endswith(":witness") and ours[case] >= 1.0)
    print(f"{len(ours) - len(differing)}/{len(ours)} dialogues agree within {args.tolerance:g} "
          f"({len(ours) // 2} scenarios, witness + one perturbation each; witness 1.0 in ours: {perfect}; "
          f"perturbed below 1.0 in ours: {sum(1 for c in ours if c.endswith(':perturbed') and ours[c] < 1.0)}); "
          f"played in {played:.0f} s")
    return 0 if not differing else 1


if __name__ == "__main__":
    sys.exit(main())
