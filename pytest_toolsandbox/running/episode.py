"""The orchestrator: user, agent and execution environment talk over the message bus.

The next speaker is always the recipient of the last message. The episode ends when the user calls
end_conversation, when `max_messages` new messages have been posted, when a role fails (the
error is kept on the trajectory, never raised: an infrastructure failure is not an agent failure), or,
under the reference's rules, at a call its agent would have crashed on (evaluation/rules.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_toolsandbox.basics.surrogates import encodable, encodable_json
from pytest_toolsandbox.evaluation.rules import REFERENCE, crash_reason
from pytest_toolsandbox.roles.base import Agent, Turn, User, render_call, role_name
from pytest_toolsandbox.running.interruption import checkpoint
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.tools.augment import tools_for
from pytest_toolsandbox.tools.errors import describe_exception
from pytest_toolsandbox.tools.execution import ExecutionEnvironment, Toolbox
from pytest_toolsandbox.tools.registry import ToolSpec, all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Role, ToolCall
from pytest_toolsandbox.world.trajectory import EndReason, Trajectory
from pytest_toolsandbox.world.world import World

MAX_CALLS_PER_TURN = 16
"""Parallel tool calls accepted in one turn; the rest are rejected with feedback. Every accepted call
becomes messages that scoring compares pairwise, so one turn of 10,000 calls would cost gigabytes."""


def _encodable_call(call: ToolCall) -> ToolCall:
    """`call` without lone surrogates in any of its texts (basics/surrogates.py); the same object when it
    has none, as nearly every call."""
    fields = {"id": encodable(call.id), "name": encodable(call.name), "arguments": encodable_json(call.arguments),
              "format_error": encodable(call.format_error) if call.format_error is not None else None}
    changed = {name: value for name, value in fields.items() if value is not getattr(call, name)}
    return call.model_copy(update=changed) if changed else call


def _post_turn(world: World, speaker: Role, listener: Role, turn: Turn) -> str | None:
    """Post a turn, its texts made encodable (a lone surrogate in a reply would break the next request);
    returns the feedback for calls over the per-turn cap (None when all were taken)."""
    calls = tuple(turn.tool_calls or ())
    if calls:
        for call in map(_encodable_call, calls[:MAX_CALLS_PER_TURN]):
            world.post(sender=speaker, recipient=Role.EXECUTION_ENVIRONMENT, content=render_call(call),
                       tool_call=call)
        if len(calls) > MAX_CALLS_PER_TURN:
            return (f"TooManyCallsError: {len(calls) - MAX_CALLS_PER_TURN} of the {len(calls)} tool calls of "
                    f"that turn were rejected: at most {MAX_CALLS_PER_TURN} calls are executed per turn. "
                    "Send the remaining calls in a later turn.")
        return None
    world.post(sender=speaker, recipient=listener, content=encodable(turn.text) if isinstance(turn.text, str) else "")
    return None


def run_episode(
    scenario: Scenario,
    agent: Agent,
    user: User,
    variant: str = "base",
    registry: Mapping[str, ToolSpec] | None = None,
    max_messages: int | None = None,
    world: World | None = None,
    passthrough: tuple[type[BaseException], ...] = (KeyboardInterrupt,),
    rules: str = "ours",
) -> Trajectory:
    """Play one episode of `scenario` and return its trajectory.

    `world` is the starting world (default: `build_world(scenario)`); pass a modified one to run a
    scenario from a different state. Anything a role raises ends the episode as an error kept on the
    trajectory — BaseExceptions such as SystemExit or GeneratorExit included, since a role is not
    allowed to end the run — except the `passthrough` types (Ctrl-C; the test runner adds its own
    outcome exceptions such as skip), which keep their meaning. Under `rules="reference"` a call the
    reference's agent could not have made (a tool not offered, arguments that are not JSON) ends the
    episode as a `crash`, unanswered.
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
    rejected: str | None = None  # feedback on calls over the per-turn cap, posted after the replies
    try:
        while world.active and len(world.messages) - start < cap:
            checkpoint()  # a cancelled or timed-out episode stops here
            last = world.messages[-1]
            speaker = last.recipient
            if speaker is Role.EXECUTION_ENVIRONMENT:
                caller = last.sender
                environment.respond(world)
                if rejected is not None:
                    world.post(sender=Role.EXECUTION_ENVIRONMENT, recipient=caller, content=rejected,
                               exception=rejected)
                    rejected = None
            elif speaker is Role.AGENT:
                posted = len(world.messages)
                rejected = _post_turn(world, Role.AGENT, Role.USER,
                                      agent.respond(world.visible_messages(Role.AGENT), agent_tools))
                if rules == REFERENCE and (crash := crash_reason(environment.toolboxes[Role.AGENT].specs,
                                                                 world.messages[posted:])):
                    ended_by, error = "crash", crash[1]
                    break
            elif speaker is Role.USER:
                offered: Sequence[OfferedTool] = user_tools if last.sender is Role.AGENT else ()
                rejected = _post_turn(world, Role.USER, Role.AGENT,
                                      user.respond(world.visible_messages(Role.USER), offered))
            else:
                break
        if not world.active:
            ended_by = "user"
    except passthrough:
        raise
    except BaseException as failure:  # a role crashed: keep everything played so far
        ended_by, error = "error", describe_exception(failure)
    return Trajectory.capture(
        world, scenario=scenario.name, scenario_path=scenario.path, variant=variant,
        agent=role_name(agent, type(agent).__name__), user=role_name(user, type(user).__name__),
        tools=[{"name": tool.name, "tool": tool.tool} for tool in agent_tools],
        ended_by=ended_by, error=error,
    )
