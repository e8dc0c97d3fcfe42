"""Does a pass mean the task was done? The verdict on final answers nobody wrote into the scenarios.

`benchmarks/probe_verdicts.yaml` holds, per probed scenario, two correct final replies (paraphrases a
careful human judge accepts, worded as a strong hosted model replies) and three wrong ones: a shotgun
(the right value among alternatives, or hedged), a near miss (a swap, a neighbouring value, a wrong
unit, sign or country code, a denial of the right answer) and a fluent wrong value. They are written
from the scenarios' goals and worlds, independently of the scenario files' own `accept` / `reject`
examples, so they test the facts as an unseen agent would.

For each answer set (two correct, three wrong) one real pytest run plays every probed
scenario with `--agent benchmarks.probe_agent:SwapFinalReply`, the reference dialogue with its final
text reply swapped, without a baseline gate. The script reads each run's `summary.json` and prints,
per answer set, passed/total, the mismatches (a correct answer that failed, with the missing fact
from the record's verdict; a wrong one that passed), and how many correct answers score a similarity
below 1.0, i.e. would have failed under the old default threshold 1.0.

Usage (from the repository root): `python benchmarks/probe_verdicts.py [--keep DIR]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "probe_verdicts.yaml"
AGENT = "benchmarks.probe_agent:SwapFinalReply"
ANSWER_SETS: tuple[tuple[str, str, int | str], ...] = (
    ("correct 1", "correct", 0), ("correct 2", "correct", 1), ("shotgun", "wrong", "shotgun"),
    ("near miss", "wrong", "near_miss"), ("fluent wrong", "wrong", "fluent"))
WRONG_KINDS = ("shotgun", "near_miss", "fluent")


@dataclass(frozen=True)
class Outcome:
    """One probed reply's result, read from its record in summary.json."""

    path: str
    reply: str
    passed: bool
    score: float
    missing: str | None


def load_probes() -> dict[str, dict[str, Any]]:
    """The probe table: scenario path → {correct: [two replies], wrong: {shotgun, near_miss, fluent}},
    checked for shape."""
    probes = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    for path, entry in probes.items():
        if not (ROOT / path).is_file():
            raise SystemExit(f"{DATA.name}: {path}: no such scenario file")
        wrong = entry.get("wrong")
        if len(entry.get("correct", [])) != 2 or not isinstance(wrong, dict) or sorted(wrong) != sorted(WRONG_KINDS):
            raise SystemExit(f"{DATA.name}: {path}: needs `correct` (two replies) and `wrong` with one reply "
                             f"for each of {', '.join(WRONG_KINDS)}")
    return probes


def run_set(probes: dict[str, dict[str, Any]], kind: str, position: int | str, work: Path,
            label: str) -> list[Outcome]:
    """One pytest run over every probed scenario with this answer set's replies swapped in."""
    replies = {path: entry[kind][position] for path, entry in probes.items()}
    folder = work / label.replace(" ", "_")
    folder.mkdir(parents=True, exist_ok=True)
    table = folder / "replies.json"
    table.write_text(json.dumps(replies, ensure_ascii=False, indent=1), encoding="utf-8")
    report = folder / "report"
    command = [sys.executable, "-m", "pytest", *probes, f"--agent={AGENT}", "--baseline=",
               "-p", "no:cacheprovider", "-p", "no:randomly", "-q", f"--report-dir={report}"]
    environment = {**os.environ, "PROBE_REPLIES": str(table),
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    finished = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, check=False)
    if finished.returncode not in (0, 1):  # 1: some items failed, which is what a probe looks for
        raise SystemExit(f"pytest exited {finished.returncode} on {label}:\n{finished.stdout[-3000:]}"
                         f"{finished.stderr[-3000:]}")
    records = json.loads((report / "summary.json").read_text(encoding="utf-8"))["records"]
    by_path = {record["path"]: record for record in records}
    outcomes = []
    for path in probes:
        record = by_path[path]
        missing = next((milestone["missing"] for milestone in record["verdict"]["milestones"]
                        if not milestone["reached"]), None)
        outcomes.append(Outcome(path, replies[path], record["passed"], record["score"], missing))
    return outcomes


INSUFFICIENT = "scenarios/insufficient_information/"


def report(results: dict[str, list[Outcome]]) -> None:
    """The table: passed/total per answer set (all scenarios, and without the insufficient-information
    ones, whose verdict is no text milestone's), the mismatches, and the old threshold's losses."""
    print(f"{'answer set':13} {'passed':>8} {'of which insufficient_information':>34} {'expected':>9} "
          f"{'similarity < 1.0':>17}")
    for label, kind, _ in ANSWER_SETS:
        outcomes = results[label]
        passed = sum(outcome.passed for outcome in outcomes)
        insufficient = [outcome for outcome in outcomes if outcome.path.startswith(INSUFFICIENT)]
        passed_insufficient = sum(outcome.passed for outcome in insufficient)
        below = sum(outcome.score < 1.0 for outcome in outcomes)
        expected = "all pass" if kind == "correct" else "all fail"
        print(f"{label:13} {passed:>4}/{len(outcomes):<3} {passed_insufficient:>30}/{len(insufficient):<3} "
              f"{expected:>9} {below:>17}")
    correct = [outcome for label, kind, _ in ANSWER_SETS if kind == "correct" for outcome in results[label]]
    print(f"\ncorrect answers with similarity < 1.0 (failed under the old threshold 1.0): "
          f"{sum(outcome.score < 1.0 for outcome in correct)}/{len(correct)}")
    mismatches = [(label, outcome) for label, kind, _ in ANSWER_SETS for outcome in results[label]
                  if outcome.passed != (kind == "correct")]
    print(f"mismatches: {len(mismatches)}")
    for label, outcome in mismatches:
        verdict = "failed" if label.startswith("correct") else "passed"
        print(f"  [{label}] {outcome.path}: {verdict} (similarity {outcome.score:.3f}): {outcome.reply!r}")
        if outcome.missing:
            print(f"      missing: {outcome.missing}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="directory to keep the runs' reply tables and reports in")
    arguments = parser.parse_args()
    probes = load_probes()
    with tempfile.TemporaryDirectory() as scratch:
        work = arguments.keep or Path(scratch)
        results = {label: run_set(probes, kind, position, work, label) for label, kind, position in ANSWER_SETS}
    folders_probed = sorted({path.split("/")[1] for path in probes})
    print(f"{len(probes)} scenarios probed, folders: {', '.join(folders_probed)}\n")
    report(results)


if __name__ == "__main__":
    main()
