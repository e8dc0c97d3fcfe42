"""Scoring mutations the rest of the suite missed (issue 33), pinned through the public surface: a
scenario file, an episode played by a scripted agent, `evaluate`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_toolsandbox import (
    Evaluation,
    Message,
    OfferedTool,
    ScriptedUser,
    ToolCall,
    Turn,
    evaluate,
    load_scenario,
    run_episode,
)

NUMBER = "+13105550143"
CONTENT = "Count me in for tonight!"
SCENARIO = f"""
description: Text a number, then say the reading.
categories: [single_tool_call, single_user_turn]
user:
  goal: Text {NUMBER} "{CONTENT}" and hear the battery voltage.
  knowledge: You have no other information.
  first_message: 'Text {NUMBER}: "{CONTENT}", and tell me the battery voltage.'
tools: [send_message_with_phone_number]
milestones:
  stored:
    added:
      messaging: [{{recipient_phone_number: "{NUMBER}", content: "{CONTENT}"}}]
  answered:
    agent_says: The battery is at 1.1 volts.
    facts: [{{number: 1.1, tolerance: 0.1}}]
reference:
  - send_message_with_phone_number(phone_number="{NUMBER}", content="{CONTENT}")
  - agent: The battery is at 1.1 volts.
"""


class TwoTurnAgent:
    """Sends `content` to the number, then says `said`."""

    name = "two-turn"

    def __init__(self, content: str, said: str) -> None:
        arguments = f'{{"phone_number": "{NUMBER}", "content": "{content}"}}'
        self.turns = [Turn(tool_calls=(ToolCall(id="c1", name="send_message_with_phone_number", arguments=arguments),)),
                      Turn(text=said)]

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        return self.turns.pop(0) if self.turns else Turn(text="Anything else?")


def played(tmp_path: Path, content: str, said: str) -> Evaluation:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    scenario = load_scenario(path)
    return evaluate(scenario, run_episode(scenario, TwoTurnAgent(content, said), ScriptedUser(scenario)))


def reached(evaluation: Evaluation) -> dict[str, bool]:
    assert evaluation.verdict is not None
    return {milestone.name: milestone.reached for milestone in evaluation.verdict.milestones}


def test_the_right_message_and_reading_pass(tmp_path: Path) -> None:
    evaluation = played(tmp_path, CONTENT, "It reads 1.0 volts.")
    assert reached(evaluation) == {"stored": True, "answered": True} and evaluation.passed(None)


def test_a_state_milestone_is_reached_only_exactly_not_by_a_close_message(tmp_path: Path) -> None:
    """The wrong content is most of the way to the right row (similarity ~0.9): close, but not reached,
    so the item fails however high its similarity (verdict.py's exact level for state and calls)."""
    evaluation = played(tmp_path, "Count me out for tonight!", "It reads 1.0 volts.")
    stored = next(outcome for outcome in evaluation.milestones if outcome.name == "stored")
    assert 0.5 <= stored.similarity < 1.0
    assert reached(evaluation)["stored"] is False and not evaluation.passed(None)


@pytest.mark.parametrize(("said", "holds"), [("It reads 1.0 volts.", True), ("It reads 1.2 volts.", True),
                                             ("It reads 0.95 volts.", False), ("It reads 1.25 volts.", False)])
def test_a_number_fact_holds_at_its_tolerance_edges_despite_binary_floats(tmp_path: Path, said: str,
                                                                          holds: bool) -> None:
    """|1.0 - 1.1| is 0.10000000000000009 in binary floating point: the decimal text at the edge of the
    tolerance must still count (the fact's float slack)."""
    assert reached(played(tmp_path, CONTENT, said))["answered"] is holds
