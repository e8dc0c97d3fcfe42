"""The short message of a failed scenario: what a developer needs to see first, no traceback.

The milestones not reached (for a text milestone, the fact missing on the closest message), or with
a threshold set the score against it; for each other milestone that was missed or only partly met,
what it expected (fill_from targets filled with the value the agent should have used) and where it came closest, or
"not reached" when no message met any of it, or "out of order" when its event happened on the wrong
side of a related milestone; milestones zeroed by a guardrail, with the tables
that changed; the minefields that fired; the diagnosis codes; and where the full trajectory is.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_toolsandbox.evaluation.events import GUARDRAILS
from pytest_toolsandbox.evaluation.result import Evaluation, EventOutcome, MilestoneVerdict
from pytest_toolsandbox.report.text.expected import Expectation
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


def guardrail_index(outcome: EventOutcome, expectation: Expectation | None) -> int | None:
    """The message a milestone scoring 0 would have matched but for its guardrail, if any."""
    if outcome.similarity > 0.0:
        return None
    if expectation is not None and expectation.blocked_at is not None:
        return expectation.blocked_at
    own = [value for label, value in outcome.constraints.items() if label != GUARDRAILS]
    held = outcome.constraints.get(GUARDRAILS) == 0.0 and all(value > 0.0 for value in own)
    return outcome.index if held else None


def _where(index: int | None, trajectory: Trajectory) -> str:
    if index is None:
        return "not reached"
    message = next((m for m in trajectory.messages if m.index == index), None)
    return f"closest {excerpt(message)}" if message else f"closest message #{index}"


def _expected(outcome: EventOutcome, expectation: Expectation | None) -> str:
    if expectation is None or not expectation.targets:
        return ""
    return "; expected " + " and ".join(expectation.targets.values())


def _not_reached(evaluation: Evaluation, threshold: float | None) -> dict[str, MilestoneVerdict] | None:
    """The milestones the verdict did not reach, by name; None when a threshold decides instead."""
    if threshold is not None or evaluation.verdict is None:
        return None
    return {verdict.name: verdict for verdict in evaluation.verdict.milestones if not verdict.reached}


def failure_message(
    trajectory: Trajectory,
    evaluation: Evaluation,
    threshold: float | None,
    baseline_passed: bool | None = None,
    report_path: str | None = None,
    expected: Mapping[str, Expectation] | None = None,
) -> str:
    """A few lines explaining why the item failed: the milestones not reached (for a text milestone,
    the fact missing on the closest message) and the minefields fired; with a threshold set, why the
    similarity stayed under it.

    `expected` (from report.expected.expectations) adds each missed milestone's target.
    """
    expected = expected or {}
    not_reached = _not_reached(evaluation, threshold)
    head = f"{trajectory.scenario} [{trajectory.variant}]: "
    head += (f"similarity {evaluation.score:.4f} < threshold {threshold}" if not_reached is None
             else f"failed (similarity {evaluation.score:.4f})")
    lines = [f"REGRESSION (passed in the baseline) — {head}" if baseline_passed else head]
    for outcome in evaluation.milestones:
        if not_reached is None and outcome.similarity >= _MET:
            continue
        if not_reached is not None:
            verdict = not_reached.get(outcome.name)
            if verdict is None:
                continue  # reached: a paraphrase's lower similarity is no failure
            if verdict.fact is not None or outcome.similarity >= _MET:  # the missing fact, or an order failure
                lines.append(f"  {verdict.describe()}")
                continue
        expectation = expected.get(outcome.name)
        blocked = guardrail_index(outcome, expectation)
        if blocked is not None:
            why = expectation.guardrail_text() if expectation and expectation.guarded else "a guarded table changed"
            lines.append(f"  milestone {outcome.name} zeroed by a guardrail ({why}): met at "
                         f"{_where(blocked, trajectory).removeprefix('closest ')}")
            continue
        missed = outcome.similarity <= 0.0
        where = (f"out of order: {outcome.order.describe()}" if outcome.order is not None  # it happened, too early
                 else _where(None if missed else outcome.index, trajectory))
        lines.append(f"  {'missed' if missed else 'partial'} milestone {outcome.name} ({outcome.similarity:.3f}): "
                     f"{where}{_expected(outcome, expectation)}")
    for outcome in evaluation.minefields:
        if outcome.similarity > 0.0:
            lines.append(f"  minefield fired {outcome.name} ({outcome.similarity:.3f}): "
                         f"{_where(outcome.index, trajectory)}")
    if not_reached is not None and evaluation.verdict is not None and evaluation.verdict.unexplained:
        lines.append(f"  {evaluation.verdict.unexplained}")  # insufficient information: no explanation
    if not_reached is not None and evaluation.verdict is not None and evaluation.verdict.final_answer is not None \
            and not evaluation.verdict.final_answer.held:
        lines.append(f"  {evaluation.verdict.final_answer.describe()}")
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
