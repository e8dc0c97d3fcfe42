"""`--rules reference`: a call the reference's agent could not have made ends the episode and scores 0,
errored items count as 0 in the means, and no sampling temperature is sent unless one is given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.options import Found, Option, OptionError, read_settings
from pytest_toolsandbox.report.results.summary import aggregate
from pytest_toolsandbox.roles.llm_agent import LLMAgent
from pytest_toolsandbox.roles.model_client import ModelClient
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings
from pytest_toolsandbox.roles.retry import RetryPolicy
from pytest_toolsandbox.roles.scripted import ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from tests.llm_server import CHAT, ScriptedServer, openai_text
from tests.test_plugin_support import records_by_id, run, summary, write_suite
from tests.test_scoring_support import call, play, seed_scenario, seed_turns

UNKNOWN = call("lookup_person_v2", name="Fredrik Thordendal")


def test_an_unknown_tool_first_is_forgiven_under_our_rules_and_a_crash_under_the_reference_s() -> None:
    scenario = seed_scenario()
    ours = play(scenario, [UNKNOWN, *seed_turns()])
    assert ours.ended_by == "user" and ours.messages[-1].conversation_active is False
    witness = evaluate(scenario, play(scenario, seed_turns())).score
    assert witness > 0.9 and evaluate(scenario, ours).score == pytest.approx(witness)  # the error reply is forgiven
    # the same trajectory scored by the reference's rules: its agent would have crashed at the first call
    rescored = evaluate(scenario, ours, rules="reference")
    assert (rescored.score, rescored.milestone_similarity, rescored.turn_count) == (0.0, 0.0, scenario.max_messages)
    assert not rescored.passed(None) and rescored.verdict is not None
    assert "'lookup_person_v2', a tool it was not offered" in rescored.verdict.reasons()[0]

    played = play(scenario, [UNKNOWN, *seed_turns()], rules="reference")
    assert played.ended_by == "crash" and "lookup_person_v2" in (played.error or "")
    assert played.messages[-1].tool_call is not None  # the call is kept, unanswered; nothing after it
    assert evaluate(scenario, played, rules="reference").score == 0.0


def test_arguments_that_are_not_json_crash_under_the_reference_s_rules_only() -> None:
    scenario = seed_scenario()
    broken = call("search_contacts", arguments='{"name": "Fredrik')
    assert play(scenario, [broken, *seed_turns()]).ended_by == "user"
    played = play(scenario, [broken, *seed_turns()], rules="reference")
    assert played.ended_by == "crash" and "not JSON" in (played.error or "")
    # a call the reference's agent can make but that fails in its console (an unknown argument) is no crash
    wrong = call("search_contacts", surname="Thordendal")
    kept = play(scenario, [wrong, *seed_turns()], rules="reference")
    witness = evaluate(scenario, play(scenario, seed_turns())).score
    assert kept.ended_by == "user" and evaluate(scenario, kept, rules="reference").score == pytest.approx(witness)


def test_a_witness_without_such_calls_scores_the_same_under_both_rules() -> None:
    scenario = seed_scenario()
    trajectory = play(scenario, seed_turns())
    assert evaluate(scenario, trajectory, rules="reference") == evaluate(scenario, trajectory)


def _record(outcome: str, score: float | None, turns: int | None) -> dict[str, Any]:
    return {"id": f"s.yaml::{outcome}{score}", "path": "s.yaml", "variant": "base", "agent": "a", "outcome": outcome,
            "score": score, "passed": score == 1.0 if score is not None else None, "turn_count": turns,
            "categories": ["single_tool_call"], "max_messages": 30}


def test_errored_items_count_as_zero_in_the_means_under_the_reference_s_rules() -> None:
    records = [_record("passed", 1.0, 4), _record("error", None, None)]
    ours = aggregate(records, 1)["a"]["all"]
    assert (ours["mean_similarity"], ours["pass_rate"], ours["mean_turns"], ours["errors"]) == (1.0, 1.0, 4, 1)
    reference = aggregate(records, 1, "reference")["a"]
    assert (reference["all"]["mean_similarity"], reference["all"]["pass_rate"], reference["all"]["mean_turns"]) == (
        0.5, 0.5, 17)
    assert reference["categories"]["single_tool_call"]["mean_similarity"] == 0.5
    assert reference["variants"]["base"]["scored"] == 2


def _lookup(values: dict[str, Any]) -> Any:
    def lookup(option: Option) -> Found:
        given = option.flag in values
        return Found(values.get(option.flag, option.default), Path.cwd(), given)
    return lookup


@pytest.mark.parametrize(("given", "rules", "temperature", "provider_default"), [
    ({}, "ours", None, False),
    ({"--prompts": "reference"}, "reference", None, True),
    ({"--prompts": "reference", "--rules": "ours"}, "ours", None, False),
    ({"--rules": "reference"}, "reference", None, True),
    ({"--rules": "reference", "--temperature": "0.7"}, "reference", 0.7, True),
])
def test_the_rules_follow_the_prompts_unless_given(given: dict[str, Any], rules: str, temperature: float | None,
                                                   provider_default: bool, tmp_path: Path) -> None:
    settings = read_settings(_lookup({"--report-dir": str(tmp_path), **given}), tmp_path)
    assert settings.rules == rules and settings.as_json(tmp_path)["rules"] == rules
    options = settings.model_options
    assert options is not None and (options.temperature, options.provider_temperature) == (temperature,
                                                                                          provider_default)


def test_unknown_rules_are_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="--rules / toolsandbox_rules: 'paper' is not allowed; use one of ours, "
                                          "reference"):
        read_settings(_lookup({"--report-dir": str(tmp_path), "--rules": "paper"}), tmp_path)


def test_without_a_temperature_the_request_leaves_it_to_the_provider() -> None:
    with ScriptedServer() as server:
        for _ in range(3):
            server.push(CHAT, openai_text("Hello."))
        for temperature, provider in ((None, True), (None, False), (0.5, True)):
            options = ModelOptions(base_url=server.url + "/v1", temperature=temperature, provider_temperature=provider)
            client = ModelClient(ModelSettings("openai", "m", options), RetryPolicy(retries=0))
            agent = LLMAgent(client, name="openai:m")
            run_episode(seed_scenario(), agent, ScriptedUser(seed_scenario()), max_messages=1)
        reference, ours, given = server.bodies(CHAT)
    assert "temperature" not in reference and ours["temperature"] == 0 and given["temperature"] == 0.5


CRASHING_AGENT = """
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall


