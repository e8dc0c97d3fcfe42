"""Values in answers (values.py, units.py, clauses.py) and the facts that judge them: each case is a
form a human judge reads one way, so a parser that reads it another way fails here."""

from __future__ import annotations

import datetime

import pytest
from pydantic import ValidationError

from pytest_toolsandbox.evaluation.clauses import layout
from pytest_toolsandbox.evaluation.facts import (
    AnyOf,
    Coordinates,
    Date,
    Duration,
    Name,
    NoneOf,
    Number,
    Phone,
    Phrase,
    Stated,
    Time,
    YesNo,
    missing_fact,
    parse_fact,
    yes_or_no,
)
from pytest_toolsandbox.evaluation.units import comparable, convert, unit_named
from pytest_toolsandbox.evaluation.values import Reading, clock_minutes, digits_for_words, duration_seconds
from pytest_toolsandbox.scenario.milestones import Milestone
from pytest_toolsandbox.suite.mutants import Mutant, mutants


@pytest.mark.parametrize(("text", "expected"), [
    ("twenty-five minutes", "25 minutes"),
    ("one hundred and forty-five", "145"),
    ("three and a half miles", "3.5 miles"),
    ("two hours and 25 minutes", "2 hours and 25 minutes"),  # "two" before a duration word
    ("one o'clock", "1 o'clock"),
    ("half past three", "half past 3"),
    ("one of them", "one of them"),  # a pronoun stays a word
    ("It’s −3", "It's -3"),
])
def test_number_words_become_digits_where_they_are_numbers(text: str, expected: str) -> None:
    assert digits_for_words(text) == expected


@pytest.mark.parametrize(("text", "minutes"), [
    ("at 5 pm", (1020,)),
    ("at 5:00 p.m.", (1020,)),
    ("at 17:00", (1020,)),
    ("at five in the afternoon", (1020,)),
    ("at eleven o'clock this morning", (660,)),
    ("at 7 tonight", (1140,)),
    ("at 7 in the evening", (1140,)),
    ("at 12 am", (0,)),
    ("at 12:30 PM", (750,)),
    ("at three thirty pm", (930,)),
    ("at noon", (720,)),
    ("at midnight", (0,)),
    ("at half past 4", (270, 990)),
    ("at a quarter to 6", (345, 1065)),
    ("at 5 o'clock", (300, 1020)),  # either half of the day
    ("at 10:30", (630, 1350)),
])
def test_clock_times_in_common_forms(text: str, minutes: tuple[int, ...]) -> None:
    (mention,) = Reading(text).times
    assert mention.values == minutes


@pytest.mark.parametrize("text", ["at 25:00", "at 13 pm", "10:75", "Room 5 is free", "$5.30"])
def test_what_is_no_clock_time(text: str) -> None:
    assert Reading(text).times == []


def test_a_scenario_time_is_24_hour_or_one_unambiguous_form() -> None:
    assert clock_minutes("10:30") == 630
    assert clock_minutes("17:05") == 1025
    assert clock_minutes("5 pm") == 1020
    with pytest.raises(ValueError, match="not one time of day"):
        clock_minutes("5 o'clock")
    with pytest.raises(ValueError, match="not one time of day"):
        clock_minutes("soon")


@pytest.mark.parametrize(("text", "seconds"), [
    ("2 h 25 min", 8700),
    ("2 hours and 25 minutes", 8700),
    ("two hours and twenty-five minutes", 8700),
    ("145 minutes", 8700),
    ("2 hours, 46 minutes and 40 seconds", 10000),
    ("10,000 seconds", 10000),
    ("half an hour", 1800),
    ("an hour", 3600),
    ("1.5 hours", 5400),
])
def test_durations_add_their_parts(text: str, seconds: int) -> None:
    (mention,) = Reading(text).durations
    assert mention.values == (seconds,)


@pytest.mark.parametrize("text", ["oat milk and coffee beans", "at 10:30 AM", "a salad"])
def test_words_that_end_like_units_are_no_duration(text: str) -> None:
    assert Reading(text).durations == []


def test_a_scenario_duration_is_one_duration() -> None:
    assert duration_seconds("2 h 25 min") == 8700
    with pytest.raises(ValueError, match="not one duration"):
        duration_seconds("later")


