"""The seed README example, the suite's own reference dialogue, and the stored hand-written trajectory."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.columns import rouge_l
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ReplayAgent, ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.world.trajectory import Trajectory
from tests.test_scoring_support import DATA, SEED_ANSWER, play, seed_scenario, seed_turns

MILESTONE_TEXT = "Your message to Fredrik Thordendal has been sent saying: How's the new album coming along"
EXPECTED_LAST = 0.6875 ** (1 / 3)
EXPECTED_SCORE = (3 + 0.6875 ** (1 / 3)) / 4


def test_rouge_l_of_the_two_sentences_is_eleven_sixteenths() -> None:
    assert rouge_l(MILESTONE_TEXT, SEED_ANSWER) == 0.6875


def test_seed_readme_example_scores_as_the_paper_says() -> None:
    scenario = seed_scenario()
    evaluation = evaluate(scenario, play(scenario, seed_turns()))
    assert pytest.approx(0.970646770957879, abs=1e-15) == EXPECTED_SCORE
    assert evaluation.score == pytest.approx(0.970646770957879, abs=1e-12)
    assert evaluation.score == pytest.approx(0.9706467684812784, abs=1e-6)  # the reference's float32 figure
    last = evaluation.milestones[-1]
    assert last.similarity == pytest.approx(0.8825870838315157, abs=1e-12)
    assert last.similarity == pytest.approx(0.8825870739251136, abs=1e-6)
    assert [(o.name, o.index, o.similarity) for o in evaluation.milestones[:3]] == [
        ("cellular_on", 8, 1.0), ("found_contact", 4, 1.0), ("message_sent", 10, 1.0)]
    assert (last.name, last.index) == ("confirmed", 11)
    assert evaluation.turn_count == 9
    assert evaluation.minefield_similarity == 0.0
    assert evaluation.diagnosis == []


def test_replaying_the_seed_trajectory_gives_the_same_evaluation() -> None:
    scenario = seed_scenario()
    original = play(scenario, seed_turns())
    replayed = run_episode(scenario, ReplayAgent(original.messages), ScriptedUser(scenario))
    assert replayed.messages == original.messages
    assert evaluate(scenario, replayed) == evaluate(scenario, original)


def test_reference_dialogue_scores_one() -> None:
    scenario = seed_scenario()
    trajectory = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario))
    evaluation = evaluate(scenario, trajectory)
    assert evaluation.score == 1.0
    assert evaluation.minefields == []
    assert evaluation.ground_truth is not None and evaluation.ground_truth.success


def test_stored_hand_written_trajectory_scores_like_the_readme() -> None:
    trajectory = Trajectory.load(DATA / "seed_readme.trajectory.json")
    evaluation = evaluate(seed_scenario(), trajectory)
    assert evaluation.score == pytest.approx(EXPECTED_SCORE, abs=1e-12)
    assert trajectory.messages[-3].content == SEED_ANSWER
