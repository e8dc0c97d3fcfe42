"""Trajectory.to_json: canonical bytes, whether snapshots come from a live world (text reused per
frame) or from a file (dumped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import load_scenario
from pytest_toolsandbox.world.trajectory import Trajectory
from tests.support import SHIPPED_SCENARIOS

SCENARIOS = SHIPPED_SCENARIOS


def canonical(trajectory: Trajectory) -> str:
    return json.dumps(trajectory.model_dump(mode="json"), ensure_ascii=False, sort_keys=True,
                      separators=(",", ":"), allow_nan=False) + "\n"


@pytest.mark.parametrize("path", SCENARIOS[::5], ids=lambda path: path.stem)
def test_captured_and_loaded_trajectories_serialise_to_the_canonical_bytes(path: Path) -> None:
    scenario = load_scenario(path)
    played = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario))
    text = played.to_json()
    assert text == canonical(played)
    again = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario))
    assert again.to_json() == text  # the second item of a scenario reuses the frames' text
    loaded = Trajectory.from_json(text)
    assert loaded == played and loaded.to_json() == text


def test_non_ascii_agent_text_serialises_canonically() -> None:
    class Agent:
        name = "unicode"

        def __init__(self) -> None:
            self.turns = 0

        def respond(self, messages, tools) -> Turn:
            self.turns += 1
            return Turn(text="Ça marche — 完成 ✅ \"quoted\" \\ back\nslash")

    scenario = load_scenario(next(path for path in SCENARIOS if path.stem == "send_message_cellular_off"))
    played = run_episode(scenario, Agent(), ScriptedUser(scenario))
    assert "完成" in played.to_json() and played.to_json() == canonical(played)