@pytest.mark.parametrize(("text", "values"), [
    ("37.323° N, 122.0322° W", [("latitude", 37.323), ("longitude", -122.0322)]),
    ("33.8688° S, 151.2093° E", [("latitude", -33.8688), ("longitude", 151.2093)]),
    ("latitude 37.323, longitude -122.0322", [("latitude", 37.323), ("longitude", -122.0322)]),
    ("longitude -122.0322 and latitude 37.323", [("longitude", -122.0322), ("latitude", 37.323)]),
    ("You are at 37.323, -122.0322.", [("latitude", 37.323), ("longitude", -122.0322)]),
    ("Latitude 37.323, -122.0322.", [("latitude", 37.323), ("longitude", -122.0322)]),  # the bare half: the other
    ("37.323 degrees north, 122.0322 degrees west", [("latitude", 37.323), ("longitude", -122.0322)]),
    ("You are at 37.323, -122.0322, about 2.5 miles from home.", [("latitude", 37.323), ("longitude", -122.0322)]),
    ("It is 18.5 °C, the cab costs $12.50 and it is 2.5 km.", []),
    ("The 2.5 and 3.75 mile loops.", []),
    ("Rated 4.5 or 4.6 by 12 reviewers.", []),
    ("37.323°, -122.0322°", [("latitude", 37.323), ("longitude", -122.0322)]),
    ("37.323, -122.0322 or -122.0332", [("latitude", 37.323), ("longitude", -122.0322), ("longitude", -122.0332)]),
    ("Your heart rate dropped 1.5 s after 2.5 S of rest.", [("latitude", -2.5)]),
])
def test_coordinates_keep_their_axis_and_sign(text: str, values: list[tuple[str, float]]) -> None:
    assert [(mention.unit, mention.values[0]) for mention in Reading(text).coordinates] == values


def test_a_position_fails_on_a_dropped_sign_a_wrong_hemisphere_or_a_second_position() -> None:
    fact = Coordinates(coordinates=(37.323, -122.0322))
    assert fact.holds("You're at 37.323° N, 122.0322° W.")
    assert fact.failure("You're at 37.323, 122.0322.") == "does not give the longitude -122.0322"
    assert not fact.holds("You're at 37.323° N, 122.0322° E.")
    assert fact.failure("Latitude 37.323 or 37.332, longitude -122.0322.") == (
        "gives the latitude 37.323 but also 37.332")
    assert not fact.holds("It is not true that you are at 37.323, -122.0322.")
    assert not fact.holds("Your position is saved.")
    assert Coordinates(coordinates=(37.323, -122.0322), required=False).holds("Your position is saved.")
    assert not Coordinates(coordinates=(37.323, -122.0322), required=False).holds("Sent 37.323, 122.0322.")
    with pytest.raises(ValidationError, match="not \\[latitude, longitude\\]"):
        Coordinates(coordinates=(122.0322, 37.323))


POSITION = "You are at 37.323, -122.0322"
BESIDE = [", about 2.5 miles from home.", ". It is 18.5 °C there.", ", $12.50 by cab.",
          ", 2.5 km from home.", " (accurate to 12.5 m).", ". Tomorrow: 52.3°F, then 54.1°F."]


def _coordinate_mutants(reference: str) -> list[Mutant]:
    """The project's generated mutants of the position (suite/mutants.py), and the slips it does not
    generate: a dropped minus, the pair swapped, a wrong hemisphere, the right pair among alternatives."""
    milestone = Milestone(agent_says="x", facts=[{"coordinates": [37.323, -122.0322]}])
    generated = [mutant for mutant in mutants(milestone, reference, ["Kenji Watanabe"])
                 if not mutant.id.startswith("unchecked value")]  # the other values: not the position's to check
    slips = {"dropped minus": reference.replace("-122.0322", "122.0322"),
             "swapped pair": reference.replace("37.323, -122.0322", "-122.0322, 37.323"),
             "wrong hemisphere": reference.replace("37.323, -122.0322", "37.323° S, 122.0322° W"),
             "pair among alternatives": reference.replace("37.323, -122.0322", "37.323, -122.0322 or 37.4, -122.1")}
    return generated + [Mutant(identifier, text, True) for identifier, text in slips.items()]


@pytest.mark.parametrize("beside", BESIDE)
def test_decimals_beside_a_position_are_no_rival_position_but_each_slip_still_fails(beside: str) -> None:
    reference = POSITION + beside
    fact = Coordinates(coordinates=(37.323, -122.0322))
    optional = Coordinates(coordinates=(37.323, -122.0322), required=False)
    assert fact.holds(reference) and optional.holds(reference)
    found = _coordinate_mutants(reference)
    assert {"neighbouring digit: 37.323 → 37.324", "swapped values: 37.323 ↔ -122.0322", "dropped minus",
            "pair among alternatives"} <= {mutant.id for mutant in found}
    for mutant in found:
        assert fact.holds(mutant.text) is not mutant.wrong, mutant
        if mutant.wrong and mutant.id not in ("negation", "done claim", "silence"):  # other facts' to judge
            assert not optional.holds(mutant.text), mutant