class Guesser:
    name = "guesser"

    def respond(self, messages, tools):
        return Turn(tool_calls=(ToolCall(id="c1", name="toggle_wifi", arguments='{"on": false}'),))


class Raiser:
    name = "raiser"

    def respond(self, messages, tools):
        raise RuntimeError("the model server went away")
"""


@pytest.mark.parametrize(("rules", "outcome", "mean"), [("ours", "failed", None), ("reference", "failed", 0.0)])
def test_a_run_under_each_rules(pytester: pytest.Pytester, rules: str, outcome: str, mean: float | None) -> None:
    write_suite(pytester)
    pytester.makepyfile(my_agents=CRASHING_AGENT)
    run(pytester, "scenarios/settings/wifi_off.yaml", "--agent", "my_agents:Guesser", "--agent", "my_agents:Raiser",
        "--rules", rules)
    data = summary(pytester)
    records = records_by_id(data)
    guess = records["scenarios/settings/wifi_off.yaml::test_scenario[my_agents_Guesser-base]"]
    assert guess["outcome"] == outcome and guess["score"] == 0.0
    assert guess["ended_by"] == ("crash" if rules == "reference" else "max_messages")
    assert guess["turn_count"] == (30 if rules == "reference" else guess["turn_count"])
    raised = data["aggregates"]["my_agents:Raiser"]["all"]
    assert raised["errors"] == 1 and raised["mean_similarity"] == mean
    assert data["run"]["options"]["rules"] == rules


def test_compare_counts_errors_as_crashes_under_the_reference_s_rules() -> None:
    from pytest_toolsandbox.report.ci.compare import select

    records = [_record("passed", 1.0, 4), _record("error", None, None)]
    for rules, scores in (("ours", [1.0]), ("reference", [1.0, 0.0])):
        side = select({"run": {"options": {"rules": rules}}, "records": records}, "A", None)
        assert sorted((r["score"] for r in side.records), reverse=True) == scores
