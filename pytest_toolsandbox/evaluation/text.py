"""An Evaluation as terminal text: score, mapping, minefields, turn count, diagnosis, ground truth."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_toolsandbox.evaluation.result import Evaluation, EventOutcome
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


def format_evaluation(evaluation: Evaluation, trajectory: Trajectory) -> str:
    lines = [
        f"scenario {trajectory.scenario} · variant {trajectory.variant} · agent {trajectory.agent} · "
        f"{len(trajectory.messages)} messages · ended by {trajectory.ended_by}",
        f"score {evaluation.score!r}  (milestone similarity {evaluation.milestone_similarity!r}, "
        f"minefield similarity {evaluation.minefield_similarity!r})",
        f"turn count {evaluation.turn_count}",
        *_events("milestones", evaluation.milestones),
        *_events("minefields", evaluation.minefields),
    ]
    if evaluation.diagnosis:
        lines.append("diagnosis:")
        for finding in evaluation.diagnosis:
            at = f" at {finding.indices}" if finding.indices else ""
            detail = f": {finding.detail}" if finding.detail else ""
            lines.append(f"  {finding.code} ×{finding.count} ({finding.per_call:.2f} per call){at}{detail}")
    else:
        lines.append("diagnosis: none")
    truth = evaluation.ground_truth
    if truth is not None:
        lines.append(f"ground truth: precision {truth.precision:.2f} · recall {truth.recall:.2f} · "
                     f"incorrect actions {truth.incorrect_action_rate:.2f} · success {'yes' if truth.success else 'no'}"
                     f" ({truth.matched_calls} matched of {truth.predicted_calls} calls, "
                     f"{truth.reference_calls} in the reference)")
    return "\n".join(lines)