def test_units_have_one_canonical_name_and_convert_within_their_quantity() -> None:
    assert unit_named("°C") == unit_named("degrees Celsius") == "degree_Celsius"
    assert unit_named("euros") == unit_named("€") == "EUR"
    with pytest.raises(ValueError, match="unknown unit 'parsecs'"):
        unit_named("parsecs")
    assert comparable("kilometer", "mile") and not comparable("kilometer", "gram")
    assert comparable("degree", "degree_Celsius") and comparable("pound", "GBP") and comparable("pound", "gram")
    assert not comparable("EUR", "USD")
    assert convert(100, "degree_Celsius", "degree_Fahrenheit") == pytest.approx(212)
    assert convert(3.5, "mile", "kilometer") == pytest.approx(5.6327, abs=1e-4)
    assert convert(5, "pound", "GBP") == 5


def test_a_number_with_a_unit_counts_in_that_unit_or_correctly_converted() -> None:
    fact = Number(number=0.5, tolerance=0.05, unit="°C")
    assert fact.holds("It's 0.5°C.")
    assert fact.holds("It's 0.5 degrees.")  # the scale unsaid is not a wrong scale
    assert fact.holds("It's 0.5 °C (32.9 °F).")
    assert fact.holds("It's 0.5 °C (about 33 °F).")  # rounded as written
    assert not fact.holds("It's 0.5 °C (34 °F).")
    assert not fact.holds("It's 0.5°F.")
    assert not fact.holds("It's 14.2°F.")


def test_a_unit_fact_ignores_counted_things_and_other_quantities_but_not_rival_amounts() -> None:
    fact = Number(number=577.02, tolerance=0.05, unit="GBP")
    assert fact.holds("8 Disney shares cost £577.02 ($730.40 at $91.30 each).")
    assert fact.failure("8 shares cost between £557 and £597, most likely £577.02.") == (
        'gives the number 577.02 GBP (±0.05) but also "£557", "£597"')
    assert not fact.holds("8 shares cost £577.20.")
    assert not fact.holds("8 shares cost £577.02 or 597.")


def test_a_unitless_number_is_exclusive_unless_allowed_or_another_facts() -> None:
    fact = Number(number=3)
    assert fact.holds("You have 3 reminders, all due in 2026.")  # a year is no rival
    assert fact.failure("You have 3 or 4 reminders.") == 'gives the number 3 but also "4"'
    assert Number(number=3, allow=[2]).holds("3 texts: 2 from him and one from you.")
    assert missing_fact("3 texts: 2 from him.", [Number(number=3), Number(number=2, required=False)]) is None
    assert fact.holds("You have three reminders.")
    assert not Number(number=25).holds("It is 20 and 5.")
    assert Number(number=25).holds("It is twenty-five.")


def test_a_number_only_guessed_or_denied_is_not_stated() -> None:
    fact = Number(number=174)
    assert fact.failure("Possibly 174 days.") == "only guesses the number 174"
    assert fact.failure("It is not 174 days.") == "does not state the number 174"
    assert not fact.holds("No, it is not true that there are 174 days left.")
    assert not fact.holds("It is not true that I checked. There are 174 days left.")  # an opening denial denies all
    assert fact.holds("It's not 175 days: it's 174.")


