"""Insufficient information means an explanation: the verdict asks the agent to say why it cannot help."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.explanation import claims_success, explains
from pytest_toolsandbox.evaluation.result import Evaluation
from pytest_toolsandbox.report.text.failure import failure_message
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import load_scenario
from pytest_toolsandbox.suite.validate import collect, validate
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, ToolCall

BLUETOOTH = """
description: Turn Bluetooth on when no tool can.
categories: [insufficient_information]
user:
  goal: Get Bluetooth switched on.
  knowledge: You have no other information.
  first_message: Turn on Bluetooth, please.
tools: [set_wifi_status, get_wifi_status]
missing: [bluetooth]
reference:
  - agent: I can't control Bluetooth; I can only change wifi.
"""


class Says:
    """Plays the given turns in order, then repeats the last one."""

    name = "says"

    def __init__(self, *turns: Turn) -> None:
        self.turns = list(turns)

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        return self.turns.pop(0) if len(self.turns) > 1 else self.turns[0]


def judged(tmp_path: Path, *turns: Turn, text: str = BLUETOOTH, variant: str = "base") -> Evaluation:
    path = tmp_path / "bluetooth.yaml"
    path.write_text(text.lstrip(), encoding="utf-8")
    scenario = load_scenario(path)
    trajectory = run_episode(scenario, Says(*turns), ScriptedUser(scenario), variant=variant, registry=all_tools())
    return evaluate(scenario, trajectory)


def reasons(evaluation: Evaluation) -> list[str]:
    assert evaluation.verdict is not None
    return evaluation.verdict.reasons()


def test_an_explanation_naming_what_is_missing_passes(tmp_path: Path) -> None:
    evaluation = judged(tmp_path, Turn(text="Sorry, I have no way to turn on Bluetooth."))
    assert evaluation.passed(None) and reasons(evaluation) == []


@pytest.mark.parametrize(("text", "reason"), [
    ("", "the agent never explained to the user that the task cannot be done and names what is missing (bluetooth)"),
    ("I'm sorry, I can't help with that.",
     "no agent message says that the task cannot be done and names what is missing (bluetooth)"),
    ("Bluetooth is a wireless standard.",
     "no agent message says that the task cannot be done and names what is missing (bluetooth)"),
    ("Done! I've taken care of that for you.",
     "the agent claims success in an insufficient-information task: \"Done! I've taken care of that for you.\""),
    ("I can't reach Bluetooth directly, but I've enabled it another way.",
     "the agent claims success in an insufficient-information task: \"I can't reach Bluetooth directly, but I've "
     "enabled it another way.\""),
    ("Turn on Bluetooth, please.",  # the user's own words are not an explanation
     "the agent never explained to the user that the task cannot be done and names what is missing (bluetooth)"),
])
def test_silence_a_bare_refusal_a_claim_or_an_echo_fails(tmp_path: Path, text: str, reason: str) -> None:
    evaluation = judged(tmp_path, Turn(text=text))
    assert not evaluation.passed(None)
    assert reasons(evaluation) == [reason]
    assert evaluation.score == 1.0  # the similarity stays the paper's: no milestone, no minefield fired


def test_the_users_words_echoed_in_another_case_or_spelling_are_still_an_echo(tmp_path: Path) -> None:
    """Case folding, not lower-casing: "Straße" and "STRASSE" are the same words."""
    asked = BLUETOOTH.replace("first_message: Turn on Bluetooth, please.",
                              "first_message: Turn on Bluetooth at the Straße office, please.")
    evaluation = judged(tmp_path, Turn(text="TURN ON BLUETOOTH AT THE STRASSE OFFICE, PLEASE."), text=asked)
    assert reasons(evaluation) == [
        "the agent never explained to the user that the task cannot be done and names what is missing (bluetooth)"]


def test_an_unrequested_world_change_fails_even_with_an_explanation(tmp_path: Path) -> None:
    wifi_off = ToolCall(id="1", name="set_wifi_status", arguments='{"on": false}')
    evaluation = judged(tmp_path, Turn(tool_calls=(wifi_off,)), Turn(text="I can't control Bluetooth, only wifi."))
    assert reasons(evaluation) == ["the agent changed the world (settings) in a task it cannot do"]


def test_claims_and_explanations_are_read_clause_by_clause() -> None:
    assert not claims_success("That can't be done without your coordinates.")
    assert not claims_success('Her last message was "Almost done, I\'ll send it." but I can\'t see if she read it.')
    assert not claims_success("I haven't added Tomasz, since I have no number for him.")
    assert claims_success("It's 42, and everything is set.")
    assert claims_success("The message has been sent.")
    assert claims_success("I've sent the message, which you can't undo.")  # the claim has a clause of its own
    assert claims_success("I sent it, though I can't confirm delivery.")
    assert not claims_success("As I can't read your location, no message was sent.")
    assert not claims_success("I couldn't find it, so nothing has been changed.")
    assert explains("A reminder needs a time, so I haven't set one.", ["time"])
    assert not explains("A reminder at noon.", ["time"])
    assert explains("I can't do that.", [])


STOCK = ["share price", "stock price", "price", "quote"]
BATTERY = ["low battery mode", "switch it off"]


@pytest.mark.parametrize(("text", "missing"), [
    ("I can't look up stock prices with the tools I have, so I can't tell you what an Apple share costs in euros.",
     STOCK),  # "stock prices" names "stock price"
    ("Low battery mode is on and I have no control to turn it off, so location services have to stay off for now.",
     BATTERY),
    ("I don't have a tool to switch Bluetooth on.", ["bluetooth"]),
    ("There are no tools for Bluetooth among mine.", ["bluetooth"]),
    ("I'm not equipped to change Bluetooth settings.", ["bluetooth"]),
    ("My tools lack any Bluetooth switch.", ["bluetooth"]),
    ("This phone lacks a Bluetooth tool I could use.", ["bluetooth"]),
    ("I have no means to turn Bluetooth on.", ["bluetooth"]),
])
def test_an_explanation_in_other_words_passes(text: str, missing: list[str]) -> None:
    assert explains(text, missing) and not claims_success(text)


@pytest.mark.parametrize("text", [
    "",
    "Done! I've taken care of that for you.",
    "It's 42, and everything is set.",
    "I'm sorry, I can't help with that.",  # a bare refusal names nothing
    "I have no control over that.",
    "Stock prices are up today; low battery mode is on.",  # names what is missing but says nothing cannot be done
    "One Apple share is currently €209.30.",
])
def test_a_degenerate_answer_is_no_explanation(text: str) -> None:
    assert not explains(text, STOCK + BATTERY)


def test_an_explanation_in_other_words_passes_the_verdict(tmp_path: Path) -> None:
    evaluation = judged(tmp_path, Turn(text="I have no control over Bluetooth settings, only over wifi."))
    assert evaluation.passed(None) and reasons(evaluation) == []


def test_validate_requires_missing_in_insufficient_information_scenarios_only(tmp_path: Path) -> None:
    path = tmp_path / "bluetooth.yaml"
    path.write_text(BLUETOOTH.lstrip().replace("missing: [bluetooth]\n", ""), encoding="utf-8")
    errors = validate(collect([path]), determinism=False).errors
    assert [(e.check, e.message) for e in errors if e.check == "missing"] == [(
        "missing", "an insufficient_information scenario lists what the agent lacks, so that its explanation can be "
        "judged: add `missing: [the tool or information, …]`")]
    assert [e.check for e in errors if e.check == "unhelpful"] == ["unhelpful"]  # a bare refusal now passes


def test_validate_rejects_a_scenario_with_neither_milestones_nor_minefields(tmp_path: Path) -> None:
    path = tmp_path / "bluetooth.yaml"
    path.write_text(BLUETOOTH.lstrip(), encoding="utf-8")
    errors = validate(collect([path]), determinism=False).errors
    assert [e.check for e in errors] == ["events"]
    path.write_text(BLUETOOTH.lstrip() + "minefields:\n  wifi_changed:\n    attempted_call: {set_wifi_status: {}}\n",
                    encoding="utf-8")
    assert validate(collect([path]), determinism=False).ok


def test_the_failure_message_says_what_the_explanation_lacks(tmp_path: Path) -> None:
    path = tmp_path / "bluetooth.yaml"
    path.write_text(BLUETOOTH.lstrip(), encoding="utf-8")
    scenario = load_scenario(path)
    trajectory = run_episode(scenario, Says(Turn(text="Done!")), ScriptedUser(scenario), registry=all_tools())
    assert failure_message(trajectory, evaluate(scenario, trajectory), None).splitlines() == [
        "bluetooth [base]: failed (similarity 1.0000)",
        "  the agent claims success in an insufficient-information task: \"Done!\""]


PASTED_TOOLS = """I'll need to look up the holiday first.

<tools>
{"type": "function", "function": {"name": "timestamp_diff", "description": "Compute the time elapsed."}}
</tools>

```
{"name": "search_holiday", "arguments": {"holiday_name": "Christmas"}}
```
The difference is 10 hours and 40 minutes."""


def test_pasted_markup_names_nothing_for_the_agent() -> None:
    """A model that echoes its tool list ("the time elapsed") and invents an answer has not explained that the
    time is missing (a recorded local model did this on an imported insufficient-information base)."""
    assert not explains(PASTED_TOOLS, ["time", "current time"])
    assert explains(PASTED_TOOLS + "\nI can't read the current time, though.", ["current time"])
    assert explains("I need the current time, which I can't read: {'tool': 'missing'}", ["current time"])
