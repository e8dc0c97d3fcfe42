"""Shared material for the scoring tests: a scripted agent and helpers to play crafted episodes."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import load_scenario, parse_scenario, read_yaml
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, ToolCall
from pytest_toolsandbox.world.trajectory import Trajectory

ROOT = Path(__file__).resolve().parents[1]
SEED_SCENARIO = ROOT / "scenarios" / "messaging" / "send_message_cellular_off.yaml"
DATA = Path(__file__).resolve().parent / "data" / "scoring"
SEED_ANSWER = "Message has been successfully sent to Fredrik Thordendal asking: \"How's the new album coming along.\""
ALBUM = "How's the new album coming along"
FREDRIK = "+12453344098"

_ids = itertools.count(1)


def call(tool: str, arguments: str | None = None, **kwargs: Any) -> ToolCall:
    """A tool call; `arguments` gives raw JSON text (for malformed calls), else kwargs are encoded."""
    return ToolCall(id=f"call_{next(_ids)}", name=tool, arguments=arguments if arguments is not None
                    else json.dumps(kwargs))


def calls(*tool_calls: ToolCall) -> Turn:
    return Turn(tool_calls=tuple(tool_calls))


def say(text: str) -> Turn:
    return Turn(text=text)


class ScriptAgent:
    """Plays a fixed list of turns whatever the replies say (a hand-written trajectory)."""

    name = "script"

    def __init__(self, turns: Sequence[Turn | ToolCall]) -> None:
        self.turns = [calls(turn) if isinstance(turn, ToolCall) else turn for turn in turns]

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        return self.turns.pop(0) if self.turns else Turn(text="Is there anything else?")


def scenario(text: str, name: str = "crafted") -> Scenario:
    """A scenario from YAML text, as if stored at scenarios/crafted/<name>.yaml."""
    return parse_scenario(read_yaml(text), Path(f"scenarios/crafted/{name}.yaml"))


def seed_scenario() -> Scenario:
    return load_scenario(SEED_SCENARIO)


def play(scenario: Scenario, turns: Sequence[Turn | ToolCall], **options: Any) -> Trajectory:
    """The episode of a scripted agent against the scenario's scripted user."""
    return run_episode(scenario, ScriptAgent(turns), ScriptedUser(scenario), **options)


def seed_turns(answer: str = SEED_ANSWER) -> list[Turn | ToolCall]:
    """The seed README trajectory: search, failing send, cellular on, send, answer."""
    return [
        call("search_contacts", name="Fredrik Thordendal"),
        call("send_message_with_phone_number", phone_number=FREDRIK, content=ALBUM),
        call("set_cellular_service_status", on=True),
        call("send_message_with_phone_number", phone_number=FREDRIK, content=ALBUM),
        say(answer),
    ]
