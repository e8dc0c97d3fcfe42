"""`validate` tests text milestones like code: facts stated, examples given, and each example judged
on the whole trajectory (accepted ones pass, rejected ones fail)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolsandbox.cli import main
from pytest_toolsandbox.suite.validate import Report, collect, validate

HEAD = """
description: Turn wifi off while leaving cellular service as it is.
categories: [single_tool_call, single_user_turn]
user:
  goal: Get wifi switched off on your phone.
  knowledge: You only want wifi off; cellular service should stay on. You have no other information.
  first_message: Please switch off my wifi.
tools: [set_wifi_status, get_wifi_status, set_cellular_service_status]
minefields:
  cellular_off:
    tool_call: {set_cellular_service_status: {on: false}}
reference:
  - set_wifi_status(on=false)
  - agent: Wifi is off now.
milestones:
  wifi_off:
    world: {settings: {wifi: false, cellular: true}}
    tool_call: {set_wifi_status: {on: false}}
  confirmed:
    after: [wifi_off]
"""

GOOD = HEAD + """
    agent_says: Wifi is off now.
    facts: [off, {none: [on, "couldn't", unable, "not"]}]
    accept: ["Done, I've turned your wifi off.", "Your wifi is now switched off."]
    reject: ["Wifi is on now.", "I couldn't turn your wifi off."]
"""


def check(tmp_path: Path, text: str, name: str = "wifi_off.yaml") -> Report:
    """The facts and examples checks (the mutation stage has its own tests, test_suite_mutants.py)."""
    path = tmp_path / name
    path.write_text(text.lstrip(), encoding="utf-8")
    return validate(collect([path]), determinism=False, mutants=False)


def lines(report: Report) -> list[str]:
    return [problem.line() for problem in report.errors]


def test_a_milestone_with_facts_and_examples_that_hold_validates(tmp_path: Path) -> None:
    report = check(tmp_path, GOOD)
    assert report.ok, lines(report)


def test_a_text_milestone_without_facts_or_floor_fails_with_the_fix(tmp_path: Path) -> None:
    report = check(tmp_path, HEAD + "    agent_says: Wifi is off now.\n")
    assert lines(report) == [
        f"{tmp_path / 'wifi_off.yaml'}: facts: text milestone 'confirmed' states neither facts nor a floor, so only "
        "the reference's exact wording reaches it; add `facts:` (e.g. [off, {none: [on, \"couldn't\"]}]) with "
        "`accept:` / `reject:` examples, or give the text an explicit ROUGE floor: `{text: ..., floor: 0.8}`"]
    assert report.errors[0].milestone == "confirmed"


def test_facts_without_examples_fail(tmp_path: Path) -> None:
    report = check(tmp_path, HEAD + "    agent_says: Wifi is off now.\n    facts: [off]\n")
    assert lines(report) == [
        f"{tmp_path / 'wifi_off.yaml'}: facts: text milestone 'confirmed' has no accept and no reject examples; "
        "add `accept:` (correct paraphrases, which must pass) and `reject:` (fluent wrong answers, which must fail)"]


def test_a_floor_counts_as_stating_what_is_right(tmp_path: Path) -> None:
    report = check(tmp_path, HEAD + "    agent_says: {text: Wifi is off now., floor: 0.7}\n"
                   "    accept: [\"Done, I've turned your wifi off.\"]\n    reject: [Wifi is on.]\n")
    assert lines(report) == [f"{tmp_path / 'wifi_off.yaml'}: examples: milestone 'confirmed': rejected example "
                             "'Wifi is on.' passes (similarity 0.9149); add a fact it breaks, e.g. "
                             "{none: [the wrong word]}"]  # ROUGE cannot tell on from off: why facts exist


def test_examples_judged_the_wrong_way_name_file_milestone_example_and_fact(tmp_path: Path) -> None:
    report = check(tmp_path, HEAD + """
    agent_says: Wifi is off now.
    facts: [off]
    accept: ["Done, I've turned your wifi off.", "Wifi is disabled now."]
    reject: ["Wifi is on now.", "Wifi is on; the screen is off."]
""")
    path = tmp_path / "wifi_off.yaml"
    assert lines(report) == [
        f"{path}: examples: milestone 'confirmed': accepted example 'Wifi is disabled now.' fails: the closest agent "
        "message \"Wifi is disabled now.\" does not say \"off\"",
        f"{path}: examples: milestone 'confirmed': rejected example 'Wifi is on; the screen is off.' passes "
        "(similarity 0.9085); add a fact it breaks, e.g. {none: [the wrong word]}"]


def test_user_says_examples_replace_the_users_line(tmp_path: Path) -> None:
    text = """
description: The user confirms before the agent acts.
categories: [single_tool_call, multiple_user_turn]
user: {goal: Wifi off., knowledge: You want wifi off., first_message: Please switch off my wifi.}
tools: [set_wifi_status]
milestones:
  agreed:
    user_says: Yes, go ahead.
    facts: [{yes: true}]
    accept: [Yes please., "Yep, do it."]
    reject: [No, leave it., "Yes? No, wait."]
  wifi_off: {after: [agreed], world: {settings: {wifi: false}}, tool_call: {set_wifi_status: {on: false}}}
reference:
  - agent: Shall I turn wifi off?
  - user: Yes, go ahead.
  - set_wifi_status(on=false)
  - agent: Wifi is off now.
"""
    report = check(tmp_path, text)
    # "No, leave it." fails although the reference agent acts regardless: the user's line lacks the yes.
    # "Yes? No, wait." answers yes by the first-clause rule, so the facts cannot reject it: reported.
    assert lines(report) == [f"{tmp_path / 'wifi_off.yaml'}: examples: milestone 'agreed': rejected example "
                             "'Yes? No, wait.' passes (similarity 0.8467); add a fact it breaks, e.g. "
                             "{none: [the wrong word]}"]


def test_the_cli_exits_non_zero_on_a_text_milestone_without_facts(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wifi_off.yaml"
    path.write_text((HEAD + "    agent_says: Wifi is off now.\n").lstrip(), encoding="utf-8")
    assert main(["validate", str(path), "--no-determinism"]) == 1
    assert "facts: text milestone 'confirmed' states neither facts nor a floor" in capsys.readouterr().out


def test_examples_are_judged_even_when_another_milestone_lacks_facts(tmp_path: Path) -> None:
    text = GOOD + "  worded:\n    after: [wifi_off]\n    agent_says: Wifi is off now.\n"
    text = text.replace('reject: ["Wifi is on now.", ', 'reject: ["Wifi is off now.", "Wifi is on now.", ')
    report = check(tmp_path, text)
    assert [(problem.check, problem.milestone) for problem in report.errors] == [
        ("facts", "worded"), *[("examples", "confirmed")] * 3]
    # the accepted answers fail the item through the other milestone, which still needs the exact wording
    assert all("milestone 'worded' not reached" in problem.message for problem in report.errors[1:3])
    assert "rejected example 'Wifi is off now.' passes" in report.errors[3].message


def test_facts_that_any_answer_satisfies_make_the_milestone_vacuous(tmp_path: Path) -> None:
    """Only a `none` fact: the filler line that replaces the reference answer reaches it too."""
    report = check(tmp_path, HEAD + """
    agent_says: Wifi is off now.
    facts: [{none: [on]}]
    accept: ["Done, I've turned your wifi off."]
    reject: ["Wifi is on now."]
""")
    assert [(problem.check, problem.milestone) for problem in report.errors] == [("vacuous", "confirmed")]
    assert "it is then matched at message 5 (agent → user: 'Okay.')" in report.errors[0].message
