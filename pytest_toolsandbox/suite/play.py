"""Playing a scenario with the model-free roles, the way both validate and the digest worker need it."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser, UnhelpfulAgent
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.reference import ReferenceStep
from pytest_toolsandbox.tools.registry import ToolSpec
from pytest_toolsandbox.world.trajectory import Trajectory
from pytest_toolsandbox.world.world import World


def play_reference(scenario: Scenario, registry: Mapping[str, ToolSpec], variant: str = "base",
                   reference: Sequence[ReferenceStep] | None = None, start: World | None = None,
                   rules: str = "ours") -> Trajectory:
    """The reference agent and the scripted user play the scenario (optionally a reduced reference).

    `start` is the scenario's starting world, built once and forked per episode (building it is a
    large part of a short episode's cost); None builds it afresh. `rules`: see evaluation/rules.py.
    """
    if reference is not None:
        scenario = scenario.model_copy(update={"reference": list(reference)})
    return run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario), variant=variant,
                       registry=registry, world=start.fork() if start is not None else None, rules=rules)


def play_unhelpful(scenario: Scenario, registry: Mapping[str, ToolSpec], start: World | None = None) -> Trajectory:
    """The always-declining agent against the scripted user (tools do not matter: it never calls one)."""
    return run_episode(scenario, UnhelpfulAgent(), ScriptedUser(scenario), registry=registry,
                       world=start.fork() if start is not None else None)


@dataclass(frozen=True)
class Digest:
    """A fingerprint of a trajectory: the whole canonical JSON, and each message on its own so that a
    difference can be located without shipping whole trajectories between processes."""

    sha256: str
    messages: tuple[str, ...]

    def first_difference(self, other: Digest) -> int | None:
        """The first message index where the two differ (None: same messages, so the snapshots differ)."""
        for index, (mine, theirs) in enumerate(zip(self.messages, other.messages, strict=False)):
            if mine != theirs:
                return index
        return None if len(self.messages) == len(other.messages) else min(len(self.messages), len(other.messages))


def digest(trajectory: Trajectory) -> Digest:
    messages = tuple(hashlib.sha256(message.model_dump_json().encode()).hexdigest()[:16]
                     for message in trajectory.messages)
    return Digest(hashlib.sha256(trajectory.to_json().encode()).hexdigest(), messages)