def test_labels_bind_values_to_what_they_name() -> None:
    saturday = Number(number=8.1, tolerance=0.05, unit="°C", label="saturday")
    sunday = Number(number=13.4, tolerance=0.05, unit="°C", label="sunday")
    facts = [saturday, sunday]
    assert missing_fact("Saturday's high is 8.1°C and Sunday's is 13.4°C.", facts) is None
    assert missing_fact("Highs of 8.1 degrees on Saturday and 13.4 on Sunday.", facts) is None
    assert missing_fact("On Saturday, the high is 8.1°C; on Sunday, 13.4°C.", facts) is None
    assert missing_fact("On Saturday, 8.1°C, and on Sunday, 13.4°C.", facts) is None  # labels lead
    assert missing_fact("8.1°C, on Saturday, and 13.4°C, on Sunday.", facts) is None  # values lead
    assert missing_fact("On Saturday, 13.4°C, and on Sunday, 8.1°C.", facts) is saturday
    assert missing_fact("On Sunday, expect rain, and 8.1°C on Saturday, 13.4°C on Sunday.", facts) is None  # own clause
    assert missing_fact("Saturday 13.4°C, Sunday 8.1°C.", facts) is saturday
    assert missing_fact("Saturday's high is 13.4°C and Sunday's is 8.1°C.", facts) is saturday
    tent = Time(time="14:30", label=["tent"], required=False)
    report = Time(time="15:30", label=["report"], required=False)
    assert missing_fact("At 2:30 PM, dig out the tent, and at 3:30 PM, send the report.", [tent, report]) is None
    assert missing_fact("At 3:30 PM, dig out the tent, and at 2:30 PM, send the report.", [tent, report]) is tent
    price = Number(number=121.75, unit="USD")
    change = Number(number=3.12, unit="USD", label=["up"], required=False)
    assert missing_fact("NVDA trades at $121.75, up $3.12 today.", [price, change]) is None
    assert missing_fact("NVDA trades at $3.12, up $121.75 today.", [price, change]) is price


def test_a_time_is_exclusive_and_may_be_optional() -> None:
    fact = Time(time="17:00")
    assert fact.holds("I'll remind you at five in the afternoon.")
    assert fact.holds("I'll remind you at 5 o'clock.")
    assert fact.failure("At 5 pm or 5:45 pm today.") == 'gives the time 17:00 but also "5:45 pm"'
    # the period that ends a sentence is not part of the time quoted; the dots of "p.m." are
    assert fact.failure("At 5 pm or 5:45 pm.") == 'gives the time 17:00 but also "5:45 pm"'
    assert fact.failure("At 5 pm or 5:45 p.m.") == 'gives the time 17:00 but also "5:45 p.m."'
    assert not fact.holds("At 5 am.")
    assert Time(time="12:30", allow=["10:30"]).holds("It now goes off at 12:30 PM instead of 10:30 AM.")
    assert not Time(time="12:30").holds("It now goes off at 12:30 PM instead of 10:30 AM.")
    optional = Time(time="11:00", required=False)
    assert optional.holds("Your reminder is set.")
    assert optional.failure("Your reminder is set for 11:01.") == "gives '11:01' instead: it should give the time 11:00"
    with pytest.raises(ValidationError, match="not one time of day"):
        Time(time="17:00", allow=["sometime"])


def test_a_fact_parses_its_own_time_or_duration_once_not_at_every_mention() -> None:
    clock_minutes.cache_clear()
    duration_seconds.cache_clear()
    time = Time(time="5 pm", allow=["7 in the evening"])
    duration = Duration(duration="2 hours and 25 minutes", allow=["90 minutes"])
    answer = "At 5 pm, 6 pm or 7 in the evening; 2 hours and 25 minutes, 90 minutes or 3 h."
    for _ in range(3):
        assert not time.holds(answer) and not duration.holds(answer)
    assert (clock_minutes.cache_info().misses, duration_seconds.cache_info().misses) == (2, 2)  # spec and allow


def test_a_duration_is_read_in_any_of_its_forms_and_exclusive() -> None:
    fact = Duration(duration="2 h 25 min")
    assert fact.holds("It lasts 2 h 25 min (145 minutes).")
    assert fact.holds("It lasts two hours and twenty-five minutes.")
    assert not fact.holds("It lasts 2 hours and 35 minutes.")
    assert not fact.holds("It lasts 2 hours and 25 minutes, or maybe 2 hours and 35 minutes.")
    assert Duration(duration="2 h 46 min 40 s", allow=["10000 seconds"]).holds(
        "10,000 seconds is 2 hours, 46 minutes and 40 seconds.")


def test_a_phone_number_must_agree_in_country_and_stand_alone() -> None:
    fact = Phone(phone="+12453344098")
    assert fact.holds("Call 245 33 44 098.")
    assert not fact.holds("Call +44 245 334 4098.")
    assert fact.failure("Call (245) 334-4098 or (245) 334-4089.") == (
        'gives the phone number +12453344098 but also "(245) 334-4089"')
    assert Phone(phone="+12453344098", required=False).holds("The contact is saved.")
    assert not Phone(phone="+12453344098", required=False).holds("Saved with (245) 334-4089.")


