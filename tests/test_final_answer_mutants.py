"""The mutation stage of `validate` on a scenario's `final_answer`: wrong closing messages fail, right ones pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.cli import main
from pytest_toolsandbox.scenario.final_answer import FinalAnswer
from pytest_toolsandbox.scenario.milestones import Milestone
from pytest_toolsandbox.suite.final_answer_mutants import INABILITY, final_answer_mutants, stated_in_full
from pytest_toolsandbox.suite.mutants import DONE_CLAIM
from pytest_toolsandbox.suite.validate import Report, collect, validate
from tests.test_final_answer import REMINDER

CONTACTS = ["Kenji Watanabe", "Sam Whitaker"]
PHONES = ["+13105550143", "+14155550127"]


def answer(*facts: Any, **fields: Any) -> FinalAnswer:
    return FinalAnswer.model_validate({"facts": list(facts), **fields})


def generated(final: FinalAnswer, reference: str) -> list[tuple[str, str, bool]]:
    return [(mutant.id, mutant.text, mutant.wrong)
            for mutant in final_answer_mutants(final, reference, CONTACTS, PHONES)]


def test_a_bare_done_is_written_out_with_the_values_it_leaves_out() -> None:
    final = answer({"time": "17:00", "required": False}, {"name": "Kenji Watanabe"}, {"date": "2026-03-13"},
                   {"phone": "+13105550143"}, {"number": 8.1, "unit": "°C", "label": "saturday"}, {"yes": True},
                   {"none": ["couldn't"]})
    assert stated_in_full(final, "Done.") == ("Yes. Done. Details: 5:00 PM, Kenji Watanabe, March 13, "
                                              "+1 310-555-0143, saturday 8.1 degrees celsius.")
    assert stated_in_full(answer({"time": "17:00"}), "Set for 5 PM.") == "Set for 5 PM."  # it says it already


def test_a_confirmation_of_details_gets_near_misses_and_a_bare_claim_that_must_pass() -> None:
    final = answer({"time": "17:00", "required": False}, {"none": ["couldn't", "failed", "unable", "not"]})
    assert generated(final, "Done.") == [
        ("stated in full", "Done. Details: 5:00 PM.", False),
        ("neighbouring hour: 5:00 PM → 6:00 PM", "Done. Details: 6:00 PM.", True),
        ("neighbouring digit: 5:00 PM → 5:01 PM", "Done. Details: 5:01 PM.", True),
        ("right value and an alternative: 5:00 PM or 6:00 PM", "Done. Details: 5:00 PM or 6:00 PM.", True),
        ("24-hour clock: 5:00 PM → 17:00", "Done. Details: 17:00.", False),
        ("done claim", DONE_CLAIM, False),  # only details it need not give, and words it must not say
        ("silence", "", True),
        ("inability", INABILITY, True),
    ]


def test_an_answer_the_user_asked_for_makes_a_bare_claim_wrong_and_denies_the_reference() -> None:
    final = answer({"name": "Kenji Watanabe"}, {"phone": "+13105550143"})
    found = {identifier: (text, wrong) for identifier, text, wrong in generated(final, "I found the number.")}
    assert found["stated in full"] == ("I found the number. Details: Kenji Watanabe, +1 310-555-0143.", False)
    assert found["another contact: Kenji Watanabe → Sam Whitaker"] == (
        "I found the number. Details: Sam Whitaker, +1 310-555-0143.", True)
    assert found["another contact's number: +1 310-555-0143 → +1 415-555-0127"][1] is True
    assert found["national format: +1 310-555-0143 → (310) 555-0143"][1] is False
    assert found["negation"] == ("It is not true that I found the number.", True)  # the reference's words denied
    assert found["done claim"] == (DONE_CLAIM, True)


def test_a_bare_claim_must_fail_where_the_closing_message_also_reaches_a_text_milestone_that_asks_for_more() -> None:
    final = answer({"time": "17:00", "required": False})
    asks = Milestone(agent_says="I added it.", facts=[{"any": ["added", "set"]}])
    allows = Milestone(agent_says="I added it.", facts=[{"none": ["couldn't"]}])
    exact = Milestone(agent_says={"text": "I added it.", "match": "contains"}, facts=[{"none": ["couldn't"]}])

    def claim(*milestones: Milestone) -> bool:
        made = final_answer_mutants(final, "Done.", CONTACTS, PHONES, milestones)
        (done,) = [mutant for mutant in made if mutant.id == "done claim"]
        return done.wrong

    assert [claim(), claim(allows), claim(asks), claim(allows, asks), claim(exact)] == [False, False, True, True, True]


SCENARIO = 'description: Add a reminder; the reference confirms with a bare "Done.".\n' + REMINDER.lstrip()


def check(tmp_path: Path, final_answer: str) -> Report:
    path = tmp_path / "reminder.yaml"
    path.write_text(SCENARIO.lstrip() + final_answer, encoding="utf-8")
    return validate(collect([path]), determinism=False)


def errors(report: Report) -> list[str]:
    return [f"{problem.check}: {problem.message}" for problem in report.errors]


def test_a_final_answer_that_kills_every_mutant_validates(tmp_path: Path) -> None:
    report = check(tmp_path, 'final_answer: {facts: [{time: "17:00", required: false}, '
                             '{none: ["couldn\'t", failed, unable, "not"]}]}\n')
    assert errors(report) == []
    (result,) = report.mutation.values()
    assert result.summary() == {"generated": 8, "wrong": 5, "killed": 5, "right": 3, "held": 3, "waived": 0}
    assert {judged.milestone for judged in result.judged} == {"final_answer"}


def test_a_final_answer_that_lets_a_denial_through_fails_the_mutation_stage(tmp_path: Path) -> None:
    """With only "failed" among its words, a denial and an inability pass: both are survivors."""
    path = tmp_path / "reminder.yaml"
    text = SCENARIO.lstrip() + 'final_answer: {facts: [{time: "17:00", required: false}, {none: [failed]}]}\n'
    path.write_text(text.replace("agent: Done.", "agent: I added the reminder."), encoding="utf-8")
    report = validate(collect([path]), determinism=False)
    assert errors(report) == [
        "mutants: final_answer: wrong answer [negation] passes: 'It is not true that I added the reminder.'; add a "
        "fact it breaks, or waive it on final_answer with a reason",
        "mutants: final_answer: wrong answer [inability] passes: \"Sorry, I couldn't do that.\"; add a fact it "
        "breaks, or waive it on final_answer with a reason"]


def test_a_waived_final_answer_mutant_does_not_count_and_a_stale_waiver_is_an_error(tmp_path: Path) -> None:
    report = check(tmp_path, 'final_answer:\n  facts: [{time: "17:00", required: false}, {none: [x]}]\n  waive:\n'
                             '    "inability": "the scenario only checks the time"\n'
                             '    "neighbouring hour: 5 PM → 6 PM": "no such mutant"\n')
    assert errors(report) == [
        "mutants: final_answer waives 'neighbouring hour: 5 PM → 6 PM', which is not a generated mutant (the "
        "reference answer or the facts changed?); remove the waiver"]
    (result,) = report.mutation.values()
    assert [(judged.mutant.id, judged.waived) for judged in result.judged if judged.waived] == [
        ("inability", "the scenario only checks the time")]
    assert result.score == 1.0


def test_a_reference_that_fails_its_own_final_answer_is_an_error(tmp_path: Path) -> None:
    report = check(tmp_path, 'final_answer: {facts: [{time: "17:00"}]}\n')
    assert errors(report) == [
        "reference: the verdict fails it: final answer not held: the agent's last message to the user \"Done.\" "
        "does not give the time 17:00"]
    assert report.mutation == {}  # a reference that fails is no base to mutate


def test_cli_json_files_final_answer_mutants_under_their_field(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "reminder.yaml"
    path.write_text(SCENARIO.lstrip() + 'final_answer: {facts: [{time: "17:00", required: false}, {none: [x]}]}\n',
                    encoding="utf-8")
    assert main(["validate", str(path), "--json", "--no-determinism"]) == 1
    data = json.loads(capsys.readouterr().out)
    survivors = data["mutation"]["files"][str(path)]["survivors"]
    assert survivors == [{"milestone": "final_answer", "id": "inability", "text": INABILITY, "wrong": True}]
