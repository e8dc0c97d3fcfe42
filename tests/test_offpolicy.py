"""Off-policy mode (--user=reference-history): per-turn scoring against the reference dialogue."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_toolsandbox.roles.llm_agent import LLMAgent
from pytest_toolsandbox.roles.model_client import ModelClient
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings
from pytest_toolsandbox.roles.scripted import ReferenceAgent, UnhelpfulAgent
from pytest_toolsandbox.running.offpolicy import OffPolicyEpisode
from tests.llm_server import CHAT, ScriptedServer, openai_calls, openai_text
from tests.support import shipped_scenario
from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite

ASK = shipped_scenario("scenarios/messaging/send_message_ask_recipient.yaml")
PHONE = "+16505550119"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


def test_the_reference_agent_succeeds_at_every_turn() -> None:
    episode = OffPolicyEpisode(ASK, ReferenceAgent(ASK))
    trajectory = episode()
    assert trajectory.ended_by == "user" and trajectory.user == "reference-history"
    assert [(turn.metrics.reference_calls, turn.metrics.success) for turn in episode.turns] == [(0, True), (2, True)]
    assert episode.evaluation().score == 1.0


def test_an_unhelpful_agent_fails_the_turn_that_needs_calls() -> None:
    episode = OffPolicyEpisode(ASK, UnhelpfulAgent())
    episode()
    second = episode.turns[1].metrics
    assert (second.recall, second.success) == (0.0, False)
    assert episode.turns[1].answer == "I'm sorry, I can't help with that."
    assert episode.evaluation().score == 0.5
    assert episode.as_json()["success_rate"] == 0.5 and len(episode.as_json()["turns"]) == 2


def test_each_turn_starts_from_the_reference_history(server: ScriptedServer) -> None:
    """The model sends to the wrong number at turn 2; the reference history (not its mistake) goes on."""
    server.push(CHAT, openai_text("Who should get it?"),
                openai_calls(("a", "search_contacts", {"name": "Diego Alvarez"})),
                openai_calls(("b", "send_message_with_phone_number", {"phone_number": "+10000000000",
                                                                     "content": "I'm running late"})),
                openai_text("Sent."))
    settings = ModelSettings("openai", "m", ModelOptions(base_url=server.url + "/v1"))
    episode = OffPolicyEpisode(ASK, LLMAgent(ModelClient(settings), "openai:m"))
    trajectory = episode()
    second = episode.turns[1].metrics
    assert (second.matched_calls, second.predicted_calls, second.incorrect_action_rate) == (1, 2, 1.0)
    assert not second.success and episode.turns[0].metrics.success
    sent = [m.tool_trace.arguments["phone_number"] for m in trajectory.messages
            if m.tool_trace is not None and m.tool_trace.tool == "send_message_with_phone_number"]
    assert sent == [PHONE]  # the item's trajectory is the reference history
    turn_two_history = server.bodies(CHAT)[1]["messages"]
    assert turn_two_history[2] == {"role": "assistant", "content": "Sure, who should I send it to?"}


def test_off_policy_results_reach_the_summary(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    run(pytester, "--user", "reference-history", "--agent", "unhelpful").assert_outcomes(failed=1)
    record = summary(pytester)["records"][0]
    assert record["off_policy"]["success_rate"] == 0.0 and record["off_policy"]["recall"] == 0.0
    assert record["score"] == 0.0 and record["user"] == "reference-history"
