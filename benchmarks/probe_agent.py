"""An agent that plays a scenario's reference dialogue with its final text reply swapped.

`benchmarks/probe_verdicts.py` runs pytest with `--agent benchmarks.probe_agent:SwapFinalReply` to
ask whether the verdict accepts answers nobody wrote into the scenario files: the tool calls stay the
reference's, so only the final answer's wording and facts differ. The replies come from the JSON file
named by `PROBE_REPLIES` (scenario path relative to the repository root → reply); a scenario without
an entry plays the reference unchanged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ReferenceAgent
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message

REPLIES_VARIABLE = "PROBE_REPLIES"
ROOT = Path(__file__).resolve().parent.parent


def replies() -> dict[str, str]:
    """The swap table; read per agent so each pytest run takes the file its caller wrote."""
    source = os.environ.get(REPLIES_VARIABLE)
    if not source:
        return {}
    return json.loads(Path(source).read_text(encoding="utf-8"))


def scenario_key(path: str | Path) -> str:
    """A scenario's key in the swap table: its path relative to the repository root, with slashes."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(ROOT).as_posix()
    except ValueError:
        return resolved.as_posix()


class SwapFinalReply(ReferenceAgent):
    """The reference agent, except that its last scripted text reply is the probe's."""

    name = "probe"

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario)
        self.reply = replies().get(scenario_key(scenario.path))

    def respond(self, messages: Sequence[Message], tools: Sequence[OfferedTool]) -> Turn:
        turn = super().respond(messages, tools)
        last = self.position == len(self.steps)
        return Turn(text=self.reply) if last and turn.text is not None and self.reply else turn
