"""The short message of a failed scenario: what a developer needs to see first, no traceback.

Score against threshold, the milestones that were missed or only partly met (with the closest
message the matcher found), the minefields that fired, the diagnosis codes, and where the full
trajectory is.
"""

from __future__ import annotations

from pytest_toolsandbox.evaluation.result import Evaluation, EventOutcome
from pytest_toolsandbox.world.messages import Message
from pytest_toolsandbox.world.trajectory import Trajectory

_MET = 1.0 - 1e-9
_EXCERPT = 100


def excerpt(message: Message, limit: int = _EXCERPT) -> str:
    """`[i] sender→recipient: text`, shortened to one line."""
    text = message.exception or message.content
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"[{message.index}] {message.sender}→{message.recipient}: {text}"


def _closest(outcome: EventOutcome, trajectory: Trajectory) -> str:
    if outcome.order is not None:  # the event happened, in an order the milestones do not allow
        return f"out of order: {outcome.order.describe()}"
    if outcome.index is None:
        return "no candidate message"
    message = next((m for m in trajectory.messages if m.index == outcome.index), None)
    return f"closest {excerpt(message)}" if message else f"closest message #{outcome.index}"


def failure_message(
    trajectory: Trajectory,
    evaluation: Evaluation,
    threshold: float,
    baseline_passed: bool | None = None,
    report_path: str | None = None,
) -> str:
    """A few lines explaining why the similarity stayed under the threshold."""
    head = (f"{trajectory.scenario} [{trajectory.variant}]: similarity {evaluation.score:.4f} "
            f"< threshold {threshold}")
    lines = [f"REGRESSION (passed in the baseline) — {head}" if baseline_passed else head]
    missed = [o for o in evaluation.milestones if o.similarity <= 0.0]
    partial = [o for o in evaluation.milestones if 0.0 < o.similarity < _MET]
    fired = [o for o in evaluation.minefields if o.similarity > 0.0]
    for title, outcomes in (("missed milestone", missed), ("partial milestone", partial),
                            ("minefield fired", fired)):
        for outcome in outcomes:
            lines.append(f"  {title} {outcome.name} ({outcome.similarity:.3f}): {_closest(outcome, trajectory)}")
    if trajectory.ended_by != "user":
        lines.append(f"  episode ended by {trajectory.ended_by}")
    if evaluation.diagnosis:
        codes = ", ".join(f"{finding.code}×{finding.count}" if finding.count > 1 else finding.code
                          for finding in evaluation.diagnosis)
        lines.append(f"  diagnosis: {codes}")
    if report_path:
        lines.append(f"  trajectory: {report_path}")
    return "\n".join(lines)


def episode_error_message(trajectory: Trajectory, report_path: str | None = None) -> str:
    """An agent or user that crashed is an infrastructure error, reported apart from failures."""
    lines = [f"{trajectory.scenario} [{trajectory.variant}]: the episode stopped with an error "
             f"after {len(trajectory.messages)} messages: {trajectory.error}"]
    if report_path:
        lines.append(f"  trajectory: {report_path}")
    return "\n".join(lines)
