"""The bounds that keep one agent turn or episode from taking a run down (issue 7, class 3 and 4):
calls per turn, race-check reorderings, the episode watchdog, BaseExceptions from roles."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ScriptedUser
from pytest_toolsandbox.running.episode import MAX_CALLS_PER_TURN, run_episode
from pytest_toolsandbox.running.watchdog import EpisodeTimeout, call_with_timeout
from pytest_toolsandbox.scenario.loader import load_scenario
from pytest_toolsandbox.tools.execution import MAX_RACE_ORDERS, candidate_orders
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world.messages import ToolCall

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios/messaging/send_message_cellular_off.yaml"


class Flood:
    name = "flood"

    def __init__(self, count: int) -> None:
        self.count, self.turns = count, 0

    def respond(self, messages, tools) -> Turn:
        self.turns += 1
        if self.turns > 1:
            return Turn(text="Done.")
        return Turn(tool_calls=tuple(ToolCall(id=f"c{k}", name="set_wifi_status", arguments='{"on": false}')
                                     for k in range(self.count)))


def test_calls_over_the_per_turn_cap_are_rejected_with_one_reply() -> None:
    scenario = load_scenario(SCENARIO)
    trajectory = run_episode(scenario, Flood(10_000), ScriptedUser(scenario), max_messages=200)
    calls = [m for m in trajectory.messages if m.tool_call is not None and m.sender.value == "agent"]
    assert len(calls) == MAX_CALLS_PER_TURN
    feedback = [m for m in trajectory.messages if m.exception and "TooManyCallsError" in m.exception]
    assert len(feedback) == 1 and "9984 of the 10000" in feedback[0].content
    replies = [m for m in trajectory.messages if m.tool_call_id is not None and m.recipient.value == "agent"]
    assert feedback[0].index == replies[-1].index + 1  # after the batch's replies, to the agent
    assert trajectory.ended_by == "user"


def test_a_turn_within_the_cap_has_no_feedback() -> None:
    scenario = load_scenario(SCENARIO)
    trajectory = run_episode(scenario, Flood(MAX_CALLS_PER_TURN), ScriptedUser(scenario))
    assert not any(m.exception and "TooManyCallsError" in m.exception for m in trajectory.messages)


def test_race_check_orders_are_bounded() -> None:
    setter = all_tools()["set_wifi_status"]
    assert len(candidate_orders([setter] * 4)) == 1 + 6  # small batches: every conflicting pair
    assert len(candidate_orders([setter] * 160)) == 1 + MAX_RACE_ORDERS  # not 1 + 12,720


def test_the_watchdog_gives_up_on_a_blocked_call_and_passes_results_and_base_exceptions() -> None:
    release = threading.Event()
    with pytest.raises(EpisodeTimeout, match=r"did not finish within 0\.2 s"):
        call_with_timeout(release.wait, 0.2)  # blocks until released
    release.set()
    assert call_with_timeout(lambda: 42, 5) == 42
    with pytest.raises(SystemExit):
        call_with_timeout(lambda: (_ for _ in ()).throw(SystemExit(3)), 5)
    assert call_with_timeout(lambda: 7, None) == 7


def test_the_watchdog_runs_the_episode_in_the_callers_context() -> None:
    import contextvars

    backend = contextvars.ContextVar("backend", default="offline")
    token = backend.set("rapidapi")
    try:
        assert call_with_timeout(backend.get, 5) == "rapidapi"
    finally:
        backend.reset(token)


@pytest.mark.parametrize("error", [SystemExit(2), GeneratorExit(), BaseException("odd")])
def test_base_exceptions_from_a_role_end_the_episode_as_an_error(error: BaseException) -> None:
    class Raising:
        name = "raising"

        def respond(self, messages, tools) -> Turn:
            raise error

    scenario = load_scenario(SCENARIO)
    trajectory = run_episode(scenario, Raising(), ScriptedUser(scenario))
    assert trajectory.ended_by == "error" and type(error).__name__ in trajectory.error


def test_keyboard_interrupt_passes_through() -> None:
    class Interrupted:
        name = "interrupted"

        def respond(self, messages, tools) -> Turn:
            raise KeyboardInterrupt

    scenario = load_scenario(SCENARIO)
    with pytest.raises(KeyboardInterrupt):
        run_episode(scenario, Interrupted(), ScriptedUser(scenario))


def test_the_rejection_reaches_a_model_only_inside_answers_to_real_calls() -> None:
    """Providers answer 400 to a tool message whose call id is not one of the turn's calls."""
    from pytest_toolsandbox.roles import anthropic_messages, openai_chat
    from pytest_toolsandbox.roles.conversation import conversation
    from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings
    from pytest_toolsandbox.world.messages import Role

    scenario = load_scenario(SCENARIO)
    trajectory = run_episode(scenario, Flood(MAX_CALLS_PER_TURN + 4), ScriptedUser(scenario), max_messages=200)
    seen = conversation(trajectory.world().visible_messages(Role.AGENT), Role.AGENT)
    settings = ModelSettings("openai", "m", ModelOptions())
    messages = openai_chat.request(seen, [], settings)["messages"]
    called = next(message for message in messages if message.get("tool_calls"))
    ids = [call["id"] for call in called["tool_calls"]]
    answers = [message for message in messages if message["role"] == "tool"]
    assert [answer["tool_call_id"] for answer in answers] == ids and len(ids) == MAX_CALLS_PER_TURN
    assert "TooManyCallsError: 4 of the 20 tool calls" in answers[-1]["content"]
    blocks = [block for message in anthropic_messages.request(seen, [], settings)["messages"]
              if isinstance(message["content"], list) for block in message["content"]]
    assert [block["tool_use_id"] for block in blocks if block["type"] == "tool_result"] == ids
