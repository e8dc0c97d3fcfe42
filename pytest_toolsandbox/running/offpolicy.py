"""Off-policy evaluation (ToolTalk style), `--user=reference-history`.

The reference dialogue is played on the main world by the reference agent and the scripted user.
At every user turn the agent under test gets the reference history so far, on a fork of the world,
and acts until it answers the user (or `turn_cap` messages pass). Its calls for that turn are
scored against the reference's successful calls of the same turn (precision, recall, incorrect-
action rate, success); the dialogue then continues from the reference history, so one bad turn does
not spoil the next. The item's score is the share of successful turns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_toolsandbox.evaluation.calls import AgentCall, agent_calls
from pytest_toolsandbox.evaluation.ground_truth import ReferenceCall, ground_truth_metrics
from pytest_toolsandbox.evaluation.result import Evaluation, GroundTruthMetrics
from pytest_toolsandbox.roles.base import Agent
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
from pytest_toolsandbox.running.episode import _post_turn
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.tools.augment import tools_for
from pytest_toolsandbox.tools.errors import describe_exception
from pytest_toolsandbox.tools.execution import ExecutionEnvironment, Toolbox
from pytest_toolsandbox.tools.registry import ToolSpec, all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.trajectory import EndReason, Trajectory
from pytest_toolsandbox.world.world import World

OFF_POLICY_USER = "reference-history"


@dataclass(frozen=True)
class TurnOutcome:
    """What the agent did at one user turn, and how it compares with the reference's calls."""

    user_index: int
    calls: tuple[str, ...]
    answer: str | None
    metrics: GroundTruthMetrics

    def as_json(self) -> dict[str, Any]:
        return {"user_index": self.user_index, "calls": list(self.calls), "answer": self.answer,
                **self.metrics.model_dump(mode="json")}


@dataclass
class _Attempt:
    user_index: int
    predictions: list[AgentCall]
    calls: tuple[str, ...]
    answer: str | None


