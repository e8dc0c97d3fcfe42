"""How many items each degenerate agent passes: the counts behind tests/test_degenerate_*.py.

Every agent of tests/degenerate_agents.py (silent, claims success, invents an answer, the built-in
unhelpful, shotgun, echo) and the one that declines and names what is missing plays every base of a
suite against the scripted user — the base variant, and the insufficient-information bases in all 8
variants — judged by the real verdict. Prints, per agent, the items passed among the other bases and
among the insufficient-information items (base variant, then all variants), and every item a
degenerate agent passes. Only the declining agent may pass, and only insufficient-information items.

Usage (from the repository root): `python benchmarks/probe_degenerate_agents.py [--scenarios DIR]`
(default: the shipped `scenarios/`; give the folder of `import-toolsandbox` for the reference suite).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.degenerate_agents holds the agents

from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario  # noqa: E402
from tests.degenerate_agents import DEGENERATE, INSUFFICIENT, outcomes  # noqa: E402

DECLINES = "declines-and-explains"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=Path, default=ROOT / "scenarios", help="the suite to play")
    folder = parser.parse_args().scenarios.resolve()
    if not folder.is_dir():
        raise SystemExit(f"--scenarios {folder}: no such folder")
    declined = {path.relative_to(folder).as_posix() for path in find_scenarios(folder)
                if INSUFFICIENT in load_scenario(path).categories}
    print(f"{'agent':22} {'other bases':>14} {'insufficient (base)':>20} {'insufficient (all variants)':>28}")
    for agent in [*sorted(DEGENERATE), DECLINES]:
        passed = outcomes(agent, folder)
        other = [ok for (name, _), ok in passed.items() if name not in declined]
        base = [ok for (name, variant), ok in passed.items() if name in declined and variant == "base"]
        every = [ok for (name, _), ok in passed.items() if name in declined]
        counts = [f"{sum(oks)}/{len(oks)}" for oks in (other, base, every)]
        print(f"{agent:22} {counts[0]:>14} {counts[1]:>20} {counts[2]:>28}")
        wrongly = sorted(key for key, ok in passed.items() if ok and (agent != DECLINES or key[0] not in declined))
        missed = sorted(key for key, ok in passed.items() if not ok and agent == DECLINES and key[0] in declined)
        for name, variant in wrongly:
            print(f"    passes {name} [{variant}]")
        for name, variant in missed:
            print(f"    fails {name} [{variant}]")


if __name__ == "__main__":
    main()
