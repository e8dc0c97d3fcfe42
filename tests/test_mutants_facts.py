"""Facts (evaluation/facts.py) at the edges the rest of the suite left open (issue 33, mutation testing):
the texts a failure shows, the bounds of a year and of a position's slack, `allow`ed values that keep
their fact's unit and tolerance, yes/no answers after empty clauses and politeness."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation.facts import (
    AnyOf,
    Coordinates,
    Duration,
    Name,
    NoneOf,
    Number,
    Phone,
    Phrase,
    Stated,
    Time,
    YesNo,
    explain_missing,
    missing_fact,
    parse_fact,
    yes_or_no,
)
from pytest_toolsandbox.evaluation.values import Reading

SATURDAY = Number(number=8.1, tolerance=0.05, unit="°C", label="saturday")
SUNDAY = Number(number=13.4, tolerance=0.05, unit="°C", label="sunday")
FRIDAY = Number(number=5, tolerance=0.05, unit="°C", label="friday", required=False)


def test_what_a_fact_requires_reads_as_a_verb_phrase() -> None:
    assert AnyOf(any=["off", "disabled"]).describe() == 'say one of "off", "disabled"'
    assert AnyOf(any=["off", "disabled"]).failure("It is on.") == 'does not say one of "off", "disabled"'
    assert YesNo(yes=True).describe() == "answer yes"
    assert YesNo(yes=False).describe() == "answer no"
    assert Number(number=8.1, label="high").describe() == "state the number 8.1 for high"
    assert Number(number=8.1, tolerance=0.05, unit="°C", label=["high", "max"]).describe() == \
        "state the number 8.1 degree_Celsius (±0.05) for high"
    assert Coordinates(coordinates=(37.323, -122.0322)).describe() == "give the position 37.323, -122.0322"
    assert Number(number=1234567).describe() == "state the number 1234567"  # every digit, no exponent


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


def test_a_position_exactly_as_wanted_holds_with_no_tolerance() -> None:
    exact = Coordinates(coordinates=(37.323, -122.0322), tolerance=0)
    assert exact.holds("It is at 37.323, -122.0322.")
    assert exact.failure("It is at 37.323, -122.0323.") == "does not give the longitude -122.0322"


def test_a_converted_value_counts_within_the_tolerance_in_its_own_unit_or_rounded_as_written() -> None:
    twenty = Number(number=20, unit="°C", tolerance=1)  # 68 °F, ±1.8 °F
    assert twenty.holds("It is 69 °F.")
    assert twenty.holds("It is 69.8 °F.")  # at the edge
    assert not twenty.holds("It is 70 °F.")
    assert not twenty.holds("It is 66 °F.")
    half = Number(number=0.523, unit="°C")  # 32.9414 °F
    assert half.holds("It is 0.523 °C (32.9 °F).")  # rounded to the decimals written
    assert half.holds("It is 0.523 °C (33 °F).")
    assert not half.holds("It is 0.523 °C (32.8 °F).")


def test_the_float_slack_grows_with_the_number() -> None:
    assert Number(number=1000000.01, tolerance=0.01).holds("The total is 1,000,000.02.")
    assert not Number(number=1000000.01, tolerance=0.01).holds("The total is 1,000,000.03.")


def test_zero_to_three_in_words_state_only_those_numbers() -> None:
    assert Number(number=0).holds("There are zero messages.")
    assert Number(number=1).holds("There is one message.")
    assert Number(number=2).holds("Two doors.")
    assert Number(number=3).holds("Three's enough.")  # a word text2num leaves
    assert not Number(number=2.5, tolerance=0.5).holds("It has two doors.")


def test_a_currency_before_a_number_names_its_unit() -> None:
    assert [(mention.values, mention.unit) for mention in Reading("CAD 12.50 in all").numbers] == [((12.5,), "CAD")]
    assert [(mention.values, mention.unit) for mention in Reading("The fare: CHF 40").numbers] == [((40.0,), "CHF")]
    assert [(mention.values, mention.unit) for mention in Reading("It costs $ 5").numbers] == [((5.0,), "USD")]
    assert [(mention.values, mention.unit) for mention in Reading("ABCAD 5").numbers] == [((5.0,), None)]


def test_an_explanation_judges_the_fact_with_its_milestones_other_facts() -> None:
    five, seven = Number(number=5), Number(number=7)
    assert explain_missing(five, "It is 7 and 9.", [five, seven]) == "gives '9' instead: it should state the number 5"
    assert explain_missing(five, "It is 7 and 9.") == "gives '7', '9' instead: it should state the number 5"


def test_a_name_offered_as_an_alternative_is_not_named_by_its_last_name() -> None:
    assert Name(name="Kenji Watanabe").failure("Call Sam or Kenji Watanabe.") == "does not name Kenji Watanabe"
    assert Name(name="Kenji Watanabe").holds("Call Kenji Watanabe.")


def test_a_label_at_the_start_of_the_answer_binds_its_value() -> None:
    assert SUNDAY.failure("Saturday's high is 13.4°C.", [SATURDAY, SUNDAY]) == \
        "does not state the number 13.4 degree_Celsius (±0.05) for sunday"
    assert SATURDAY.failure("Saturday's high is 13.4°C.", [SATURDAY, SUNDAY]) == \
        "gives '13.4' instead: it should state the number 8.1 degree_Celsius (±0.05) for saturday"


def test_the_nearest_label_in_a_values_clause_binds_it() -> None:
    assert SUNDAY.holds("Saturday is rainy with Sunday at 13.4°C.", [SATURDAY, SUNDAY])
    assert not SATURDAY.holds("Saturday is rainy with Sunday at 13.4°C.", [SATURDAY, SUNDAY])


def test_a_label_opening_a_clause_after_a_dash_is_that_clauses() -> None:
    facts = [SATURDAY, SUNDAY, FRIDAY]
    assert FRIDAY.holds("8.1°C Saturday—Sunday 13.4°C, and Friday.", facts)


def test_of_labels_before_a_value_the_nearest_binds_it() -> None:
    facts = [SATURDAY, SUNDAY, FRIDAY]
    assert FRIDAY.holds("On Friday, on Saturday, 8.1°C.", facts)
    assert SATURDAY.failure("8.1°C on Friday, and Saturday, 13.4°C.", [SATURDAY, SUNDAY]) == \
        'gives the number 8.1 degree_Celsius (±0.05) for saturday but also "13.4"'
    assert SATURDAY.failure("8.1°C on Friday, then Sunday, and Saturday, 13.4°C.", [SATURDAY, SUNDAY]) == \
        "gives '13.4' instead: it should state the number 8.1 degree_Celsius (±0.05) for saturday"


def test_a_label_before_times_run_together_binds_only_the_first() -> None:
    tent = Time(time="14:30", label=["tent"], required=False)
    report = Time(time="15:30", label=["report"], required=False)
    assert tent.holds("Tent, 2:30pm3:30pm.", [tent, report])
    assert report.failure("Report, 2:30pm3:30pm.", [tent, report]) == 'gives the time 15:30 but also "2:30pm"'


def test_a_list_closed_by_or_offers_its_items_only_when_each_is_short() -> None:
    assert not Phrase(phrase="dentist").holds("Ask Kenji the dentist, Sam or Priya.")  # four words: an item
    assert Phrase(phrase="dentist").holds("Ask Kenji the old dentist, Sam or Priya.")  # five: a clause
    assert Phrase(phrase="dentist").holds("We spoke with your dentist at the downtown clinic, Kenji or Sam.")
    assert Name(name="Sam").holds("Kenji, Sam, Priya. Call or text them.")  # the next sentence's "or" closes nothing


def test_a_choice_within_one_clause_leaves_the_rest_of_it_stated() -> None:
    assert Phrase(phrase="wifi").holds("Wifi is off or on.")


def test_every_item_of_a_list_closed_by_or_is_offered_even_in_its_last_clause() -> None:
    assert not Name(name="Ravi").holds("Kenji, Sam, Ravi the dentist or Li.")
    assert not Name(name="Kenji").holds("Kenji, Sam, Ravi the dentist or Li.")
    assert not Name(name="Kenji").holds("Kenji, Sam or Li,\nwhoever is free.")  # a trailing comma ends no list


def test_either_side_of_or_is_an_alternative_not_a_statement() -> None:
    assert not Name(name="Sam").holds("Call Kenji or Sam.")
    assert not Name(name="Kenji").holds("Call Kenji or Sam.")
    assert not Name(name="Kenji").holds("Kenji or Sam will call.")  # at the start of the answer too
    assert not Stated(contains="400 Pine St").holds("It is at 400 Broad St or 400 Pine St.")
    assert Stated(contains="400 Pine St").holds("It is at 400 Pine St.")


def test_a_sentence_ends_what_or_and_not_reach() -> None:
    assert Name(name="Kenji").holds("Ask Kenji\nor Sam tomorrow.")  # the "or" is the next line's
    assert Phrase(phrase="off").holds("It is not on. Off, for sure.")  # the "not" is the first sentence's


def test_text_right_after_a_quotation_is_the_answers_own() -> None:
    assert NoneOf(none=["off"]).failure('She wrote "keep it on"off.') == 'says "off"'


def test_a_target_that_starts_on_sentence_punctuation_is_found() -> None:
    assert Stated(contains="! Yes").holds("Done! Yes")


def test_a_fact_entry_of_no_known_form_is_refused_naming_the_fix() -> None:
    with pytest.raises(ValueError, match=r'quote the phrase \("on"\) or write \{yes: true\} for a yes answer$'):
        parse_fact(True)
    with pytest.raises(ValueError, match=r'^fact \{\'x\': 1\} is none of: "phrase", \{any: \[\.\.\.\]\}, '):
        parse_fact({"x": 1})
