"""Facts: every kind holds on the answers a human judge accepts and fails on the wrong ones."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from pytest_toolsandbox.evaluation.facts import (
    AnyOf,
    Date,
    Name,
    NoneOf,
    Number,
    Phone,
    Phrase,
    YesNo,
    explain_missing,
    missing_fact,
    parse_fact,
    reading,
    yes_or_no,
)
from pytest_toolsandbox.scenario.loader import load_scenario
from pytest_toolsandbox.scenario.milestones import Milestone


@pytest.mark.parametrize(("text", "holds"), [
    ("Done, I've turned your wifi off.", True),
    ("OFF it is.", True),
    ("Wifi: off!", True),
    ("I turned wifi offline", False),
    ("The office is closed.", False),
])
def test_a_phrase_matches_whole_words_case_insensitively(text: str, holds: bool) -> None:
    assert Phrase(phrase="off").holds(text) is holds


@pytest.mark.parametrize(("text", "holds"), [
    ("Wifi is on now.", True),
    ("I've turned it on.", True),
    ("Your phone is ready.", False),  # "on" inside "phone"
    ("One moment.", False),  # "on" inside "one"
    ("Only once.", False),
])
def test_on_is_a_word_not_a_substring(text: str, holds: bool) -> None:
    assert Phrase(phrase="on").holds(text) is holds


def test_a_multi_word_phrase_needs_its_words_in_a_row() -> None:
    fact = Phrase(phrase="low battery mode")
    assert fact.holds("Low-battery mode is now disabled.")
    assert not fact.holds("The battery is low, so I left the mode alone.")


def test_hyphens_between_letters_are_optional_and_letters_of_any_script_make_words() -> None:
    assert Phrase(phrase="wifi").holds("Your Wi-Fi is off.")
    assert Phrase(phrase="wi-fi").holds("Your wifi is off.")
    assert Phrase(phrase="wi-fi").holds("Your Wi Fi is off.")
    assert not Phrase(phrase="wifi").holds("Your Wi Fi is off.")  # two words are not one
    assert Name(name="Zoë Ångström").holds("I texted Zoë.")
    assert not Name(name="Zoë Ångström").holds("I texted Zoe.")


def test_an_apostrophe_keeps_a_word_whole_so_not_does_not_match_couldnt() -> None:
    assert not Phrase(phrase="not").holds("I couldn't do it.")
    assert Phrase(phrase="couldn't").holds("I couldn’t do it.")  # typographic apostrophe


def test_any_holds_when_one_phrase_occurs() -> None:
    fact = AnyOf(any=["off", "disabled"])
    assert fact.holds("Wifi is disabled.")
    assert fact.holds("Wifi is off.")
    assert not fact.holds("Wifi is on.")


def test_none_fails_on_any_forbidden_phrase_and_names_it() -> None:
    fact = NoneOf(none=["on", "couldn't", "unable", "not"])
    assert fact.holds("Done, your wifi is off.")
    assert fact.holds("Your phone's wifi is off.")
    assert not fact.holds("I was unable to turn it off.")
    assert fact.failure("I couldn't turn it off.") == 'says "couldn\'t"'
    assert explain_missing(fact, "Wifi is on now.") == 'says "on"'


@pytest.mark.parametrize(("text", "expected"), [
    ("It costs $12 and 1,234.5 points.", [12.0, 1234.5]),
    ("It is -3 degrees.", [-3.0]),
    ("It is minus 3.5 degrees.", [-3.5]),
    ("Growth was 45%.", [45.0]),
    ("I found twenty-five reminders.", [25.0]),  # one number, not 20 and 5
    ("Call 5-6 people.", [5.0, 6.0]),  # a hyphen between digits is no minus
])
def test_numbers_are_read_as_written(text: str, expected: list[float]) -> None:
    assert [mention.values[0] for mention in reading(text).numbers] == expected


def test_a_number_holds_within_its_tolerance() -> None:
    fact = Number(number=5.63, tolerance=0.05)
    assert fact.holds("It is about 5.6 km away.")
    assert fact.holds("5.68")
    assert not fact.holds("It is 5.7 km away.")
    assert not fact.holds("It is 563 m away.")


def test_a_number_without_tolerance_must_be_equal_after_parsing() -> None:
    fact = Number(number=1234.5)
    assert fact.holds("The total is $1,234.50.")
    assert not fact.holds("The total is 1234.")
    assert Number(number=0.1 + 0.2).holds("0.3")  # 0.30000000000000004: decimal text against binary float
    assert Number(number=2).holds("You have two unread messages.")


@pytest.mark.parametrize(("text", "answer"), [
    ("Yes, it is on.", True),
    ("Yep!", True),
    ("Correct, wifi is enabled.", True),
    ("Let me check. Yes — it's on.", True),
    ("No, wifi is currently off.", False),
    ("Nope, it's off.", False),
    ("I looked it up; no, it is not.", False),
    ("There are no messages.", None),  # "no" inside a clause is no answer
    ("No problem, it is on.", None),  # politeness
    ("Your wifi is on.", None),
])
def test_the_first_clause_led_by_an_answer_word_decides_yes_or_no(text: str, answer: bool | None) -> None:
    assert yes_or_no(text) is answer


def test_a_yes_fact_fails_on_no_and_on_no_answer() -> None:
    assert YesNo(yes=True).holds("Yes, it is.")
    assert not YesNo(yes=True).holds("No, it is not.")
    assert not YesNo(yes=True).holds("It is on.")
    assert YesNo(yes=False).holds("No, wifi is currently off.")
    assert explain_missing(YesNo(yes=False), "Yes, it is.") == "answers yes"
    assert explain_missing(YesNo(yes=True), "It is on.") == "does not answer yes or no"


def test_a_name_holds_for_the_full_first_or_last_name() -> None:
    fact = Name(name="Fredrik Thordendal")
    assert fact.holds("I texted fredrik thordendal.")
    assert fact.holds("Fredrik's number is saved.")
    assert fact.holds("Message sent to Mr. Thordendal.")
    assert not fact.holds("Message sent to Fred.")
    assert not fact.holds("Message sent to Tomas Haake.")


@pytest.mark.parametrize(("text", "holds"), [
    ("It is one of: 555-0100, Kenji Watanabe, Sam Whitaker.", False),  # a marker, then a colon list
    ("Possibly Sam Whitaker, Kenji Watanabe.", False),  # a marker, then a comma list
    ("It's either 555-0100, Kenji Watanabe, Sam Whitaker or Diego.", False),
    ("Maybe Sam Whitaker and Kenji Watanabe.", False),
    ("Kenji Watanabe, 555-0100 or Sam Whitaker.", False),  # short items closed by "or"
    ("Kenji Watanabe, 555-0100, or Sam Whitaker.", False),
    ("That's Kenji Watanabe, your dentist.", True),
    ("Kenji Watanabe, your dentist, can be reached by phone or email.", True),  # a clause, not an item
    ("I'm not sure about Sam, but the number belongs to Kenji Watanabe.", True),  # "but" ends the list
])
def test_a_name_offered_as_one_item_of_alternatives_is_not_stated(text: str, holds: bool) -> None:
    assert Name(name="Kenji Watanabe").holds(text) is holds


def test_phrases_listed_as_the_answer_are_stated_and_listed_as_alternatives_are_not() -> None:
    both = "You have two reminders this afternoon: call Kenji and pick up the dry cleaning."
    assert Phrase(phrase="call Kenji").holds(both) and AnyOf(any=["dry cleaning"]).holds(both)
    restated = "At $91.30 a share, 8 shares are $730.40, or £577.02."
    assert Phrase(phrase="577.02").holds(restated)  # the same amount in another unit, not an alternative
    guess = "It is one of: call Kenji, pick up the dry cleaning."
    assert not Phrase(phrase="call Kenji").holds(guess) and not AnyOf(any=["dry cleaning"]).holds(guess)


@pytest.mark.parametrize(("text", "holds"), [
    ("His number is +12453344098.", True),
    ("His number is +1 (245) 334-4098.", True),
    ("His number is (245) 334-4098.", True),
    ("His number is 245.334.4098.", True),
    ("His number is 245-334-4099.", False),
    ("His number is 334-4098.", False),
])
def test_a_phone_number_holds_in_any_common_formatting(text: str, holds: bool) -> None:
    assert Phone(phone="+12453344098").holds(text) is holds


@pytest.mark.parametrize(("text", "holds"), [
    ("It is on May 25.", True),
    ("It is on Monday, May 25th, 2026.", True),
    ("It is on 25 May.", True),
    ("It is on the 25th of May.", True),
    ("It is on 5/25.", True),
    ("It is on 05/25/26.", True),
    ("It is on 2026-05-25.", True),
    ("It is on May 26.", False),
    ("It is on May 2.", False),
    ("It is on May 25, 2025.", False),
    ("It is on 15/25.", False),
])
def test_a_date_holds_in_common_written_forms(text: str, holds: bool) -> None:
    assert Date(date=datetime.date(2026, 5, 25)).holds(text) is holds


def test_missing_fact_returns_the_first_fact_that_does_not_hold() -> None:
    facts = [parse_fact("off"), parse_fact({"none": ["on", "couldn't"]})]
    assert missing_fact("Done, I've turned your wifi off.", facts) is None
    assert missing_fact("Wifi is on now.", facts) == facts[0]
    assert missing_fact("I couldn't turn your wifi off.", facts) == facts[0]  # "off" is denied, so not said
    assert missing_fact("Wifi is off, but I couldn't check cellular.", facts) == facts[1]
    assert explain_missing(facts[0], "Wifi is on now.") == 'does not say "off"'


def test_an_unknown_fact_form_is_refused_with_the_forms_that_exist() -> None:
    with pytest.raises(ValidationError, match=r"none of: .*\{number: N"):
        Milestone(agent_says="Wifi is off.", facts=[{"maybe": "off"}])
    with pytest.raises(ValidationError, match="quote the phrase"):
        Milestone(agent_says="Wifi is off.", facts=[False])
    with pytest.raises(ValidationError, match=r"'call me' is not a phone number .*international form"):
        Milestone(agent_says="Call him.", facts=[{"phone": "call me"}])
    with pytest.raises(ValidationError, match="apply to the agent_says or user_says"):
        Milestone(world={"settings": {"wifi": False}}, facts=["off"])


def test_yaml_reads_fact_words_as_written(tmp_path: Path) -> None:
    """Unquoted `off`, `on`, `yes` and `+1…` stay words: YAML 1.1 would make them booleans and ints."""
    path = tmp_path / "wifi_off.yaml"
    path.write_text(
        "description: Turn wifi off.\ncategories: [single_tool_call]\n"
        "user: {goal: wifi off, first_message: Please switch off my wifi.}\n"
        "tools: [set_wifi_status]\n"
        "milestones:\n"
        "  wifi_off: {world: {settings: {wifi: false}}}\n"
        "  confirmed:\n"
        "    after: [wifi_off]\n"
        "    agent_says: Wifi is off now.\n"
        "    facts: [off, {none: [on, yes]}, {yes: true}, {phone: +12453344098}, {date: 2026-05-25}]\n"
        "    accept: [Yes, Done.]\n"
        "reference:\n  - set_wifi_status(on=false)\n  - agent: Wifi is off now.\n",
        encoding="utf-8")
    milestone = load_scenario(path).milestones["confirmed"]
    assert milestone.facts == [Phrase(phrase="off"), NoneOf(none=["on", "yes"]), YesNo(yes=True),
                               Phone(phone="+12453344098"), Date(date=datetime.date(2026, 5, 25))]
    assert milestone.accept == ["Yes", "Done."]


def test_facts_on_a_minefield_are_refused_naming_the_field(tmp_path: Path) -> None:
    from pytest_toolsandbox.scenario.loader import ScenarioError

    path = tmp_path / "m.yaml"
    path.write_text("categories: [single_tool_call]\nuser: {goal: x, first_message: hi}\ntools: [set_wifi_status]\n"
                    "minefields:\n  rude: {agent_says: Go away., facts: [away]}\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"field minefields\.rude\.facts: facts and example answers belong to"):
        load_scenario(path)
