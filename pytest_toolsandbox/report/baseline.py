"""CI gating against an earlier summary.json.

A task (scenario × variant) passed in the baseline when every finished baseline record of it
passed; one failing trial or an infrastructure error makes it a known failure. Known failures run
as expected failures, so only regressions (passed then, fail now) fail the run; a known failure
that passes now is an improvement. Tasks the baseline has not seen are new and gate normally.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_toolsandbox.report.record import SCORED_OUTCOMES, Record
from pytest_toolsandbox.report.summary import load_summary, task_key


@dataclass(frozen=True)
class Baseline:
    path: str
    passed: dict[str, bool]

    def status(self, scenario_path: str, variant: str) -> bool | None:
        """True: passed in the baseline; False: known failure; None: not in the baseline."""
        return self.passed.get(task_key({"path": scenario_path, "variant": variant}))


def baseline_from_records(path: str, records: list[Record]) -> Baseline:
    passed: dict[str, bool] = {}
    for record in records:
        if record.get("outcome") not in {*SCORED_OUTCOMES, "error"}:
            continue
        key = task_key(record)
        passed[key] = passed.get(key, True) and record["outcome"] != "error" and bool(record.get("passed"))
    return Baseline(path=path, passed=passed)


def load_baseline(path: str | Path) -> Baseline:
    """Read the baseline summary (raises SummaryError naming the file)."""
    return baseline_from_records(str(path), load_summary(path)["records"])


def classify(baseline_passed: bool | None, outcome: str) -> str | None:
    """regression, improvement, known_failure, unchanged or new; None for errors and skips."""
    if outcome not in SCORED_OUTCOMES:
        return None
    if baseline_passed is None:
        return "new"
    passes_now = outcome in ("passed", "xpassed")
    if baseline_passed:
        return "unchanged" if passes_now else "regression"
    return "improvement" if passes_now else "known_failure"