@dataclass
class OffPolicyEpisode:
    """A no-argument episode runner (like `run_episode`); `turns` holds the per-turn results after it ran."""

    scenario: Scenario
    agent: Agent
    variant: str = "base"
    registry: Mapping[str, ToolSpec] | None = None
    max_messages: int | None = None
    world: World | None = None
    turn_cap: int = 20
    turns: list[TurnOutcome] = field(default_factory=list)

    def __call__(self) -> Trajectory:
        registry = self.registry if self.registry is not None else all_tools()
        world = self.world if self.world is not None else build_world(self.scenario)
        agent_tools = tools_for(Role.AGENT, self.scenario, registry, self.variant)
        user_tools = tools_for(Role.USER, self.scenario, registry, self.variant)
        environment = ExecutionEnvironment({Role.AGENT: Toolbox(agent_tools, registry),
                                            Role.USER: Toolbox(user_tools, registry)})
        reference, user = ReferenceAgent(self.scenario), ScriptedUser(self.scenario)
        cap = self.max_messages if self.max_messages is not None else self.scenario.max_messages
        start, attempts = len(world.messages), []
        ended_by: EndReason = "max_messages"
        error = None
        try:
            while world.active and len(world.messages) - start < cap:
                last = world.messages[-1]
                if last.recipient is Role.EXECUTION_ENVIRONMENT:
                    environment.respond(world)
                elif last.recipient is Role.AGENT:
                    if last.sender is Role.USER:
                        attempts.append(self._attempt(world, agent_tools, environment))
                    _post_turn(world, Role.AGENT, Role.USER,
                               reference.respond(world.visible_messages(Role.AGENT), agent_tools))
                elif last.recipient is Role.USER:
                    offered = user_tools if last.sender is Role.AGENT else ()
                    _post_turn(world, Role.USER, Role.AGENT, user.respond(world.visible_messages(Role.USER), offered))
                else:
                    break
            if not world.active:
                ended_by = "user"
        except Exception as failure:  # the agent under test (or a role) crashed: infrastructure error
            ended_by, error = "error", describe_exception(failure)
        trajectory = self._capture(world, agent_tools, ended_by, error)
        self.turns = self._score(trajectory, attempts, registry)
        return trajectory

    def _capture(self, world: World, tools: list[OfferedTool], ended_by: EndReason, error: str | None) -> Trajectory:
        return Trajectory.capture(
            world, scenario=self.scenario.name, scenario_path=self.scenario.path, variant=self.variant,
            agent=getattr(self.agent, "name", type(self.agent).__name__), user=OFF_POLICY_USER,
            tools=[{"name": tool.name, "tool": tool.tool} for tool in tools], ended_by=ended_by, error=error)

    def _attempt(self, world: World, tools: list[OfferedTool], environment: ExecutionEnvironment) -> _Attempt:
        """The agent under test acts on a fork of the world until it answers the user."""
        fork, user_index = world.fork(), len(world.messages) - 1
        answer = None
        while len(fork.messages) - user_index <= self.turn_cap:
            last = fork.messages[-1]
            if last.recipient is Role.EXECUTION_ENVIRONMENT:
                environment.respond(fork)
            elif last.recipient is Role.AGENT:
                _post_turn(fork, Role.AGENT, Role.USER, self.agent.respond(fork.visible_messages(Role.AGENT), tools))
            else:
                answer = last.content
                break
        played = self._capture(fork, tools, "max_messages", None)
        mine = [call for call in agent_calls(played) if call.index > user_index]
        rendered = tuple(played.messages[call.index].content for call in mine)
        return _Attempt(user_index, mine, rendered, answer)

    @staticmethod
    def _score(reference: Trajectory, attempts: list[_Attempt],
               registry: Mapping[str, ToolSpec]) -> list[TurnOutcome]:
        truths = agent_calls(reference)
        bounds = [attempt.user_index for attempt in attempts] + [len(reference.messages)]
        outcomes = []
        for attempt, end in zip(attempts, bounds[1:], strict=True):
            turn_truths = [ReferenceCall(call.tool, json.loads(call.raw_arguments or "{}"), call.trace.result)
                           for call in truths if attempt.user_index < call.index < end
                           and call.succeeded and call.tool is not None and call.trace is not None]
            metrics = ground_truth_metrics(attempt.predictions, turn_truths, registry)
            outcomes.append(TurnOutcome(attempt.user_index, attempt.calls, attempt.answer, metrics))
        return outcomes

    def evaluation(self) -> Evaluation:
        """Score = share of successful turns; `ground_truth` pools every turn's calls."""
        turns = self.turns
        success = sum(turn.metrics.success for turn in turns) / len(turns) if turns else 0.0
        matched = sum(turn.metrics.matched_calls for turn in turns)
        predicted = sum(turn.metrics.predicted_calls for turn in turns)
        reference = sum(turn.metrics.reference_calls for turn in turns)
        pooled = GroundTruthMetrics(
            precision=matched / predicted if predicted else 1.0, recall=matched / reference if reference else 1.0,
            incorrect_action_rate=(sum(turn.metrics.incorrect_action_rate for turn in turns) / len(turns)
                                   if turns else 0.0),
            success=bool(turns) and all(turn.metrics.success for turn in turns),
            matched_calls=matched, predicted_calls=predicted, reference_calls=reference)
        return Evaluation(score=success, milestone_similarity=success, minefield_similarity=0.0, milestones=[],
                          minefields=[], turn_count=len(turns), ground_truth=pooled)

    def as_json(self) -> dict[str, Any]:
        """The `off_policy` field of the item's summary record."""
        pooled = self.evaluation().ground_truth
        return {"turns": [turn.as_json() for turn in self.turns],
                "success_rate": self.evaluation().score, **(pooled.model_dump(mode="json") if pooled else {})}
