"""Model agents through the real openai and anthropic SDKs against the loopback scripted server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.roles.llm_agent import LLMAgent
from pytest_toolsandbox.roles.model_catalog import resolve_family
from pytest_toolsandbox.roles.model_client import ModelClient, ModelError
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings, parse_model_spec
from pytest_toolsandbox.roles.retry import RetryPolicy
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Message, Role, ToolCall
from tests.llm_server import (
    CHAT,
    MESSAGES,
    ScriptedServer,
    anthropic_calls,
    error,
    openai_calls,
    openai_text,
)
from tests.support import shipped_scenario

SCENARIO = shipped_scenario("scenarios/messaging/send_message_cellular_off.yaml")
PHONE = "+12453344098"
CONTENT = "How's the new album coming along"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


class Sleeper:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def agent(server: ScriptedServer, provider: str = "openai", retries: int = 3,
          sleeper: Sleeper | None = None) -> LLMAgent:
    base = server.url + ("/v1" if provider == "openai" else "")
    settings = ModelSettings(provider, "test-model", ModelOptions(base_url=base, max_tokens=256))
    policy = RetryPolicy(retries=retries, base_delay=2.0, sleep=sleeper or Sleeper(), jitter=lambda: 1.0)
    return LLMAgent(ModelClient(settings, policy), name=f"{provider}:test-model")


def offered(*names: str) -> list[OfferedTool]:
    registry = all_tools()
    return [OfferedTool.from_spec(registry[name]) for name in names]


def history() -> list[Message]:
    """System prompt, user text, two parallel calls (one renamed, one failing) and their results."""
    call_a = ToolCall(id="c1", name="search_contacts", arguments='{"name": "Fredrik"}')
    call_b = ToolCall(id="c2", name="lookup_person_v2", arguments='{"phone_number": "+1"}')
    rows = [
        (Role.SYSTEM, Role.AGENT, "be helpful", {}),
        (Role.USER, Role.AGENT, "text Fredrik", {}),
        (Role.AGENT, Role.EXECUTION_ENVIRONMENT, "search_contacts(...)", {"tool_call": call_a}),
        (Role.AGENT, Role.EXECUTION_ENVIRONMENT, "lookup_person_v2(...)", {"tool_call": call_b}),
        (Role.EXECUTION_ENVIRONMENT, Role.AGENT, '[{"name": "Fredrik"}]', {"tool_call_id": "c1",
                                                                           "tool_name": "search_contacts"}),
        (Role.EXECUTION_ENVIRONMENT, Role.AGENT, "ValueError: bad number",
         {"tool_call_id": "c2", "tool_name": "lookup_person_v2", "exception": "ValueError: bad number"}),
    ]
    return [Message(index=i, sender=s, recipient=r, content=c, **extra) for i, (s, r, c, extra) in enumerate(rows)]


def test_specs_name_providers_and_models() -> None:
    sonnet = resolve_family("anthropic", "sonnet")
    assert parse_model_spec("claude") == ModelSettings("anthropic", sonnet, alias="claude")
    assert parse_model_spec("gpt-4o") == ModelSettings("openai", "gpt-4o", alias="gpt-4o")
    assert parse_model_spec("openai:qwen2.5-coder") == ModelSettings("openai", "qwen2.5-coder")
    assert parse_model_spec("anthropic:claude-x") == ModelSettings("anthropic", "claude-x")
    assert parse_model_spec("reference") is None and parse_model_spec("mypkg:Agent") is None
    with pytest.raises(ValueError, match="give a model id"):
        parse_model_spec("openai:")


def test_openai_parallel_calls_and_history_round_trip(server: ScriptedServer) -> None:
    server.push(CHAT, openai_calls(("call_x", "search_contacts", {"name": "A"}),
                                   ("call_y", "lookup_person_v2", {"phone_number": "+2"})))
    turn = agent(server).respond(history(), offered("search_contacts"))
    assert turn.text is None
    assert [(c.id, c.name, json.loads(c.arguments)) for c in turn.tool_calls] == [
        ("call_x", "search_contacts", {"name": "A"}), ("call_y", "lookup_person_v2", {"phone_number": "+2"})]
    sent = server.bodies(CHAT)[0]
    assert sent["temperature"] == 0 and sent["max_tokens"] == 256 and sent["model"] == "test-model"
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["search_contacts"]
    assert sent["messages"][0] == {"role": "system", "content": "be helpful"}
    assert sent["messages"][1] == {"role": "user", "content": "text Fredrik"}
    assert [(c["id"], c["function"]["name"]) for c in sent["messages"][2]["tool_calls"]] == [
        ("c1", "search_contacts"), ("c2", "lookup_person_v2")]
    assert sent["messages"][3:] == [
        {"role": "tool", "tool_call_id": "c1", "content": '[{"name": "Fredrik"}]'},
        {"role": "tool", "tool_call_id": "c2", "content": "ValueError: bad number"}]


def test_the_openai_adapter_posts_what_the_sdks_create_would(server: ScriptedServer) -> None:
    """`send` skips the SDK's parameter transform (most of a call's CPU) by posting the body itself;
    the server must see the same JSON and the same headers as through `chat.completions.create`."""
    from pytest_toolsandbox.roles import openai_chat
    from pytest_toolsandbox.roles.conversation import Called, Conversation, Result, Returned, Said

    server.push(CHAT, openai_text("one"), openai_text("two"))
    settings = ModelSettings("openai", "test-model", ModelOptions(base_url=server.url + "/v1", max_tokens=256))
    call = ToolCall(id="c1", name="search_contacts", arguments='{"name": "Fredrik"}')
    result = Result(call_id="c1", name="search_contacts", is_error=False,
                    content='[{"name": "Fredrik Thordendal", "city": "Umeå"}]')
    conversation = Conversation(system="be helpful", entries=(
        Said("text Fredrik", mine=False), Called((call,)), Returned((result,)),
        Said("done", mine=True), Said("thanks", mine=False)))
    body = openai_chat.request(conversation, offered(*sorted(all_tools())), settings)
    sdk = openai_chat.client(settings)
    posted = openai_chat.reply(openai_chat.send(sdk, body))
    created = openai_chat.reply(sdk.chat.completions.create(**body))
    assert (posted.text, created.text) == ("one", "two")
    first, second = (request for request in server.received if request.path == CHAT)
    assert first.body == second.body == json.loads(json.dumps(body))
    assert len(first.body["tools"]) == len(all_tools()) and first.body["messages"][3]["content"] == result.content
    assert first.headers == second.headers


def test_anthropic_blocks_alternate_and_mark_tool_errors(server: ScriptedServer) -> None:
    server.push(MESSAGES, anthropic_calls(("toolu_1", "search_contacts", {"name": "B"}),
                                          ("toolu_2", "search_contacts", {"name": "C"}), text="Looking."))
    turn = agent(server, "anthropic").respond(history(), offered("search_contacts"))
    assert [(c.id, json.loads(c.arguments)) for c in turn.tool_calls] == [("toolu_1", {"name": "B"}),
                                                                          ("toolu_2", {"name": "C"})]
    sent = server.bodies(MESSAGES)[0]
    assert sent["system"] == "be helpful" and sent["tools"][0]["name"] == "search_contacts"
    assert [message["role"] for message in sent["messages"]] == ["user", "assistant", "user"]
    assert [block["name"] for block in sent["messages"][1]["content"]] == ["search_contacts", "lookup_person_v2"]
    assert sent["messages"][1]["content"][0]["input"] == {"name": "Fredrik"}
    results = sent["messages"][2]["content"]
    assert [(r["tool_use_id"], r.get("is_error", False)) for r in results] == [("c1", False), ("c2", True)]


def test_text_only_answers_and_tool_calls_written_as_text(server: ScriptedServer) -> None:
    server.push(CHAT, openai_text("Which Fredrik do you mean?"),
                openai_text('<tool_call>{"name": "search_contacts", "arguments": {"name": "F"}}</tool_call>'),
                openai_text('Sure:\n```json\n{"name": "search_contacts", "arguments": {"name": "G"}}\n```'),
                openai_text('```json\n{"not": "a call"}\n```'))
    model = agent(server)
    tools = offered("search_contacts")
    assert model.respond(history()[:2], tools).text == "Which Fredrik do you mean?"
    first = model.respond(history()[:2], tools).tool_calls
    second = model.respond(history()[:2], tools).tool_calls
    assert [(c.name, json.loads(c.arguments)) for c in (*first, *second)] == [
        ("search_contacts", {"name": "F"}), ("search_contacts", {"name": "G"})]
    assert first[0].id != second[0].id
    assert model.respond(history()[:2], tools).text == '```json\n{"not": "a call"}\n```'
    assert model.usage == {"input_tokens": 400, "output_tokens": 80, "requests": 4, "retries": 0, "unknown_usage": 0}


def test_rate_limit_is_retried_after_the_servers_delay(server: ScriptedServer) -> None:
    sleeper = Sleeper()
    server.push(CHAT, error(429, headers={"retry-after": "7"}), error(503), openai_text("ok"))
    assert agent(server, sleeper=sleeper).respond(history()[:2], ()).text == "ok"
    assert sleeper.waits == [7.0, 4.0]  # retry-after wins; then base 2 s doubled (jitter pinned at 1)
    assert len(server.bodies(CHAT)) == 3


def test_server_error_forever_gives_up_with_an_infrastructure_error(server: ScriptedServer) -> None:
    sleeper = Sleeper()
    server.push(MESSAGES, error(500, forever=True))
    with pytest.raises(ModelError, match=r"anthropic:test-model: HTTP 500.* after 3 attempt"):
        agent(server, "anthropic", retries=2, sleeper=sleeper).respond(history()[:2], ())
    assert sleeper.waits == [2.0, 4.0] and len(server.bodies(MESSAGES)) == 3


def test_client_errors_are_not_retried(server: ScriptedServer) -> None:
    sleeper = Sleeper()
    server.push(CHAT, error(400, forever=True))
    with pytest.raises(ModelError, match=r"HTTP 400.*not retried"):
        agent(server, sleeper=sleeper).respond(history()[:2], ())
    assert sleeper.waits == [] and len(server.bodies(CHAT)) == 1


def test_a_base_url_server_needs_no_key(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.push(CHAT, openai_text("hi"))
    assert agent(server).respond(history()[:2], ()).text == "hi"
    assert server.received[0].headers["authorization"] == "Bearer not-needed"


def test_missing_key_without_base_url_is_an_infrastructure_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = LLMAgent(ModelClient(ModelSettings("anthropic", "m")), name="claude")
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY is not set"):
        model.respond(history()[:2], ())


def _cellular_script() -> list:
    return [openai_calls(("a", "search_contacts", {"name": "Fredrik Thordendal"})),
            openai_calls(("b", "send_message_with_phone_number", {"phone_number": PHONE, "content": CONTENT})),
            openai_calls(("c", "set_cellular_service_status", {"on": True})),
            openai_calls(("d", "send_message_with_phone_number", {"phone_number": PHONE, "content": CONTENT})),
            openai_text(f'Your message to Fredrik Thordendal has been sent saying "{CONTENT}".')]


def test_a_whole_episode_scores_like_the_reference(server: ScriptedServer) -> None:
    server.push(CHAT, *_cellular_script())
    trajectory = run_episode(SCENARIO, agent(server), ScriptedUser(SCENARIO))
    assert trajectory.ended_by == "user" and trajectory.error is None
    reference = run_episode(SCENARIO, ReferenceAgent(SCENARIO), ScriptedUser(SCENARIO))
    assert evaluate(SCENARIO, trajectory).score == evaluate(SCENARIO, reference).score == 1.0
    assert [m.tool_trace for m in trajectory.messages] == [m.tool_trace for m in reference.messages]
    fourth = server.bodies(CHAT)[3]["messages"]  # the failed send came back as a tool result
    assert fourth[-3]["role"] == "tool" and fourth[-3]["content"].startswith("ConnectionError")


def test_scrambled_tool_names_round_trip(server: ScriptedServer) -> None:
    trajectory = run_episode(SCENARIO, _ScrambledEcho(server), ScriptedUser(SCENARIO), variant="tool_name_scrambled")
    sent = server.bodies(CHAT)[0]
    names = {tool["function"]["name"] for tool in sent["tools"]}
    assert "search_contacts" not in names
    executed = [m.tool_trace.tool for m in trajectory.messages if m.tool_trace and m.recipient is Role.AGENT]
    assert executed == ["search_contacts"]


class _ScrambledEcho:
    """Asks the server once, with the scrambled name of search_contacts pushed as the reply."""

    def __init__(self, server: ScriptedServer) -> None:
        self.server, self.inner, self.name, self.turns = server, agent(server), "echo", 0

    def respond(self, messages, tools):
        self.turns += 1
        if self.turns == 1:
            scrambled = next(tool.name for tool in tools if tool.tool == "search_contacts")
            self.server.push(CHAT, openai_calls(("s1", scrambled, {"name": "Fredrik Thordendal"})))
        else:
            self.server.push(CHAT, openai_text("done"))
        return self.inner.respond(messages, tools)


def test_malformed_calls_from_a_compatible_server_reach_the_environment(server: ScriptedServer) -> None:
    """Arguments sent as an object, or as broken JSON, never crash the agent; the environment judges them."""
    reply = openai_calls(("k1", "search_contacts", "{not json"))
    reply.body["choices"][0]["message"]["tool_calls"].append(
        {"id": "k2", "type": "function", "function": {"name": "search_contacts", "arguments": {"name": "A"}}})
    server.push(CHAT, reply)
    turn = agent(server).respond(history()[:2], offered("search_contacts"))
    assert [call.arguments for call in turn.tool_calls] == ["{not json", '{"name": "A"}']
