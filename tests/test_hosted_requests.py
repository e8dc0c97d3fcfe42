"""What the adapters send and count, against the loopback server enforcing the hosted APIs' rules
(tests/provider_rules.py): reasoning-model parameters, non-whitespace text, call/result pairing, usage
counts that are missing or invalid, and retries."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from pytest_toolsandbox.roles.conversation import Called, Conversation, Result, Returned, Said
from pytest_toolsandbox.roles.model_client import ModelClient, ModelError
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings
from pytest_toolsandbox.roles.openai_chat import param_style
from pytest_toolsandbox.roles.pairing import NOT_RUN, paired
from pytest_toolsandbox.roles.retry import RetryPolicy
from pytest_toolsandbox.world.messages import ToolCall
from tests.llm_server import CHAT, MESSAGES, ScriptedServer, anthropic_text, error, openai_text

HELLO = Conversation(system="be brief", entries=(Said("hi", mine=False),))


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


def client(server: ScriptedServer, model: str, provider: str = "openai", **options: object) -> ModelClient:
    base = server.url + ("/v1" if provider == "openai" else "")
    settings = ModelSettings(provider, model, ModelOptions(base_url=base, max_tokens=256, **options))  # type: ignore[arg-type]
    return ModelClient(settings, RetryPolicy(retries=2, base_delay=0.0, sleep=lambda _: None, jitter=lambda: 0.0))


@pytest.mark.parametrize("model", ["o4-mini", "o3", "o1", "gpt-5", "gpt-5-mini", "openai/o4-mini"])
def test_reasoning_models_get_their_parameters_and_answer(server: ScriptedServer, model: str) -> None:
    server.push(CHAT, openai_text("hello"))
    assert client(server, model, reasoning_effort="low").complete(HELLO, []).text == "hello"
    sent = server.bodies(CHAT)[0]
    assert list(sent) == ["model", "messages", "max_completion_tokens", "reasoning_effort"]
    assert sent["max_completion_tokens"] == 256 and sent["reasoning_effort"] == "low"


def test_chat_models_keep_their_body_byte_for_byte(server: ScriptedServer) -> None:
    server.push(CHAT, openai_text("hello"))
    client(server, "gpt-5-chat-latest", reasoning_effort="high").complete(HELLO, [])
    sent = server.bodies(CHAT)[0]
    assert list(sent) == ["model", "messages", "temperature", "max_tokens"]  # the shipped cassettes' order
    assert sent["temperature"] == 0.0 and "reasoning_effort" not in sent


def test_a_temperature_is_sent_to_a_reasoning_model_only_when_given(server: ScriptedServer) -> None:
    server.push(CHAT, openai_text("ok"), openai_text("ok"))
    client(server, "o4-mini", temperature=1.0).complete(HELLO, [])
    assert server.bodies(CHAT)[0]["temperature"] == 1.0
    with pytest.raises(ModelError, match=r"HTTP 400: .*does not support 0\.5"):  # the API's word, not retried
        client(server, "o4-mini", temperature=0.5).complete(HELLO, [])


def test_the_parameter_style_is_overridable(server: ScriptedServer) -> None:
    settings = ModelSettings("openai", "my-reasoner", ModelOptions(param_styles=(("openai:my-reasoner", "reasoning"),)))
    assert param_style(settings.with_options(settings.options.for_spec("openai:my-reasoner"))) == "reasoning"
    assert param_style(settings.with_options(settings.options.for_spec("openai:other"))) == "chat"
    server.push(CHAT, openai_text("ok"))
    with pytest.raises(ModelError, match="'max_tokens' is not supported"):  # forced to chat: the server refuses
        client(server, "o4-mini", param_style="chat").complete(HELLO, [])


def test_a_whitespace_turn_is_sent_as_visible_text(server: ScriptedServer) -> None:
    server.push(MESSAGES, anthropic_text("fine"))
    conversation = Conversation(system="", entries=(Said("hi", mine=False), Said("\n\n", mine=True),
                                                    Said(" ", mine=False)))
    assert client(server, "claude-x", provider="anthropic").complete(conversation, []).text == "fine"
    texts = [block["text"] for message in server.bodies(MESSAGES)[0]["messages"] for block in message["content"]]
    assert texts == ["hi", "(empty message)", "(empty message)"] and server.rejected == []


CALL_A, CALL_B = ToolCall(id="a", name="get_wifi_status", arguments="{}"), ToolCall(id="b", name="x", arguments="{}")
UNPAIRED = (Said("hi", mine=False), Called((CALL_A, CALL_B)),
            Returned((Result("a", "get_wifi_status", "on", False), Result("zz", "other", "late", False))),
            Said("and?", mine=False), Called((CALL_A,)), Said("still there?", mine=False))


def test_pairing_answers_every_call_and_turns_stray_results_into_text() -> None:
    fixed = paired(UNPAIRED)
    assert fixed[2] == Returned((Result("a", "get_wifi_status", "on", False), Result("b", "x", NOT_RUN, True)))
    assert fixed[3] == Said("[other result] late", mine=False)
    assert fixed[5:] == (Called((CALL_A,)), Returned((Result("a", "get_wifi_status", NOT_RUN, True),)),
                         Said("still there?", mine=False))
    assert paired(fixed) == fixed


@pytest.mark.parametrize(("provider", "path", "reply"), [("openai", CHAT, openai_text("ok")),
                                                          ("anthropic", MESSAGES, anthropic_text("ok"))])
def test_an_unpaired_conversation_is_accepted_by_both_apis(server: ScriptedServer, provider: str, path: str,
                                                            reply: object) -> None:
    server.push(path, reply)  # type: ignore[arg-type]
    client(server, "model-x", provider=provider).complete(Conversation("", UNPAIRED), [])
    assert server.rejected == []


def usage_reply(usage: object) -> object:
    reply = openai_text("ok")
    reply.body["usage"] = usage
    return reply


@pytest.mark.parametrize("usage", [None, {"prompt_tokens": -5, "completion_tokens": 1},
                                   {"prompt_tokens": float("nan"), "completion_tokens": 1},
                                   {"prompt_tokens": float("inf"), "completion_tokens": 1},
                                   {"prompt_tokens": "12abc", "completion_tokens": 1}])
def test_invalid_usage_is_unknown_never_an_error(server: ScriptedServer, usage: object) -> None:
    server.push(CHAT, usage_reply(usage), usage_reply({"prompt_tokens": 7, "completion_tokens": 3}))
    model = client(server, "m")
    model.complete(HELLO, [])
    model.complete(HELLO, [])
    assert model.usage == {"input_tokens": 7, "output_tokens": 3, "requests": 2, "retries": 0, "unknown_usage": 1}


def test_retries_are_counted(server: ScriptedServer) -> None:
    server.push(CHAT, error(429, headers={"retry-after": "0"}), error(500), openai_text("ok"))
    model = client(server, "m")
    model.complete(HELLO, [])
    assert (model.usage["requests"], model.usage["retries"]) == (1, 2)
    assert json.loads(json.dumps(model.usage)) == model.usage
