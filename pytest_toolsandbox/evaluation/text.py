"""An Evaluation as terminal text: score, verdict, mapping, minefields, turn count, diagnosis, ground truth."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_toolsandbox.evaluation.result import Evaluation, EventOutcome, Finding, GroundTruthMetrics
from pytest_toolsandbox.world.trajectory import Trajectory


def _events(title: str, outcomes: Sequence[EventOutcome]) -> list[str]:
    if not outcomes:
        return [f"{title}: none"]
    width = max(len(outcome.name) for outcome in outcomes)
    lines = [f"{title}:"]
    for outcome in outcomes:
        where = f"[{outcome.index:>3}]" if outcome.index is not None else "[  -]"
        parts = "  ".join(f"{label}={value:.6g}" for label, value in outcome.constraints.items())
        line = f"  {outcome.name:<{width}} → message {where}  similarity {outcome.similarity:.6f}  {parts}"
        if outcome.order is not None:
            line += f"  (out of order: {outcome.order.describe()})"
        lines.append(line.rstrip())
    return lines


def _verdict(evaluation: Evaluation) -> list[str]:
    """`verdict passed`, or `verdict failed` with one line per milestone not reached / minefield fired
    (what decides the item unless its scenario sets a threshold)."""
    verdict = evaluation.verdict
    if verdict is None:
        return []
    return [f"verdict {'passed' if verdict.passed else 'failed'}", *(f"  {reason}" for reason in verdict.reasons())]


def ratio(value: float, denominator: int) -> str:
    """A rate as two decimals, or "n/a" when nothing was counted (0 of 0 is no evidence of 1.00)."""
    return f"{value:.2f}" if denominator else "n/a"


def per_call(finding: Finding, calls: int | None) -> str:
    """How often a diagnosis code occurred per agent call; "n/a" when the agent made no call."""
    return f"{finding.per_call:.2f} per call" if calls else "n/a per call (no calls)"


def ground_truth_line(truth: GroundTruthMetrics) -> str:
    """Precision over the agent's calls, recall over the reference's; a rate without calls is n/a."""
    return (f"precision {ratio(truth.precision, truth.predicted_calls)} · "
            f"recall {ratio(truth.recall, truth.reference_calls)} · "
            f"incorrect actions {ratio(truth.incorrect_action_rate, truth.predicted_calls)} · "
            f"success {'yes' if truth.success else 'no'} ({truth.matched_calls} matched of "
            f"{truth.predicted_calls} calls, {truth.reference_calls} in the reference)")


def format_evaluation(evaluation: Evaluation, trajectory: Trajectory) -> str:
    lines = [
        f"scenario {trajectory.scenario} · variant {trajectory.variant} · agent {trajectory.agent} · "
        f"{len(trajectory.messages)} messages · ended by {trajectory.ended_by}",
        f"score {evaluation.score!r}  (milestone similarity {evaluation.milestone_similarity!r}, "
        f"minefield similarity {evaluation.minefield_similarity!r})",
        *_verdict(evaluation),
        f"turn count {evaluation.turn_count}",
        *_events("milestones", evaluation.milestones),
        *_events("minefields", evaluation.minefields),
    ]
    if evaluation.diagnosis:
        lines.append("diagnosis:")
        for finding in evaluation.diagnosis:
            at = f" at {finding.indices}" if finding.indices else ""
            detail = f": {finding.detail}" if finding.detail else ""
            calls = evaluation.ground_truth.predicted_calls if evaluation.ground_truth else None
            lines.append(f"  {finding.code} ×{finding.count} ({per_call(finding, calls)}){at}{detail}")
    else:
        lines.append("diagnosis: none")
    truth = evaluation.ground_truth
    if truth is not None:
        lines.append(f"ground truth: {ground_truth_line(truth)}")
    return "\n".join(lines)
