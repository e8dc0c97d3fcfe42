"""The scripted user pushes an agent that asks for confirmation or hands the work back, a bounded number
of times, and ends after a plain answer; the reference dialogues never trigger a push."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import MAX_PUSHES, PUSH_LINE, ScriptedUser
from pytest_toolsandbox.roles.user_push import Ask, classify
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, Role
from tests.support import reference_trajectories, shipped_scenario

SCENARIO = shipped_scenario("scenarios/settings/wifi_off.yaml")


@pytest.mark.parametrize(
    ("text", "ask"),
    [
        ("Low battery mode is on. Shall I turn off low battery mode first?", Ask.CONFIRMATION),
        ("Would you like me to send the message now?", Ask.CONFIRMATION),
        ("I found Fredrik's number. Do you want me to proceed?", Ask.CONFIRMATION),
        ("Should I turn off wifi, cellular service, or both?", Ask.CONFIRMATION),
        ("You can turn wifi off in Settings > Wi-Fi.", Ask.DEFERRAL),
        ("Please turn on cellular service and try again.", Ask.DEFERRAL),
        ("Here's how you can do it: use the `timestamp_diff` function with both timestamps.", Ask.DEFERRAL),
        ("Done, wifi is now off.", Ask.NOTHING),
        ("Your wifi is off. Is there anything else I can help you with?", Ask.NOTHING),
        ("Which Sam do you mean?", Ask.NOTHING),
        ("Sure, which contact should I delete?", Ask.NOTHING),
        ("Do you know Kenji's phone number?", Ask.NOTHING),
        ("I can't control Bluetooth. You can turn Bluetooth on in your phone's settings.", Ask.NOTHING),
        ("", Ask.NOTHING),
    ],
)
def test_the_agents_words_are_read_as_a_confirmation_a_deferral_or_neither(text: str, ask: Ask) -> None:
    assert classify(text) is ask


class _Saying:
    """An agent that says the same text every turn."""

    name = "saying"

    def __init__(self, text: str) -> None:
        self.text = text

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        return Turn(text=self.text)


def _user_lines(messages: Sequence[Message]) -> list[str]:
    return [m.content for m in messages if m.sender is Role.USER and m.recipient is Role.AGENT and not m.tool_call]


def test_a_deferring_agent_is_pushed_at_most_max_pushes_times_then_the_user_ends() -> None:
    trajectory = run_episode(SCENARIO, _Saying("Shall I turn wifi off for you?"), ScriptedUser(SCENARIO))
    assert _user_lines(trajectory.messages) == [SCENARIO.user.first_message, *[PUSH_LINE] * MAX_PUSHES]
    assert trajectory.ended_by == "user" and MAX_PUSHES == 2


def test_the_bound_is_an_option_and_a_plain_answer_ends_at_once() -> None:
    once = run_episode(SCENARIO, _Saying("You can turn wifi off in Settings."), ScriptedUser(SCENARIO, max_pushes=1))
    assert _user_lines(once.messages) == [SCENARIO.user.first_message, PUSH_LINE]
    done = run_episode(SCENARIO, _Saying("Done, wifi is off."), ScriptedUser(SCENARIO))
    assert _user_lines(done.messages) == [SCENARIO.user.first_message] and done.ended_by == "user"


def test_no_reference_dialogue_triggers_a_push() -> None:
    """Every scenario's reference plays exactly its scripted user lines: the push never changes it."""
    for path, trajectory in reference_trajectories():
        assert PUSH_LINE not in _user_lines(trajectory.messages), path
