"""One summary record per test item, as plain JSON-ready data.

Records travel from xdist workers to the controller on the test report, so they hold only
str/int/float/bool/None/list/dict. The controller adds `duration`, `worker`, `trajectory` and `page`.
"""

from __future__ import annotations

from typing import Any

from pytest_toolsandbox.evaluation.result import Evaluation, EventOutcome
from pytest_toolsandbox.report.text.expected import Expectation
from pytest_toolsandbox.world.trajectory import Trajectory

Record = dict[str, Any]

# Outcomes that carry a score; errors (infrastructure) and skips are counted apart.
SCORED_OUTCOMES = frozenset({"passed", "failed", "xfailed", "xpassed"})


def agent_key(record: Record) -> str:
    """The agent a record belongs to: its `--agent` spec (two specs may build agents of the same name)."""
    return record.get("agent_spec") or record["agent"]


def item_outcome(when: str, outcome: str, xfail: bool) -> str | None:
    """The record outcome of a phase report; None when a later phase decides (setup passed)."""
    if when == "setup":
        if outcome == "passed":
            return None
        if outcome == "skipped":
            return "xfailed" if xfail else "skipped"
        return "error"
    if when == "call":
        if xfail:
            return "xpassed" if outcome == "passed" else "xfailed"
        return outcome
    return "error" if outcome == "failed" else None


def _event(outcome: EventOutcome, expectation: Expectation | None) -> Record:
    event = outcome.model_dump(mode="json")
    if expectation is not None:
        event["expected"] = expectation.targets
        event["guarded"] = expectation.guardrail_text() if expectation.guarded else None
        event["guardrail_hit"] = expectation.blocked_at
    return event


def evaluation_fields(evaluation: Evaluation, threshold: float | None,
                      expected: dict[str, dict[str, Expectation]] | None = None) -> Record:
    """The scoring part of a record: score, pass, milestone/minefield mapping (with each event's
    expected targets when `expected` = {"milestones": …, "minefields": …} is given), diagnosis, and
    the verdict per milestone (reached, where, what was missing). `passed` follows the verdict, or
    score ≥ `threshold` when a threshold was set."""
    expected = expected or {}
    milestones, minefields = expected.get("milestones", {}), expected.get("minefields", {})
    return {
        "score": evaluation.score,
        "passed": evaluation.passed(threshold),
        "milestone_similarity": evaluation.milestone_similarity,
        "minefield_similarity": evaluation.minefield_similarity,
        "milestones": [_event(outcome, milestones.get(outcome.name)) for outcome in evaluation.milestones],
        "minefields": [_event(outcome, minefields.get(outcome.name)) for outcome in evaluation.minefields],
        "turn_count": evaluation.turn_count,
        "diagnosis": [finding.model_dump(mode="json") for finding in evaluation.diagnosis],
        "ground_truth": evaluation.ground_truth.model_dump(mode="json") if evaluation.ground_truth else None,
        "verdict": evaluation.verdict.model_dump(mode="json") if evaluation.verdict else None,
    }


def empty_evaluation_fields() -> Record:
    """The scoring part of a record for an item that was never scored (error, skip)."""
    return {"score": None, "passed": None, "milestone_similarity": None, "minefield_similarity": None,
            "milestones": [], "minefields": [], "turn_count": None, "diagnosis": [], "ground_truth": None,
            "verdict": None}


def trajectory_fields(trajectory: Trajectory | None) -> Record:
    """Who played and how the episode ended, taken from the trajectory when there is one."""
    if trajectory is None:
        return {"ended_by": None}
    return {"agent": trajectory.agent, "user": trajectory.user, "ended_by": trajectory.ended_by}
