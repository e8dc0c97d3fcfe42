"""Facts (evaluation/facts.py) at the edges the rest of the suite left open (issue 33, mutation testing):
the texts a failure shows, the bounds of a year and of a position's slack, `allow`ed values that keep
their fact's unit and tolerance, yes/no answers after empty clauses and politeness."""

from __future__ import annotations

from pytest_toolsandbox.evaluation.facts import (
    AnyOf,
    Coordinates,
    Duration,
    Number,
    Phone,
    Time,
    YesNo,
    missing_fact,
    yes_or_no,
)


def test_what_a_fact_requires_reads_as_a_verb_phrase() -> None:
    assert AnyOf(any=["off", "disabled"]).describe() == 'say one of "off", "disabled"'
    assert AnyOf(any=["off", "disabled"]).failure("It is on.") == 'does not say one of "off", "disabled"'
    assert YesNo(yes=True).describe() == "answer yes"
    assert YesNo(yes=False).describe() == "answer no"
    assert Number(number=8.1, label="high").describe() == "state the number 8.1 for high"
    assert Number(number=8.1, tolerance=0.05, unit="°C", label=["high", "max"]).describe() == \
        "state the number 8.1 degree_Celsius (±0.05) for high"
    assert Coordinates(coordinates=(37.5, -122.25)).describe() == "give the position 37.5, -122.25"


def test_a_value_given_beside_a_rival_names_both() -> None:
    assert Time(time="17:00").failure("At 5 pm, or 5:45 pm today.") == 'gives the time 17:00 but also "5:45 pm"'
    assert Time(time="17:00").failure("Possibly 5 pm") == "only guesses the time 17:00"


def test_an_empty_clause_before_the_answer_word_does_not_end_the_search() -> None:
    assert yes_or_no("... Yes, it is on.") is True
    assert yes_or_no("(No) it is off.") is False


def test_politeness_is_no_answer_however_it_goes_on() -> None:
    assert yes_or_no("No problem at all. Yes, it is done.") is True
    assert yes_or_no("No worries about that, yes it is done.") is True


def test_a_year_beside_a_number_contradicts_it_only_when_the_number_may_be_a_year() -> None:
    assert Number(number=1000).failure("It cost 1000 in 2024.") == 'gives the number 1000 but also "2024"'
    assert Number(number=3000).failure("It cost 3000 in 2024.") == 'gives the number 3000 but also "2024"'
    assert Number(number=999).holds("It cost 999 in 2024.")
    assert Number(number=3000.5).holds("It cost 3000.5 in 2024.")


def test_an_allowed_value_keeps_the_facts_unit_and_tolerance() -> None:
    celsius = Number(number=20, unit="°C", tolerance=0.5, allow=[18])
    assert celsius.holds("It is 20 °C, feeling like 64.4 °F.")  # 18 °C, converted
    assert celsius.holds("It is 20 °C, feeling like 18.4 °C.")  # 18 within the fact's tolerance
    assert not celsius.holds("It is 20 °C, feeling like 17.4 °C.")
    drive = Duration(duration="2 h", tolerance=60, allow=["30 min"])
    assert drive.holds("The drive is 2 hours, plus 31 minutes for a break.")
    assert not drive.holds("The drive is 2 hours, plus 32 minutes for a break.")
    phone = Phone(phone="+13105550143", allow=["+14155550127"])
    assert phone.holds("Call 310-555-0143 or his office at 415-555-0127.")
    assert not phone.holds("Call 310-555-0143 or his office at 415-555-0128.")


def test_a_number_that_is_half_of_a_given_position_is_no_rival() -> None:
    position = Coordinates(coordinates=(37.323, -122.0322), tolerance=0.001)
    exit_number = Number(number=5)
    facts = [exit_number, position]
    assert missing_fact("Take exit 5 to 37.323, -122.0322.", facts) is None
    assert missing_fact("Take exit 5 to 37.324, -122.0322.", facts) is None  # at the position's tolerance
    assert exit_number.failure("Take exit 5 to 37.325, -122.0322.", facts) == \
        'gives the number 5 but also "37.325"'
    assert exit_number.failure("Take exit 5 to 38.823, -122.0322.", facts) == \
        'gives the number 5 but also "38.823"'
    equator = Coordinates(coordinates=(0.0, 10.0), tolerance=0)
    assert exit_number.holds("Take exit 5 to 0.000000001, 10.", [exit_number, equator])  # the float slack


def test_a_position_exactly_as_wanted_holds_with_no_tolerance() -> None:
    exact = Coordinates(coordinates=(37.323, -122.0322), tolerance=0)
    assert exact.holds("It is at 37.323, -122.0322.")
    assert exact.failure("It is at 37.323, -122.0323.") == "does not give the longitude -122.032"
