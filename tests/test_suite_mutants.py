"""The mutation stage of `validate`: generated wrong answers must fail, generated right answers must pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_toolsandbox.cli import main
from pytest_toolsandbox.scenario.milestones import Milestone
from pytest_toolsandbox.suite.mutants import DONE_CLAIM, Mutant, fact_spans, mutants
from pytest_toolsandbox.suite.validate import Report, collect, validate
from tests.test_suite_validate import broken_copy

CONTACTS = ["Kenji Watanabe", "Sam Whitaker"]


def generated(facts: list[Any], reference: str) -> dict[str, Mutant]:
    return {mutant.id: mutant for mutant in mutants(Milestone(agent_says="x", facts=facts), reference, CONTACTS)}


def check(path: Path) -> Report:
    return validate(collect([path]), determinism=False)


def mutant_lines(report: Report) -> list[str]:
    return [problem.message for problem in report.errors if problem.check == "mutants"]


def test_a_number_answer_gets_near_misses_a_shotgun_a_swap_a_denial_and_a_spelled_form() -> None:
    found = generated([{"number": 92, "tolerance": 0.5}], "100 US dollars are 92.0 euros.")
    assert [(m.id, m.text, m.wrong) for m in found.values()] == [
        ("neighbouring digit: 92.0 → 93.0", "100 US dollars are 93.0 euros.", True),
        ("transposed digits: 92.0 → 29.0", "100 US dollars are 29.0 euros.", True),
        ("right value and an alternative: 92.0 or 93.0", "100 US dollars are 92.0 or 93.0 euros.", True),
        ("spelled out: 92.0 → ninety-two", "100 US dollars are ninety-two euros.", False),
        ("decimal places: 92.0 → 92", "100 US dollars are 92 euros.", False),
        ("swapped values: 92.0 ↔ 100", "92.0 US dollars are 100 euros.", True),
        ("unchecked value, neighbouring digit: 100 → 101", "101 US dollars are 92.0 euros.", True),
        ("negation", "It is not true that 100 US dollars are 92.0 euros.", True),
        ("done claim", DONE_CLAIM, True),
        ("silence", "", True),
    ]


def test_values_no_fact_names_get_a_near_miss_each() -> None:
    """A value the facts do not check — a phone number, a day, a time in a confirmation — is still part of
    the answer: misreporting it is wrong, and a fact removed shows up here."""
    found = generated([{"any": ["texted", "sent"]}], "I texted (415) 555-0127 that practice moved to Saturday at 7 PM.")
    assert [(m.id, m.text) for m in found.values() if m.id.startswith("unchecked")] == [
        ("unchecked value, neighbouring digit: (415) 555-0127 → (415) 555-0128",
         "I texted (415) 555-0128 that practice moved to Saturday at 7 PM."),
        ("unchecked value, neighbouring day: Saturday → Sunday",
         "I texted (415) 555-0127 that practice moved to Sunday at 7 PM."),
        ("unchecked value, neighbouring hour: 7 PM → 8 PM",
         "I texted (415) 555-0127 that practice moved to Saturday at 8 PM.")]


def test_the_neighbouring_digit_is_beyond_the_tolerance() -> None:
    found = generated([{"number": 5.63, "tolerance": 0.05}], "That's 5.63 km.")
    assert "neighbouring digit: 5.63 → 5.73" in found  # 5.64 would still be within ±0.05


def test_names_days_dates_and_times_get_their_own_neighbours_and_forms() -> None:
    found = generated([{"name": "Sam Whitaker"}, {"any": ["Friday"]}, {"date": "2026-03-31"}, {"any": ["5 PM"]}],
                      "Sam Whitaker gets a reminder on Friday, March 31 at 5 PM.")
    texts = {identifier: mutant.text for identifier, mutant in found.items()}
    assert texts["another contact: Sam Whitaker → Kenji Watanabe"].startswith("Kenji Watanabe gets")
    assert "on Saturday, March 31" in texts["neighbouring day: Friday → Saturday"]
    assert "Friday, April 1 at" in texts["neighbouring day: March 31 → April 1"]
    assert "at 6 PM." in texts["neighbouring hour: 5 PM → 6 PM"]
    assert "at 17:00." in texts["24-hour clock: 5 PM → 17:00"] and not found["24-hour clock: 5 PM → 17:00"].wrong
    assert "Friday, 31 March at" in texts["day before month: March 31 → 31 March"]
    assert texts["negation"] == "It is not true that Sam Whitaker gets a reminder on Friday, March 31 at 5 PM."


def test_phone_numbers_and_units_in_other_formats_are_right_answers() -> None:
    phone = generated([{"phone": "+12453344098"}], "Texted +1 245-334-4098 for you.")
    other = mutants(Milestone(agent_says="x", facts=[{"phone": "+12453344098"}]), "Texted (245) 334-4098.", CONTACTS,
                    ["+12453344098", "+16505550166"])[0]
    assert (other.id, other.text, other.wrong) == (
        "another contact's number: (245) 334-4098 → (650) 555-0166", "Texted (650) 555-0166.", True)
    assert not phone["national format: +1 245-334-4098 → (245) 334-4098"].wrong
    assert phone["transposed digits: +1 245-334-4098 → +1 245-334-4089"].wrong
    units = generated([{"number": 14.2}], "It's 14.2°C and €12.")
    assert units["units spelled out: °C → degrees Celsius"].text == "It's 14.2 degrees Celsius and €12."
    assert units["currency spelled out: € → euros"].text == "It's 14.2°C and 12 euros."


class LaterKinds(BaseModel):
    """The value fields of fact kinds written after the generator (a time, coordinates, a claim)."""

    time: str | None = None
    coordinates: tuple[float, float] | None = None
    contains: str | None = None


def test_facts_are_read_by_their_value_field() -> None:
    text = "You're at 37.323, -122.0322; it's on Main St, and the reminder is at 5 PM."
    facts = (LaterKinds(time="17:00"), LaterKinds(coordinates=(37.323, -122.0322)), LaterKinds(contains="Main St"))
    spans = {span.of(text): span.kind for fact in facts for span in fact_spans(fact, text) if span is not None}
    assert spans == {"5 PM": "time", "37.323": "number", "-122.0322": "number", "Main St": "word"}


def test_generation_is_deterministic() -> None:
    facts = [{"name": "Sam Whitaker"}, {"number": 3}, {"any": ["on"]}]
    reference = "Sam Whitaker has 3 messages and wifi is on."
    assert generated(facts, reference) == generated(facts, reference)
    assert generated(facts, reference)["opposite: on → off"].text == "Sam Whitaker has 3 messages and wifi is off."


WIFI_OFF = """
description: Turn wifi off.
categories: [single_tool_call, single_user_turn]
user:
  goal: Get wifi switched off on your phone.
  knowledge: You have no other information.
  first_message: Please switch off my wifi.
