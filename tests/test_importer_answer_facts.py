"""Facts derived for imported text milestones (importer/answer_facts.py), on small synthetic scenarios.

No reference package: each test writes a tiny scenario as the importer would, plays its reference with
our engine and derives the facts from the played sentence, as `import-toolsandbox` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.facts import missing_fact, parse_fact
from pytest_toolsandbox.importer.answer_facts import derive
from pytest_toolsandbox.importer.answer_sources import is_question, state_phrases
from pytest_toolsandbox.scenario.loader import parse_scenario
from pytest_toolsandbox.suite.play import play_reference
from pytest_toolsandbox.tools.registry import all_tools

REGISTRY = all_tools()


def _derived(data: dict[str, Any]) -> Any:
    data = {"categories": ["single_tool_call", "single_user_turn"], "reference_source": "synthesised", **data}
    scenario = parse_scenario(data, Path("x.yaml"), REGISTRY)
    played = play_reference(scenario, REGISTRY)
    outcomes = {o.name: o.index for o in evaluate(scenario, played, REGISTRY).milestones}
    texts = {name: (played.messages[outcomes[name]].content, []) for name, m in scenario.milestones.items()
             if m.said("agent_says") and outcomes.get(name) is not None}
    return derive(scenario, played, texts, {name: spec.returns for name, spec in REGISTRY.items()})


def _holds(facts: list[Any], text: str) -> bool:
    return missing_fact(text, [parse_fact(fact) for fact in facts]) is None


def test_a_tool_result_stated_in_the_answer_is_a_required_fact_in_any_wording() -> None:
    derived = _derived({
        "name": "stock", "user": {"goal": "g", "first_message": "What's the stock symbol for Apple"},
        "tools": ["search_stock"],
        "milestones": {"found": {"tool_call": {"search_stock": {"query": "Apple"}}},
                       "answer": {"after": ["found"], "agent_says": "The stock symbol for Apple is AAPL"}},
        "reference": ["search_stock(query=\"Apple\")", {"agent": "The stock symbol for Apple is AAPL"}]})
    facts = derived.facts["answer"]
    assert facts == ["AAPL"]  # "Apple" is the user's word, not the answer
    assert _holds(facts, "It trades as AAPL.") and not _holds(facts, "It is APPL.")


def test_a_phone_from_a_tool_result_is_read_in_any_format() -> None:
    derived = _derived({
        "name": "phone", "user": {"goal": "g", "first_message": "What is Homer S's phone number?"},
        "tools": ["search_contacts"],
        "world": {"clear": ["contacts"], "contacts": [{"name": "Homer S", "phone_number": "+14085550100"}]},
        "milestones": {"found": {"tool_call": {"search_contacts": {"name": "Homer S"}}},
                       "answer": {"after": ["found"], "agent_says": "Homer S's number is +14085550100"}},
        "reference": ["search_contacts(name=\"Homer S\")", {"agent": "Homer S's number is +14085550100"}]})
    facts = derived.facts["answer"]
    assert {"phone": "+14085550100"} in facts
    assert _holds(facts, "You can reach him at (408) 555-0100.")
    assert not _holds(facts, "You can reach him at (408) 555-0101.")


def test_a_number_with_its_unit_and_the_reference_rounding() -> None:
    derived = _derived({
        "name": "convert", "user": {"goal": "g", "first_message": "How many miles is 5 km?"},
        "tools": ["unit_conversion"],
        "milestones": {"converted": {"tool_call": {"unit_conversion": {"amount": 5, "from_unit": "kilometer",
                                                                        "to_unit": "mile"}}},
                       "answer": {"after": ["converted"], "agent_says": "That is 3.1 miles"}},
        "reference": ["unit_conversion(amount=5, from_unit=\"kilometer\", to_unit=\"mile\")",
                      {"agent": "That is 3.1 miles"}]})
    (fact,) = derived.facts["answer"]
    assert fact["unit"] == "miles" and fact["tolerance"] == 0.05 and fact["allow"] == [5.0]
    assert _holds([fact], "About 3.11 mi, from 5 km.") and not _holds([fact], "About 3.2 miles.")
    assert not _holds([fact], "That is 3.1 kilometers.")


def test_a_confirmation_is_judged_by_its_details_and_denials() -> None:
    derived = _derived({
        "name": "wifi", "user": {"goal": "g", "first_message": "Turn off wifi"}, "tools": ["set_wifi_status"],
        "world": {"settings": {"wifi": True}},
        "milestones": {"wifi_off": {"world": {"settings": {"wifi": False}}},
                       "answer": {"after": ["wifi_off"], "agent_says": "Wifi is turned off"}},
        "reference": ["set_wifi_status(on=false)", {"agent": "Wifi is turned off"}]})
    facts = derived.facts["answer"]
    assert _holds(facts, "Done.") and _holds(facts, "I switched your Wi-Fi off.")
    assert not _holds(facts, "Wifi is turned on.") and not _holds(facts, "I couldn't turn it off.")
    assert not _holds(facts, "Okay.")
    final = derived.final_answer
    assert not _holds(final, "Sorry, I couldn't do that.") and _holds(final, "Done.")


def test_the_answer_required_beyond_a_reference_that_ends_with_done() -> None:
    derived = _derived({
        "name": "holiday", "user": {"goal": "g", "first_message": "What is the timestamp for Thanksgiving"},
        "tools": ["search_holiday"],
        "milestones": {"found": {"tool_call": {"search_holiday": {"holiday_name": "Thanksgiving"}}}},
        "reference": ["search_holiday(holiday_name=\"Thanksgiving\")", {"agent": "Done."}]})
    assert derived.answer_required is not None and derived.answer_required.found.startswith("search_holiday")
    assert derived.final_answer[0] == {"date": "2026-11-26"}
    assert _holds(derived.final_answer, derived.answer_required.closing)
    assert not _holds(derived.final_answer, "Done.")


def test_a_request_is_a_question_by_its_opening_or_mark() -> None:
    assert is_question("How much is 2048 USD in CNY") and is_question("Current temp?")
    assert not is_question("Remind me to buy milk")


def test_state_phrases_bind_the_state_to_the_setting() -> None:
    phrases = state_phrases("cellular", False, short=False)
    assert "cellular service has been turned off" in phrases and "turned off cellular" in phrases
    assert not any("wifi" in phrase for phrase in phrases)
