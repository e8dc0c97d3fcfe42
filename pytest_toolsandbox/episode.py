"""The orchestrator: user, agent and execution environment talk over the message bus.

The next speaker is always the recipient of the last message. The episode ends when the user calls
end_conversation, when `max_messages` new messages have been posted, or when a role fails (the
error is kept on the trajectory, never raised: an infrastructure failure is not an agent failure).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_toolsandbox.roles.base import Agent, Turn, User, render_call
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.tools.augment import offered_tools
from pytest_toolsandbox.tools.errors import describe_exception
from pytest_toolsandbox.tools.execution import ExecutionEnvironment, Toolbox
from pytest_toolsandbox.tools.registry import ToolSpec, all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.trajectory import EndReason, Trajectory
from pytest_toolsandbox.world.world import World


def tools_for(role: Role, scenario: Scenario, registry: Mapping[str, ToolSpec], variant: str) -> list[OfferedTool]:
    """The tools a role is offered in this scenario variant."""
    visible = {name: spec for name, spec in registry.items() if spec.visible_to is role}
    allowed = [name for name in scenario.tools if name in visible]
    if role is Role.USER:
        return [OfferedTool.from_spec(spec) for spec in visible.values()]
    user_tools = [name for name, spec in registry.items() if spec.visible_to is Role.USER]
    return offered_tools(allowed, visible, variant=variant, denied=scenario.deny, similar_to=user_tools)


def _post_turn(world: World, speaker: Role, listener: Role, turn: Turn) -> None:
    if turn.tool_calls:
        for call in turn.tool_calls:
            world.post(sender=speaker, recipient=Role.EXECUTION_ENVIRONMENT, content=render_call(call),
                       tool_call=call)
    else:
        world.post(sender=speaker, recipient=listener, content=turn.text or "")


def run_episode(
    scenario: Scenario,
    agent: Agent,
    user: User,
    variant: str = "base",
    registry: Mapping[str, ToolSpec] | None = None,
    max_messages: int | None = None,
    world: World | None = None,
) -> Trajectory:
    """Play one episode of `scenario` and return its trajectory.

    `world` is the starting world (default: `build_world(scenario)`); pass a modified one to run a
    scenario from a different state.
    """
    registry = registry if registry is not None else all_tools()
    world = world if world is not None else build_world(scenario)
    agent_tools = tools_for(Role.AGENT, scenario, registry, variant)
    user_tools = tools_for(Role.USER, scenario, registry, variant)
    environment = ExecutionEnvironment({Role.AGENT: Toolbox(agent_tools, registry),
                                        Role.USER: Toolbox(user_tools, registry)})
    cap = max_messages if max_messages is not None else scenario.max_messages
    start = len(world.messages)
    ended_by: EndReason = "max_messages"
    error = None
    try:
        while world.active and len(world.messages) - start < cap:
            last = world.messages[-1]
            speaker = last.recipient
            if speaker is Role.EXECUTION_ENVIRONMENT:
                environment.respond(world)
            elif speaker is Role.AGENT:
                _post_turn(world, Role.AGENT, Role.USER,
                           agent.respond(world.visible_messages(Role.AGENT), agent_tools))
            elif speaker is Role.USER:
                offered: Sequence[OfferedTool] = user_tools if last.sender is Role.AGENT else ()
                _post_turn(world, Role.USER, Role.AGENT, user.respond(world.visible_messages(Role.USER), offered))
            else:
                break
        if not world.active:
            ended_by = "user"
    except Exception as failure:  # a role crashed: keep everything played so far
        ended_by, error = "error", describe_exception(failure)
    return Trajectory.capture(
        world, scenario=scenario.name, scenario_path=scenario.path, variant=variant,
        agent=getattr(agent, "name", type(agent).__name__), user=getattr(user, "name", type(user).__name__),
        tools=[{"name": tool.name, "tool": tool.tool} for tool in agent_tools],
        ended_by=ended_by, error=error,
    )