tools: [set_wifi_status]
milestones:
  wifi_off:
    world: {settings: {wifi: false}}
  confirmed:
    after: [wifi_off]
    agent_says: Wifi is off now.
    facts: [FACTS]
    accept: ["Done, I've turned your wifi off."]
    reject: ["Wifi is on now.", "I couldn't turn your wifi off."]
reference:
  - set_wifi_status(on=false)
  - agent: Wifi is off now.
"""
STRONG = 'off, {none: ["on", "couldn\'t", "not"]}'
WEAK = '{none: ["on", "couldn\'t", "not"]}'  # "off" removed


def wifi_off(tmp_path: Path, facts: str, extra: str = "") -> Path:
    path = tmp_path / "wifi_off.yaml"
    path.write_text(WIFI_OFF.lstrip().replace("FACTS", facts).replace("    accept:", extra + "    accept:"),
                    encoding="utf-8")
    return path


def test_a_milestone_that_kills_every_mutant_validates(tmp_path: Path) -> None:
    report = check(wifi_off(tmp_path, STRONG))
    assert report.ok, [problem.line() for problem in report.errors]
    (result,) = report.mutation.values()
    assert [judged.mutant.id for judged in result.judged] == [
        "opposite: off → on", "right value and an alternative: off or on", "negation", "done claim", "silence"]
    assert result.summary() == {"generated": 5, "wrong": 5, "killed": 5, "right": 0, "held": 0, "waived": 0}


def test_a_weakened_milestone_fails_the_mutation_stage(tmp_path: Path) -> None:
    """A fact removed ("off"): a bare success claim and silence now reach the confirmation."""
    report = check(wifi_off(tmp_path, WEAK))
    assert mutant_lines(report) == [
        "milestone 'confirmed': wrong answer [done claim] passes: \"Done! I've taken care of that for you.\"; add a "
        "fact it breaks, or waive it on the milestone with a reason",
        "milestone 'confirmed': wrong answer [silence] passes: ''; add a fact it breaks, or waive it on the milestone "
        "with a reason"]


def test_a_right_form_the_facts_refuse_fails(tmp_path: Path) -> None:
    def narrow(data: dict[str, Any]) -> None:
        confirmed = data["milestones"]["confirmed"]
        confirmed["facts"][1] = {"any": ["11:00 AM"]}
        confirmed["accept"] = ["Done, you'll get a reminder to move the car at 11:00 AM."]

    report = check(broken_copy(tmp_path, "reminders/add_reminder_in_90_minutes.yaml", narrow))
    assert ("milestone 'confirmed': right answer [24-hour clock: 11:00 AM → 11:00] fails: \"I'll remind you to move "
            "the car in 90 minutes, at 11:00.\"; widen the facts to this form, or waive it on the milestone with a "
            "reason") in mutant_lines(report)


def test_a_waived_mutant_does_not_count_and_a_stale_waiver_is_an_error(tmp_path: Path) -> None:
    waivers = ('    waive:\n'
               '      done claim: "kept for this test: the reason is reported with the waiver"\n'
               '      silence: "kept for this test too"\n'
               '      "neighbouring hour: 3 PM → 4 PM": "no time in this answer"\n')
    report = check(wifi_off(tmp_path, WEAK, waivers))
    assert mutant_lines(report) == [
        "milestone 'confirmed' waives 'neighbouring hour: 3 PM → 4 PM', which is not a generated mutant (the "
        "reference answer or the facts changed?); remove the waiver"]
    (result,) = report.mutation.values()
    assert result.score == 1.0 and result.summary()["waived"] == 2
    assert report.mutation_json()["files"][report.files[0]]["waived"] == [
        {"milestone": "confirmed", "id": "done claim",
         "reason": "kept for this test: the reason is reported with the waiver"},
        {"milestone": "confirmed", "id": "silence", "reason": "kept for this test too"}]


def test_a_waiver_without_a_reason_is_a_schema_error(tmp_path: Path) -> None:
    report = check(wifi_off(tmp_path, STRONG, '    waive: {done claim: " "}\n'))
    assert [problem.check for problem in report.errors] == ["schema"]
    assert "waiver of 'done claim' gives no reason" in report.errors[0].message


def test_cli_prints_the_score_per_scenario_and_json_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = wifi_off(tmp_path, WEAK)
    assert main(["validate", str(path), "--no-determinism", "--no-mutants"]) == 1  # the milestone is vacuous too
    assert "mutation score" not in capsys.readouterr().out
    assert main(["validate", str(path), "--no-determinism"]) == 1
    out = capsys.readouterr().out
    assert f"  {path}: 33% (1/3 wrong fail, 0/0 right pass)" in out
    assert "mutants: 3 generated, 1 of 3 wrong answers fail, 0 of 0 right answers pass, 0 waived" in out
    assert main(["validate", str(path), "--no-determinism", "--json"]) == 1
    mutation = json.loads(capsys.readouterr().out)["mutation"]
    assert mutation["totals"] == {"generated": 3, "wrong": 3, "killed": 1, "right": 0, "held": 0, "waived": 0}
    assert mutation["files"][str(path)]["survivors"] == [
        {"milestone": "confirmed", "id": "done claim", "text": DONE_CLAIM, "wrong": True},
        {"milestone": "confirmed", "id": "silence", "text": "", "wrong": True}]
