"""The LLM user simulator on scripted model outputs: prompt, role reversal, end_conversation, guard."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from pytest_toolsandbox.roles.llm_agent import LLMAgent
from pytest_toolsandbox.roles.llm_user import LLMUser
from pytest_toolsandbox.roles.model_client import ModelClient
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings
from pytest_toolsandbox.roles.simulator_guard import ended_early, invented_facts, suspicions
from pytest_toolsandbox.roles.simulator_prompt import DEMONSTRATIONS, ROLE_REVERSAL
from pytest_toolsandbox.running.episode import run_episode, tools_for
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world.messages import Message, Role
from tests.llm_server import CHAT, MESSAGES, ScriptedServer, anthropic_text, openai_calls, openai_text
from tests.support import shipped_scenario

SCENARIO = shipped_scenario("scenarios/messaging/send_message_cellular_off.yaml")


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


def client(server: ScriptedServer, provider: str) -> ModelClient:
    base = server.url + ("/v1" if provider == "openai" else "")
    return ModelClient(ModelSettings(provider, "sim-model", ModelOptions(base_url=base)))


def start() -> list[Message]:
    """The bus after the first agent reply: the user's view starts with its own first message."""
    world = build_world(SCENARIO)
    world.post(sender=Role.AGENT, recipient=Role.USER, content="What is Fredrik's number?")
    return world.visible_messages(Role.USER)


def user_tools():
    return tools_for(Role.USER, SCENARIO, all_tools(), "base")


def test_prompt_holds_goal_knowledge_reversal_and_demonstrations(server: ScriptedServer) -> None:
    prompt = LLMUser(client(server, "openai"), SCENARIO, "gpt-4o").prompt(start())
    assert SCENARIO.user.goal in prompt.system and SCENARIO.user.knowledge in prompt.system
    assert ROLE_REVERSAL in prompt.system and DEMONSTRATIONS in prompt.system
    assert prompt.system.index(SCENARIO.user.goal) < prompt.system.index(ROLE_REVERSAL)
    assert [(entry.text, entry.mine) for entry in prompt.entries] == [
        (SCENARIO.user.first_message, True), ("What is Fredrik's number?", False)]


def test_roles_are_reversed_on_the_wire(server: ScriptedServer) -> None:
    server.push(MESSAGES, anthropic_text("no idea, check my contacts"))
    user = LLMUser(client(server, "anthropic"), SCENARIO, "claude")
    assert user.respond(start(), user_tools()).text == "no idea, check my contacts"
    sent = server.bodies(MESSAGES)[0]
    assert [(m["role"], m["content"][0]["text"]) for m in sent["messages"]] == [
        ("user", "(The conversation begins.)"), ("assistant", SCENARIO.user.first_message),
        ("user", "What is Fredrik's number?")]
    assert [tool["name"] for tool in sent["tools"]] == ["end_conversation"]
    assert "Fredrik Thordendal" in sent["system"]


def test_end_conversation_structured_or_written_ends_the_dialogue(server: ScriptedServer) -> None:
    server.push(CHAT, openai_calls(("x", "end_conversation", {})),
                openai_text('<tool_call>{"name": "end_conversation", "arguments": {}}</tool_call>'),
                openai_text('{"name": "end_conversation", "arguments": {}}'),
                openai_calls(("y", "send_message_with_phone_number", {"phone_number": "1"})))
    user = LLMUser(client(server, "openai"), SCENARIO, "gpt-4o")
    for _ in range(3):  # structured, tagged, bare
        turn = user.respond(start(), user_tools())
        assert [call.name for call in turn.tool_calls] == ["end_conversation"] and turn.text is None
    assert user.respond(start(), user_tools()).tool_calls == ()  # any other tool is not the user's to call
    assert [m["role"] for m in server.bodies(CHAT)[0]["messages"]] == ["system", "assistant", "user"]


def test_simulator_and_model_agent_play_an_episode(server: ScriptedServer) -> None:
    server.push(CHAT, openai_calls(("a", "search_contacts", {"name": "Fredrik Thordendal"})),
                openai_text("Done, message sent."), openai_calls(("e", "end_conversation", {})))
    agent = LLMAgent(client(server, "openai"), "openai:sim-model")
    trajectory = run_episode(SCENARIO, agent, LLMUser(client(server, "openai"), SCENARIO, "openai:sim-model"))
    assert trajectory.ended_by == "user" and trajectory.messages[-1].tool_trace.tool == "end_conversation"
    user_request = server.bodies(CHAT)[2]
    assert user_request["messages"][-1] == {"role": "user", "content": "Done, message sent."}
    assert [tool["function"]["name"] for tool in user_request["tools"]] == ["end_conversation"]
    assert "search_contacts" not in json.dumps(user_request)  # the agent's calls are not the user's to see


def said(*lines: tuple[Role, str]) -> list[Message]:
    return [Message(index=i, sender=sender, recipient=Role.AGENT if sender is Role.USER else Role.USER, content=text)
            for i, (sender, text) in enumerate(lines)]


def test_guard_flags_a_hang_up_before_the_agent_claimed_completion() -> None:
    stuck = said((Role.USER, "text Fredrik"), (Role.AGENT, "Let me look for his number."))
    finished = said((Role.USER, "text Fredrik"), (Role.AGENT, "Your message has been sent."))
    assert ended_early(stuck, milestones_met=False, ended_by_user=True)
    assert not ended_early(finished, milestones_met=False, ended_by_user=True)
    assert not ended_early(stuck, milestones_met=True, ended_by_user=True)
    assert not ended_early(stuck, milestones_met=False, ended_by_user=False)


def test_guard_flags_facts_outside_the_knowledge_boundary() -> None:
    invented = said((Role.USER, "text Fredrik"), (Role.AGENT, "What is his number?"),
                    (Role.USER, "it's +1 555 010 7788, and cc Maria Lopez on May 3rd"))
    assert invented_facts(SCENARIO, invented) == ["+1 555 010 7788", "May 3rd", "Maria Lopez"]
    told = said((Role.USER, "text Fredrik"), (Role.AGENT, "I found +1 555 010 7788 for Fredrik Thordendal."),
                (Role.USER, "Yes, +1 555 010 7788 is Fredrik Thordendal's number."))
    assert invented_facts(SCENARIO, told) == []
    reasons = suspicions(SCENARIO, invented, milestones_met=False, ended_by_user=True)
    assert [reason.split(":")[0] for reason in reasons] == ["ended_early", "invented_fact"]