@pytest.mark.parametrize(("text", "phone", "number"), [
    ("It is 1.2453344098.", False, 1.2453344098),  # one point between the digits: a decimal
    ("It is 2453344098.5 in all.", False, 2453344098.5),
    ("It is 12345.2453344098.", False, 12345.2453344098),  # only the fraction's ten digits look like a phone
    ("5.2453344098 is the ratio.", False, 5.2453344098),  # a decimal point right at the start of the text
    ("2453344098 is his number.", True, None),
    ("Call 1.245.334.4098.", True, None),  # several points: a phone
    ("Call 245.334.4098.", True, None),
])
def test_ten_digits_next_to_a_decimal_point_are_a_number_not_a_phone(
        text: str, phone: bool, number: float | None) -> None:
    assert Phone(phone="+12453344098").holds(text) is phone
    if number is not None:
        assert Number(number=number).holds(text)


def test_a_date_checks_a_weekday_and_year_written_with_it_and_rival_dates() -> None:
    fact = Date(date=datetime.date(2026, 6, 20))
    assert fact.holds("It is Saturday, June 20, 2026.")
    assert not fact.holds("It is Friday, June 20, 2026.")
    assert not fact.holds("It is June 20, 2025.")
    assert fact.failure("It is June 20 or June 21.") == 'gives the date June 20, 2026 but also "June 21"'
    assert Date(date=datetime.date(2026, 6, 20), allow=["2026-03-12"]).holds("From March 12 it is June 20.")


@pytest.mark.parametrize(("text", "answer"), [
    ("Indeed not.", False),
    ("Certainly not.", False),
    ("Not at all, it's off.", False),
    ("Yes, it is.", True),
    ("Indeed, it is on.", True),
    ("No, it is not true that no, wifi is off.", None),  # takes both sides
    ("No, it's not true that your wifi is on.", False),
])
def test_yes_or_no_reads_polarity(text: str, answer: bool | None) -> None:
    assert yes_or_no(text) is answer


def test_an_optional_yes_allows_no_answer_word_but_not_a_no_or_both() -> None:
    fact = YesNo(yes=True, required=False)
    assert fact.holds("Low battery mode is on.")
    assert fact.failure("No, low battery mode is on.") == "answers no"
    assert fact.failure("Yes or no, it is on.") == "answers both yes and no"
    assert not YesNo(yes=True).holds("Low battery mode is on.")


def test_phrases_count_where_stated_forbidden_words_where_said_outright() -> None:
    assert not Phrase(phrase="off").holds("Wifi might be off now, or possibly still on.")
    assert Phrase(phrase="off").holds("Wifi is off, so you may not get notifications.")  # the guess is another clause
    assert not Phrase(phrase="partner").holds("Olivia is now your partner or your neighbor.")
    assert not AnyOf(any=["Diego", "brother"]).holds("I texted Diego or Sam.")
    assert NoneOf(none=["on"]).holds("Wifi is off, not on.")
    assert NoneOf(none=["can't"]).holds('Priya wrote: "I can\'t make it." I forwarded it to Diego.')
    assert not NoneOf(none=["lunch"], quotes=True).holds('She asked: "Lunch on Friday?"')


def test_a_contains_target_is_stated_not_just_contained() -> None:
    fact = Stated(contains="5.6")
    assert fact.holds("That's 5.63 km.")
    assert not fact.holds("That's 5.6 or 6.5 km.")
    assert not fact.holds("It is not true that it is 5.6 km.")
    assert Stated(contains="629.37").holds("One share is $684.10, or 629.37 EUR.")  # the amount restated


def test_a_name_offered_with_another_or_denied_is_not_named() -> None:
    fact = Name(name="Kenji Watanabe")
    assert fact.holds("It's Kenji's number.")
    assert not fact.holds("That number belongs to Kenji Watanabe or Sam Whitaker.")
    assert not fact.holds("That number is not Kenji Watanabe's.")


def test_an_opening_denial_covers_the_whole_answer_and_a_later_one_its_sentence() -> None:
    opening = layout("It is not true that wifi is on. It is off.")
    assert not opening.asserted(opening.sentences[1][0] + 1)
    later = layout("No, it is not true that wifi is on. It is off.")
    assert later.asserted(later.sentences[1][0] + 1)


