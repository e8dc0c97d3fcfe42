"""An evaluation's two yes/no answers (`evaluation/result.py`): whether the item passed, and whether the
agent did its part minefields aside (what the simulator guard asks). Both follow the verdict rule unless
a threshold is set, then similarity at the threshold (found unpinned by mutation testing,
benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.result import Evaluation, MilestoneVerdict, Verdict
from tests.test_scoring_support import call, play, seed_scenario, seed_turns


def evaluation(score: float, milestone_similarity: float, reached: list[bool] | None) -> Evaluation:
    """`reached`: the verdict's milestones (None: no verdict, as in a summary from before verdicts)."""
    verdict = None if reached is None else Verdict(passed=all(reached), milestones=[
        MilestoneVerdict(name=f"m{position}", reached=flag) for position, flag in enumerate(reached)])
    return Evaluation(score=score, milestone_similarity=milestone_similarity, minefield_similarity=0.0,
                      milestones=[], minefields=[], turn_count=1, verdict=verdict)


@pytest.mark.parametrize(("similarity", "reached", "threshold", "met"), [
    (0.8, [True, True], None, True),  # the verdict rule: every milestone reached, whatever the similarity
    (1.0, [True, False], None, False),
    (1.0, None, None, True),  # no verdict: similarity 1.0 exactly
    (0.99, None, None, False),
    (0.5, [True, False], 0.5, True),  # a threshold: similarity at it, whatever the verdict
    (0.49, [True, True], 0.5, False),
    (0.5, None, 0.5, True),
])
def test_milestones_are_met_by_the_verdict_unless_a_threshold_is_set(similarity: float, reached: list[bool] | None,
                                                                     threshold: float | None, met: bool) -> None:
    assert evaluation(similarity, similarity, reached).milestones_met(threshold) is met
    assert evaluation(similarity, similarity, reached).passed(threshold) is met  # no minefield fired: the same


def test_a_fired_minefield_fails_the_item_but_not_the_milestones() -> None:
    fired = Evaluation(score=0.0, milestone_similarity=1.0, minefield_similarity=1.0, milestones=[], minefields=[],
                       turn_count=1, verdict=Verdict(passed=False, fired=["deleted"],
                                                     milestones=[MilestoneVerdict(name="m", reached=True)]))
    assert (fired.passed(None), fired.milestones_met(None)) == (False, True)
    assert (fired.passed(0.5), fired.milestones_met(0.5)) == (False, True)


def test_a_crash_under_the_reference_rules_names_its_message() -> None:
    """The first call is to a tool the agent was not offered: message 3, the reason's first line."""
    scenario = seed_scenario()
    played = play(scenario, [call("lookup_person_v2", name="Fredrik Thordendal"), *seed_turns()])
    rescored = evaluate(scenario, played, rules="reference")
    assert rescored.verdict is not None
    assert rescored.verdict.reasons()[0].startswith("crash (reference rules, scored 0): message 3: ")
