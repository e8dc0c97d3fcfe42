"""The terminal text of an evaluation (`evaluation/text.py`), pinned line by line: what `toolsandbox score`
prints and a failed item's report shows is read by people, so every label, rate and fallback counts
(found unpinned by mutation testing, benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation.result import (
    Evaluation,
    EventOutcome,
    Finding,
    GroundTruthMetrics,
    MilestoneVerdict,
    OrderViolation,
    Verdict,
)
from pytest_toolsandbox.evaluation.text import format_evaluation, ground_truth_line, per_call, ratio
from pytest_toolsandbox.world.trajectory import Trajectory
from tests.test_scoring_support import play, say, scenario

WIFI = """
categories: [single_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status]
"""


@pytest.fixture(scope="module")
def trajectory() -> Trajectory:
    """A real six-message episode (system, user, agent, user's goodbye, …) whose header the texts carry."""
    return play(scenario(WIFI, name="wifi"), [say("Done.")])


def header(trajectory: Trajectory) -> str:
    return (f"scenario wifi · variant base · agent script · {len(trajectory.messages)} messages · "
            f"ended by {trajectory.ended_by}")


FAILED = Evaluation(
    score=0.0, milestone_similarity=0.5, minefield_similarity=1 / 3, turn_count=3,
    milestones=[EventOutcome(name="wifi_off", index=4, similarity=1.0,
                             constraints={"world.settings": 1.0, "agent_says": 0.123456789}),
                EventOutcome(name="told", index=None, similarity=0.0,
                             order=OrderViolation(found_at=2, other="wifi_off", other_at=4, relation="prerequisite")),
                EventOutcome(name="asked", index=12, similarity=0.25)],
    minefields=[],
    diagnosis=[Finding(code="IFN", count=2, per_call=0.5, indices=[3, 5], detail="no such tool"),
               Finding(code="NCA", count=1, per_call=0.25, indices=[])],
    ground_truth=GroundTruthMetrics(precision=0.5, recall=1.0, incorrect_action_rate=0.25, success=False,
                                    matched_calls=2, predicted_calls=4, reference_calls=2),
    verdict=Verdict(passed=False, fired=["deleted"],
                    milestones=[MilestoneVerdict(name="wifi_off", reached=True, index=4),
                                MilestoneVerdict(name="told", reached=False),
                                MilestoneVerdict(name="asked", reached=False, missing="asked not met")]))


def test_a_failed_evaluation_reads_line_by_line(trajectory: Trajectory) -> None:
    """Milestones align on the longest name, an unmapped one shows `[  -]`, constraints are joined by two
    spaces at 6 significant digits, an order violation is appended, lines carry no trailing blanks;
    a finding's rate is per agent call, its indices and detail only when it has them."""
    assert format_evaluation(FAILED, trajectory).splitlines() == [
        header(trajectory),
        "score 0.0  (milestone similarity 0.5, minefield similarity 0.3333333333333333)",
        "verdict failed",
        "  milestone 'told' not reached: not found in the trajectory",
        "  milestone 'asked' not reached: asked not met",
        "  minefield 'deleted' fired",
        "turn count 3",
        "milestones:",
        "  wifi_off → message [  4]  similarity 1.000000  world.settings=1  agent_says=0.123457",
        "  told     → message [  -]  similarity 0.000000    (out of order: found at message 2, before its "
        "prerequisite wifi_off (message 4))",
        "  asked    → message [ 12]  similarity 0.250000",
        "minefields: none",
        "diagnosis:",
        "  IFN ×2 (0.50 per call) at [3, 5]: no such tool",
        "  NCA ×1 (0.25 per call)",
        "ground truth: precision 0.50 · recall 1.00 · incorrect actions 0.25 · success no (2 matched of 4 calls, "
        "2 in the reference)",
    ]


def test_a_passed_evaluation_without_ground_truth(trajectory: Trajectory) -> None:
    """No ground truth: no rate per call can be given, and no ground-truth line is printed."""
    evaluation = Evaluation(
        score=1.0, milestone_similarity=1.0, minefield_similarity=0.0, turn_count=2,
        milestones=[], minefields=[EventOutcome(name="deleted", index=None, similarity=0.0)],
        diagnosis=[Finding(code="IFN", count=1, per_call=1.0, indices=[7])],
        verdict=Verdict(passed=True))
    assert format_evaluation(evaluation, trajectory).splitlines() == [
        header(trajectory),
        "score 1.0  (milestone similarity 1.0, minefield similarity 0.0)",
        "verdict passed",
        "turn count 2",
        "milestones: none",
        "minefields:",
        "  deleted → message [  -]  similarity 0.000000",
        "diagnosis:",
        "  IFN ×1 (n/a per call (no calls)) at [7]",
    ]


def test_an_evaluation_without_verdict_or_findings(trajectory: Trajectory) -> None:
    """Scored by similarity alone (no verdict line) and clean (`diagnosis: none`); 0 of 0 calls is no rate."""
    evaluation = Evaluation(score=1.0, milestone_similarity=1.0, minefield_similarity=0.0, turn_count=1,
                            milestones=[], minefields=[],
                            ground_truth=GroundTruthMetrics(precision=1.0, recall=1.0, incorrect_action_rate=0.0,
                                                            success=True))
    assert format_evaluation(evaluation, trajectory).splitlines() == [
        header(trajectory),
        "score 1.0  (milestone similarity 1.0, minefield similarity 0.0)",
        "turn count 1",
        "milestones: none",
        "minefields: none",
        "diagnosis: none",
        "ground truth: precision n/a · recall n/a · incorrect actions n/a · success yes (0 matched of 0 calls, "
        "0 in the reference)",
    ]


def test_each_rate_is_n_a_only_when_its_own_denominator_is_zero() -> None:
    """Precision and incorrect actions are over the agent's calls, recall over the reference's."""
    assert ratio(0.125, 8) == "0.12" and ratio(1.0, 0) == "n/a"
    no_calls = GroundTruthMetrics(precision=0.0, recall=0.0, incorrect_action_rate=0.0, success=False,
                                  matched_calls=0, predicted_calls=0, reference_calls=3)
    assert ground_truth_line(no_calls) == ("precision n/a · recall 0.00 · incorrect actions n/a · success no "
                                           "(0 matched of 0 calls, 3 in the reference)")
    no_reference = GroundTruthMetrics(precision=0.0, recall=0.0, incorrect_action_rate=1.0, success=False,
                                      matched_calls=0, predicted_calls=2, reference_calls=0)
    assert ground_truth_line(no_reference) == ("precision 0.00 · recall n/a · incorrect actions 1.00 · success no "
                                               "(0 matched of 2 calls, 0 in the reference)")


def test_a_rate_per_call_needs_calls() -> None:
    finding = Finding(code="IFN", count=3, per_call=0.75, indices=[1, 2, 3])
    assert [per_call(finding, calls) for calls in (4, 0, None)] == [
        "0.75 per call", "n/a per call (no calls)", "n/a per call (no calls)"]