def test_new_fact_forms_parse_and_bad_values_name_the_fix() -> None:
    assert parse_fact({"time": "17:00"}) == Time(time="17:00")
    assert parse_fact({"duration": "145 minutes"}) == Duration(duration="145 minutes")
    assert parse_fact({"coordinates": [37.323, -122.0322]}) == Coordinates(coordinates=(37.323, -122.0322))
    assert parse_fact({"number": 5, "unit": "km"}).unit == "kilometer"  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="unknown unit 'furlongs'"):
        parse_fact({"number": 5, "unit": "furlongs"})
    with pytest.raises(ValidationError, match="not one duration"):
        parse_fact({"duration": "a while"})


def test_a_correction_before_the_answer_denies_nothing_after_it() -> None:
    assert Time(time="17:45").holds("That is not correct, the meeting is at 5:45 pm.")
    assert not Time(time="17:45").holds("It is not true that the meeting is at 5:45 pm.")


def test_filler_with_a_or_an_is_no_rival_duration() -> None:
    assert Duration(duration="2 h 25 min").holds("Give me a second. The drive takes 2 hours and 25 minutes.")
    assert Duration(duration="1 h 30 min").holds("It takes an hour and a half.")


def test_a_decade_and_a_network_name_carry_no_unit() -> None:
    assert unit_named("s") is not None  # "5 s" still reads as seconds, with a space
    reading = Reading("It was a hit in the 1990s and now runs on 5G.")
    assert [(mention.values, mention.unit) for mention in reading.numbers] == [((1990.0,), None), ((5.0,), None)]


@pytest.mark.parametrize(("number", "text", "holds"), [
    (1.0, "It is 1.0000000009.", True),  # a written decimal and a binary float differ by less than 1e-9
    (1.0, "It is 1.0000000015.", False),
    (1000.0, "It is 1000.0000009.", True),  # the slack grows with the number: 1e-9 of it
    (1000.0, "It is 1000.0000015.", False),
    (-1000.0, "It is -1000.0000009.", True),
])
def test_an_exact_number_allows_only_the_slack_of_a_decimal_read_as_a_float(
        number: float, text: str, holds: bool) -> None:
    assert Number(number=number).holds(text) is holds


@pytest.mark.parametrize(("fact", "text"), [
    (Number(number=0), "It is {}."),
    (Number(number=0, unit="m"), "It is {} m."),  # the fact's own unit
    (Number(number=0, unit="m"), "It is {} km."),  # converted
])
def test_the_float_slack_includes_its_bound(fact: Number, text: str) -> None:
    """0.000000001 is exactly the slack of 1e-9 as a float: it is within it, a hair more is not."""
    assert fact.holds(text.format("0.000000001"))
    assert not fact.holds(text.format("0.0000000011"))


def test_a_number_as_close_as_the_slack_to_a_coordinate_of_the_milestone_is_that_coordinate() -> None:
    position = Coordinates(coordinates=[0.0, 10.0], tolerance=0.0)
    assert Number(number=5).holds("5 stops, 0.000000001 away", [position])
    assert not Number(number=5).holds("5 stops, 0.0000000011 away", [position])


@pytest.mark.parametrize("text", [", and it is on", "It is on, and", "It is on; and, so it is.", "Yes. , and no."])
def test_separators_next_to_each_other_or_at_an_edge_leave_no_empty_clause(text: str) -> None:
    spans = layout(text)
    assert spans.clauses and all(end > start for start, end in spans.clauses)
    assert all(end > start for start, end in spans.sentences)


def test_a_position_on_a_separator_lies_in_no_clause_or_sentence() -> None:
    """Spans end where their separator begins: a word that starts on "then" or on a full stop belongs
    to neither neighbour (the empty span), and the character before it to the span it ends."""
    text = "The high is 8.1 then the low is 3. Bye."
    spans = layout(text)
    then, stop = text.index("then"), text.index(". Bye")
    assert (spans.clause_of(then - 1), spans.clause_of(then), spans.clause_of(then + 4)) == ((0, then), (0, 0),
                                                                                          (then + 4, stop))
    assert (spans.sentence_of(stop - 1), spans.sentence_of(stop), spans.sentence_of(stop + 2)) == (
        (0, stop), (0, 0), (stop + 1, len(text) - 1))


def test_a_label_that_starts_on_a_joining_word_is_not_in_the_clause_before_it() -> None:
    """"then low" begins on the word that ends the high's clause: 8.1 stays the high's, 3 the low's."""
    high, low = Number(number=8.1, label="high"), Number(number=3, label="then low")
    assert missing_fact("The high is 8.1 then low 3.", [high, low]) is None
    assert missing_fact("The high is 3 then low 8.1.", [high, low]) is high
