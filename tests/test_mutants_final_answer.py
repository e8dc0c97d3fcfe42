"""The final answer's verdict (evaluation/final_answer.py) at the edges the rest of the suite left open (issue 33,
mutation testing): which message a verdict points at, and which earlier answers closing words may leave standing."""

from __future__ import annotations

from pathlib import Path

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.result import FinalAnswerVerdict
from pytest_toolsandbox.world.messages import Role
from tests.test_final_answer import ANSWER, ASKED_AGAIN, CONFIRMED, REMINDER, add_reminder, loaded
from tests.test_scoring_support import call, play, say


def _final(scenario_text: str, tmp_path: Path, *turns: object,
           max_messages: int | None = None) -> tuple[FinalAnswerVerdict, dict[str, int]]:
    """The final-answer verdict of an episode, and the index of each message the agent said to the user."""
    scenario = loaded(tmp_path, scenario_text)
    options = {} if max_messages is None else {"max_messages": max_messages}
    trajectory = play(scenario, list(turns), **options)  # type: ignore[arg-type]
    verdict = evaluate(scenario, trajectory).verdict
    assert verdict is not None and verdict.final_answer is not None
    said = {m.content: m.index for m in trajectory.messages if m.sender is Role.AGENT and m.recipient is Role.USER}
    return verdict.final_answer, said


def test_a_failed_final_answer_points_at_the_last_message(tmp_path: Path) -> None:
    empty, said = _final(REMINDER + CONFIRMED, tmp_path, add_reminder(), say(""))
    assert not empty.held and empty.index == said[""]
    later = [call("add_reminder", content="Call Kenji", reminder_timestamp=1773446400.0 + 60 * n) for n in range(4)]
    early, said = _final(ASKED_AGAIN + CONFIRMED, tmp_path, say("Which Kenji?"), add_reminder(), *later,
                         max_messages=8)
    assert not early.held and early.index == said["Which Kenji?"]


def test_an_answer_left_standing_by_closing_words_is_the_one_pointed_at(tmp_path: Path) -> None:
    answer = "Kenji's reminder is set for 5 PM."
    verdict, said = _final(ASKED_AGAIN + ANSWER, tmp_path, add_reminder(), say(answer), say("Have a nice day."),
                           say("You're welcome!"))
    assert verdict.held and verdict.index == said[answer]


def test_an_answer_before_the_work_is_not_left_standing_by_closing_words(tmp_path: Path) -> None:
    verdict, _ = _final(ASKED_AGAIN + ANSWER, tmp_path, say("Kenji at 5 PM, right?"), add_reminder(),
                        say("You're welcome!"))
    assert not verdict.held


_TOLD = '  told_the_time:\n    agent_says: It is 9:30 AM now.\n    facts: [{time: "09:30"}]\nreference:'
TOLD_THE_TIME = ASKED_AGAIN.replace("reference:", _TOLD) + ANSWER
TOLD_ONCE = REMINDER.replace("reference:", _TOLD) + ANSWER
NOW = "It is 9:30 AM now."


def test_a_milestones_value_may_stand_beside_the_final_answer(tmp_path: Path) -> None:
    verdict, _ = _final(TOLD_ONCE, tmp_path, add_reminder(), say(f"Kenji's reminder is set for 5 PM. {NOW}"))
    assert verdict.held
    verdict, _ = _final(TOLD_ONCE, tmp_path, add_reminder(), say(f"Kenji's reminder is set for 6 PM. {NOW}"))
    assert verdict.missing is not None and verdict.missing.endswith(
        "gives '6 PM' instead: it should give the time 17:00")


def test_closing_words_with_a_milestones_value_leave_the_answer_standing(tmp_path: Path) -> None:
    answer = "Kenji's reminder is set for 5 PM."
    verdict, said = _final(TOLD_THE_TIME, tmp_path, add_reminder(), say(f"{answer} {NOW}"), say("You're welcome!"))
    assert verdict.held and verdict.index == said[f"{answer} {NOW}"]


_CONFIRMED = "  confirmed:\n    agent_says: Kenji's reminder is set for 5 PM.\n    facts: [{name: Kenji}]\nreference:"
SAYS_IT = "Kenji's reminder is set for 5 PM."


def test_the_message_that_reaches_the_last_milestone_may_be_the_final_answer(tmp_path: Path) -> None:
    verdict, said = _final(REMINDER.replace("reference:", _CONFIRMED) + ANSWER, tmp_path, add_reminder(), say(SAYS_IT))
    assert verdict.held and verdict.index == said[SAYS_IT]
    verdict, said = _final(ASKED_AGAIN.replace("reference:", _CONFIRMED) + ANSWER, tmp_path, add_reminder(),
                           say(SAYS_IT), say("You're welcome!"))
    assert verdict.held and verdict.index == said[SAYS_IT]


THANKED = ASKED_AGAIN.replace("  - agent: At 5 PM.", "  - agent: At 5 PM.\n  - user: Thanks!\n  - agent: Sure.")


def test_an_answer_stands_behind_several_closing_words(tmp_path: Path) -> None:
    verdict, said = _final(THANKED + ANSWER, tmp_path, add_reminder(), say(SAYS_IT), say("Have a nice day."),
                           say("You're welcome!"))
    assert {"Have a nice day.", "You're welcome!"} <= said.keys()
    assert verdict.held and verdict.index == said[SAYS_IT]


def test_closing_words_giving_a_milestones_value_take_nothing_back(tmp_path: Path) -> None:
    told = '  told_the_time:\n    agent_says: It is 9:30 AM now.\n    facts: [{time: "09:30"}, now]\nreference:'
    verdict, said = _final(ASKED_AGAIN.replace("reference:", told) + ANSWER, tmp_path, add_reminder(), say(SAYS_IT),
                           say("You're welcome! See you at 9:30 AM."))
    assert verdict.held and verdict.index == said[SAYS_IT]
