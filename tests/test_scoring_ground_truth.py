"""ToolTalk metrics against the reference dialogue's successful calls."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.ground_truth import reference_calls
from pytest_toolsandbox.tools.registry import all_tools
from tests.test_scoring_evaluate import CONFIRMATION, MINEFIELD
from tests.test_scoring_support import ALBUM, FREDRIK, call, play, say, scenario, seed_scenario, seed_turns


def truth(turns, s=None):
    s = s or seed_scenario()
    return evaluate(s, play(s, turns)).ground_truth


def test_the_reference_failure_is_not_required() -> None:
    calls = reference_calls(seed_scenario(), all_tools())
    assert [c.tool for c in calls] == ["search_contacts", "set_cellular_service_status",
                                       "send_message_with_phone_number"]


def test_seed_trajectory_metrics() -> None:
    metrics = truth(seed_turns(CONFIRMATION))
    assert (metrics.precision, metrics.recall, metrics.incorrect_action_rate, metrics.success) == (0.75, 1.0, 0.0, True)
    assert (metrics.matched_calls, metrics.predicted_calls, metrics.reference_calls) == (3, 4, 3)


def test_a_direct_solution_is_perfect() -> None:
    turns = [call("set_cellular_service_status", on=True), call("search_contacts", name="Fredrik Thordendal"),
             call("send_message_with_phone_number", phone_number=FREDRIK, content=ALBUM), say(CONFIRMATION)]
    metrics = truth(turns)
    assert (metrics.precision, metrics.recall, metrics.success) == (1.0, 1.0, True)


def test_read_only_calls_match_by_result_not_by_arguments() -> None:
    # A shorter name finds the same single contact, so the search is as good as the reference's.
    turns = seed_turns(CONFIRMATION)
    turns[0] = call("search_contacts", phone_number=FREDRIK)
    metrics = truth(turns)
    assert metrics.recall == 1.0 and metrics.matched_calls == 3


def test_an_unmatched_successful_action_is_incorrect() -> None:
    extra = call("send_message_with_phone_number", phone_number="+14085550172", content="Hello there")
    turns = [*seed_turns(CONFIRMATION)[:4], extra, say(CONFIRMATION)]
    metrics = truth(turns)
    assert metrics.incorrect_action_rate == pytest.approx(1 / 4)  # 4 action calls, one bad
    assert metrics.recall == 1.0 and not metrics.success


def test_free_text_argument_within_rouge_threshold_matches() -> None:
    turns = seed_turns(CONFIRMATION)
    turns[3] = call("send_message_with_phone_number", phone_number=FREDRIK, content="How is the new album coming along")
    metrics = truth(turns)
    assert metrics.success and metrics.incorrect_action_rate == 0.0


def test_wrong_free_text_is_an_incorrect_action_and_a_missed_call() -> None:
    turns = seed_turns(CONFIRMATION)
    turns[3] = call("send_message_with_phone_number", phone_number=FREDRIK, content="Call me back")
    metrics = truth(turns)
    assert metrics.recall == pytest.approx(2 / 3)
    assert metrics.incorrect_action_rate == pytest.approx(1 / 3)
    assert not metrics.success


def test_no_reference_no_metrics_and_no_calls_is_vacuously_fine() -> None:
    assert truth([say("I can't tell where you are.")], scenario(MINEFIELD)) is None
    s = scenario(MINEFIELD + "reference:\n  - agent: I cannot access your location.\n")
    metrics = truth([say("I can't tell where you are.")], s)
    assert (metrics.precision, metrics.recall, metrics.incorrect_action_rate, metrics.success) == (1.0, 1.0, 0.0, True)
