"""The second run of the determinism check, in another interpreter.

Two runs in one process share the hash seed and every cache, so they would agree even when a
trajectory depends on `hash()` order or on state left over by an earlier scenario. The validator
therefore starts this module as a child process with a different PYTHONHASHSEED; it plays the same
scenarios in *reverse* order and prints one digest per (file, variant) as JSON. The child runs while
the parent does the rest of the validation, so on two cores it costs little wall time.

Usage (internal): `python -m pytest_toolsandbox.suite.digests PATH… > digests.json`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict

from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario
from pytest_toolsandbox.suite.play import Digest, digest, play_reference
from pytest_toolsandbox.tools.augment import VARIANTS
from pytest_toolsandbox.tools.registry import all_tools


def compute(paths: Sequence[str]) -> dict[str, dict[str, Digest]]:
    """Digest per file and variant; files that do not load are left out (the parent reports them).
    Each episode builds its starting world afresh (the parent forks a cached one)."""
    registry = all_tools()
    out: dict[str, dict[str, Digest]] = {}
    for path in reversed(paths):
        try:
            scenario = load_scenario(path, registry)
        except ScenarioError:
            continue
        out[path] = {variant: digest(play_reference(scenario, registry, variant)) for variant in VARIANTS}
    return out


class DigestRun:
    """The child process, started at once and collected later."""

    def __init__(self, paths: Sequence[str]) -> None:
        env = dict(os.environ)
        env["PYTHONHASHSEED"] = "1" if os.environ.get("PYTHONHASHSEED") == "0" else "0"
        self.process = subprocess.Popen([sys.executable, "-m", "pytest_toolsandbox.suite.digests", *paths],
                                        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def result(self) -> dict[str, dict[str, Digest]]:
        """The child's digests; a failed child is an error for the whole run, with its stderr."""
        out, err = self.process.communicate()
        if self.process.returncode != 0:
            raise RuntimeError(f"the determinism run (second interpreter) failed: {err.strip()[-2000:]}")
        return {path: {variant: Digest(item["sha256"], tuple(item["messages"])) for variant, item in variants.items()}
                for path, variants in json.loads(out).items()}


def main() -> int:
    digests = compute(sys.argv[1:])
    json.dump({path: {variant: asdict(d) for variant, d in variants.items()} for path, variants in digests.items()},
              sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
