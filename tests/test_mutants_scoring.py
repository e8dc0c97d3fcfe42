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
    Trajectory,
    Turn,
    evaluate,
    load_scenario,
    run_episode,
)
from pytest_toolsandbox.evaluation.result import MilestoneVerdict

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


def episode(tmp_path: Path, content: str, said: str, text: str = SCENARIO) -> tuple[Trajectory, Evaluation]:
    path = tmp_path / "scenario.yaml"
    path.write_text(text, encoding="utf-8")
    scenario = load_scenario(path)
    trajectory = run_episode(scenario, TwoTurnAgent(content, said), ScriptedUser(scenario))
    return trajectory, evaluate(scenario, trajectory)


def played(tmp_path: Path, content: str, said: str, text: str = SCENARIO) -> Evaluation:
    return episode(tmp_path, content, said, text)[1]


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


# Found by mutation testing (benchmarks/README.md, "Mutation testing"): what a verdict reports was unpinned.

def verdicts(evaluation: Evaluation) -> dict[str, MilestoneVerdict]:
    assert evaluation.verdict is not None
    return {milestone.name: milestone for milestone in evaluation.verdict.milestones}


def test_a_reached_milestone_names_the_message_that_reached_it(tmp_path: Path) -> None:
    trajectory, evaluation = episode(tmp_path, CONTENT, "It reads 1.0 volts.")
    said = next(m.index for m in trajectory.messages if m.content == "It reads 1.0 volts.")
    stored = next(m.index for m in trajectory.messages if m.tool_trace is not None)
    assert {name: v.index for name, v in verdicts(evaluation).items()} == {"stored": stored, "answered": said}


def test_a_missed_milestone_names_what_failed_at_the_closest_message(tmp_path: Path) -> None:
    trajectory, evaluation = episode(tmp_path, "Count me out for tonight!", "It reads 0.95 volts.")
    stored, answered = verdicts(evaluation)["stored"], verdicts(evaluation)["answered"]
    at = next(m.index for m in trajectory.messages if m.tool_trace is not None)
    similarity = next(o.similarity for o in evaluation.milestones if o.name == "stored")
    assert (stored.missing, stored.closest, stored.fact) == (
        f"added.messaging not met at the closest message {at} (similarity {similarity:.3g})", None, None)
    assert (answered.missing, answered.closest, answered.fact) == (
        'the closest agent message "It reads 0.95 volts." gives \'0.95\' instead: it should state the number '
        "1.1 (±0.1)",
        "It reads 0.95 volts.", "state the number 1.1 (±0.1)")


def test_a_long_closest_message_is_quoted_on_one_line_and_cut(tmp_path: Path) -> None:
    said = "It reads\n\n" + "nearly " * 40 + "0.9 volts."
    answered = verdicts(played(tmp_path, CONTENT, said))["answered"]
    one_line = " ".join(said.split())
    assert answered.missing == (f'the closest agent message "{one_line[:159]}…" gives \'0.9\' instead: it should '
                                "state the number 1.1 (±0.1)")
    assert answered.closest == said  # the full text, as sent


WORDING = SCENARIO.replace("""    agent_says: The battery is at 1.1 volts.
    facts: [{number: 1.1, tolerance: 0.1}]""", """    agent_says: The battery is at 1.1 volts.""")
FLOOR = SCENARIO.replace("""    agent_says: The battery is at 1.1 volts.
    facts: [{number: 1.1, tolerance: 0.1}]""", """    agent_says: {text: The battery is at 1.1 volts., floor: 0.8}""")


def test_without_facts_the_explanation_names_the_wording_or_the_floor_missed(tmp_path: Path) -> None:
    wording = played(tmp_path, CONTENT, "The battery is at 1.0 volts.", WORDING)
    rouge = next(o.similarity for o in wording.milestones if o.name == "answered")
    assert verdicts(wording)["answered"].missing == (
        'the closest agent message "The battery is at 1.0 volts." is not the reference wording "The battery is at '
        f'1.1 volts." (ROUGE-L {rouge:.3f}; the milestone states no facts, so only the exact wording is reached)')
    floor = played(tmp_path, CONTENT, "Battery: 1.0.", FLOOR)
    rouge = next(o.similarity for o in floor.milestones if o.name == "answered")
    missed = verdicts(floor)["answered"]
    assert (missed.missing, missed.fact) == (
        f'the closest agent message "Battery: 1.0." scores ROUGE-L {rouge:.3f}, under the floor 0.8',
        "reach ROUGE-L 0.8")
    assert verdicts(played(tmp_path, CONTENT, "The battery is at 1.1 volts now.", FLOOR))["answered"].reached
