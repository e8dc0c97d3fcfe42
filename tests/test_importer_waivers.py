"""The importer's waivers (importer/waivers.py): which generated answers an imported base may judge
otherwise, by rule, and that validate applies them to imported files only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_toolsandbox.importer.answer_facts import CONFIRMS
from pytest_toolsandbox.importer.answer_sources import DENIALS
from pytest_toolsandbox.importer.waivers import imported_waiver
from pytest_toolsandbox.scenario.loader import parse_scenario
from pytest_toolsandbox.suite.mutants import Mutant
from pytest_toolsandbox.tools.registry import all_tools

REGISTRY = all_tools()
IDENTIFIER = "9e137f06-916a-5310-8174-cf0b7e9f7054"
DONE = Mutant("done claim", "Done! I've taken care of that for you.", True)


def _scenario(answer: dict[str, Any], source: str = "synthesised", **extra: Any) -> Any:
    data = {"name": "x", "categories": ["single_tool_call", "single_user_turn"], "reference_source": source,
            "user": {"goal": "g", "first_message": "Remove 9e137f06-916a-5310-8174-cf0b7e9f7054 from my contacts"},
            "tools": ["remove_contact"],
            "milestones": {"removed": {"removed": {"contacts": [{"person_id": IDENTIFIER}]}},
                           "answer": {"after": ["removed"], **answer}},
            "reference": ["remove_contact(person_id=\"9e137f06-916a-5310-8174-cf0b7e9f7054\")",
                          {"agent": "9e137f06-916a-5310-8174-cf0b7e9f7054 has been removed from your contacts"}],
            **extra}
    return parse_scenario(data, Path("x.yaml"), REGISTRY)


CONFIRMATION = {"agent_says": "9e137f06-916a-5310-8174-cf0b7e9f7054 has been removed from your contacts",
                "facts": [{"any": list(CONFIRMS)}, {"none": list(DENIALS)}]}


def test_a_bare_claim_is_waived_only_on_a_confirmation_of_an_imported_base() -> None:
    assert "prove the action" in (imported_waiver(_scenario(CONFIRMATION), "answer", DONE) or "")
    asked = {**CONFIRMATION, "facts": [{"phone": "+12453344098"}]}
    assert imported_waiver(_scenario(asked), "answer", DONE) is None
    assert imported_waiver(_scenario(CONFIRMATION, source="written"), "answer", DONE) is None


def test_a_digit_of_a_record_id_in_a_confirmation_is_waived_other_digits_are_not() -> None:
    scenario = _scenario(CONFIRMATION)
    in_id = Mutant("unchecked value, neighbouring digit: 5310 → 5311", "…", True)
    assert "record id" in (imported_waiver(scenario, "answer", in_id) or "")
    elsewhere = Mutant("unchecked value, neighbouring digit: 42 → 43", "…", True)
    assert imported_waiver(scenario, "answer", elsewhere) is None


def test_a_change_within_the_derived_tolerance_is_waived_a_larger_one_is_not() -> None:
    scenario = _scenario({"agent_says": "It is 14827.52", "facts": [{"number": 14827.52, "tolerance": 0.5}]})
    assert imported_waiver(scenario, "answer", Mutant("transposed digits: 14,827.52 → 14,827.25", "…", True))
    assert imported_waiver(scenario, "answer", Mutant("transposed digits: 14,827.52 → 14,872.52", "…", True)) is None


def test_the_final_answer_is_judged_by_the_same_rules() -> None:
    scenario = _scenario(CONFIRMATION, final_answer={"facts": [{"none": list(DENIALS)}]})
    assert imported_waiver(scenario, "final_answer", DONE) is not None
