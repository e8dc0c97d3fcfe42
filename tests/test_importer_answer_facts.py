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


def test_a_contact_the_answer_names_is_a_name_fact_unless_the_user_named_them() -> None:
    world = {"clear": ["contacts"], "contacts": [{"name": "Homer S", "phone_number": "+14085550100",
                                                  "relationship": "boss"},
                                                 {"name": "Kenji Watanabe", "phone_number": "+14085550101",
                                                  "relationship": "friend"}]}
    derived = _derived({
        "name": "boss", "user": {"goal": "g", "first_message": "What is the name of my boss?"},
        "tools": ["search_contacts"], "world": world,
        "milestones": {"found": {"tool_call": {"search_contacts": {"relationship": "boss"}}},
                       "answer": {"after": ["found"], "agent_says": "Your boss is Homer S"}},
        "reference": ["search_contacts(relationship=\"boss\")", {"agent": "Your boss is Homer S"}]})
    facts = derived.facts["answer"]
    assert facts == [{"name": "Homer S"}]  # "boss" is the user's word
    assert _holds(facts, "Your boss's name is Homer S.") and not _holds(facts, "It is Kenji Watanabe.")


def test_a_sentence_stating_a_value_nothing_gives_is_reported_not_turned_into_facts() -> None:
    derived = _derived({
        "name": "invented", "user": {"goal": "g", "first_message": "What's the stock symbol for Apple"},
        "tools": ["search_stock"],
        "milestones": {"found": {"tool_call": {"search_stock": {"query": "Apple"}}},
                       "answer": {"after": ["found"], "agent_says": "AAPL last closed at 9999.99"}},
        "reference": ["search_stock(query=\"Apple\")", {"agent": "AAPL last closed at 9999.99"}]})
    assert "answer" not in derived.facts
    (problem,) = derived.problems
    assert "milestone 'answer'" in problem and "'9999.99'" in problem


def test_a_number_a_little_apart_from_the_tool_result_accepts_both_and_says_so() -> None:
    derived = _derived({
        "name": "distance", "user": {"goal": "g", "first_message": "How far is it?"},
        "tools": ["calculate_lat_lon_distance"],
        "milestones": {"measured": {"tool_call": {"calculate_lat_lon_distance": {
            "latitude_0": 37.334606, "longitude_0": -122.009102, "latitude_1": 37.8199, "longitude_1": -122.4786}}},
            "answer": {"after": ["measured"], "agent_says": "You are 67.86 kilometers away"}},
        "reference": ["calculate_lat_lon_distance(latitude_0=37.334606, longitude_0=-122.009102, "
                      "latitude_1=37.8199, longitude_1=-122.4786)", {"agent": "You are 67.86 kilometers away"}]})
    (fact,) = derived.facts["answer"]
    assert fact["number"] == 67.86 and fact["tolerance"] == 0.12
    assert derived.explained == ["67.86"] and "67.98" in derived.notes[0]
    assert _holds([fact], "About 67.98 km.") and not _holds([fact], "About 68.86 km.")


def test_coordinates_the_user_gave_need_not_be_restated_and_an_address_is_read_by_its_parts() -> None:
    question = "What is the address of latitude: 37.334606, longitude: -122.009102"
    answer = "The address for latitude: 37.334606, longitude: -122.009102 is 1 Apple Park Way, Cupertino, CA 95014"
    derived = _derived({
        "name": "address", "user": {"goal": "g", "first_message": question}, "tools": ["search_lat_lon"],
        "milestones": {"found": {"tool_call": {"search_lat_lon": {"latitude": 37.334606, "longitude": -122.009102}}},
                       "answer": {"after": ["found"], "agent_says": answer}},
        "reference": ["search_lat_lon(latitude=37.334606, longitude=-122.009102)", {"agent": answer}]})
    facts = derived.facts["answer"]
    assert {"coordinates": [37.334606, -122.009102], "tolerance": 1e-6, "required": False} in facts
    assert _holds(facts, "It's One Apple Park Way in Cupertino, 95014.")
    assert not _holds(facts, "It's 2 Apple Park Way in Cupertino, 95014.")
    assert not _holds(facts, "It's 1 Apple Park Way in Cupertino, 95014, at 37.3346, -122.0091.")


def test_a_decline_in_an_insufficient_information_base_must_say_it_cannot() -> None:
    sentence = "I cannot remove the contact, because I don't have the tools available."
    derived = _derived({
        "name": "decline", "categories": ["insufficient_information"],
        "user": {"goal": "g", "first_message": "Remove +12453344098 from my contacts"},
        "tools": ["search_contacts"], "deny": ["remove_contact"], "missing": ["contact"],
        "milestones": {"answer": {"agent_says": sentence}}, "reference": [{"agent": sentence}]})
    facts = derived.facts["answer"]
    assert _holds(facts, "Sorry, I'm unable to delete contacts.") and not _holds(facts, "Done, removed.")
    assert not _holds(facts, "It is not true that I cannot remove it.")


def test_a_question_about_a_setting_takes_yes_or_its_state_bound_to_its_name() -> None:
    derived = _derived({
        "name": "get_wifi", "user": {"goal": "g", "first_message": "Is my wifi on?"}, "tools": ["get_wifi_status"],
        "world": {"settings": {"wifi": True}},
        "milestones": {"checked": {"tool_call": {"get_wifi_status": {}}},
                       "answer": {"after": ["checked"], "agent_says": "Wifi is on"}},
        "reference": ["get_wifi_status()", {"agent": "Wifi is on"}]})
    facts = derived.facts["answer"]
    assert _holds(facts, "Yes.") and _holds(facts, "Yes, your Wi-Fi is turned on.")
    assert _holds(facts, "Yes, wifi is on; low battery mode is off.")
    assert not _holds(facts, "No, it is off.") and not _holds(facts, "Wifi is off.")


def test_a_reminder_confirmed_by_its_date_and_time_when_it_gives_them() -> None:
    derived = _derived({
        "name": "reminder", "user": {"goal": "g", "first_message": "Remind me to buy milk tomorrow 5PM"},
        "tools": ["add_reminder"],
        "milestones": {"added": {"added": {"reminders": [{"content": "Buy milk",
                                                          "reminder_timestamp": "@tomorrow 17:00"}]},
                                 "match": {"content": "rouge"}}},
        "reference": ["add_reminder(content=\"Buy milk\", reminder_timestamp=\"@tomorrow 17:00\")",
                      {"agent": "Done."}]})
    final = derived.final_answer
    assert derived.answer_required is None  # an action, not a question
    assert {"time": "17:00", "required": False} in final and {"date": "2026-03-13", "required": False} in final
    assert _holds(final, "Done.") and _holds(final, "Added for 5 pm tomorrow, March 13.")
    assert not _holds(final, "Added for 6 PM.") and not _holds(final, "I couldn't add it.")


def test_a_message_confirmed_names_no_other_contact_and_no_other_number() -> None:
    world = {"settings": {"cellular": True}, "clear": ["contacts", "messaging"],
             "contacts": [{"name": "Maya Lindqvist", "phone_number": "+14155550134", "is_self": True},
                          {"name": "Homer S", "phone_number": "+14085550100"},
                          {"name": "Kenji Watanabe", "phone_number": "+14085550101"},
                          {"name": "Ada Byron", "phone_number": "+1234560987"}]}
    derived = _derived({
        "name": "send", "user": {"goal": "g", "first_message": "Text +14085550100 saying: see you at 5"},
        "tools": ["send_message_with_phone_number"], "world": world,
        "milestones": {"sent": {"added": {"messaging": [{"recipient_phone_number": "+14085550100",
                                                         "content": "see you at 5"}]}}},
        "reference": ["send_message_with_phone_number(phone_number=\"+14085550100\", content=\"see you at 5\")",
                      {"agent": "Done."}]})
    final = derived.final_answer
    assert {"phone": "+14085550100", "required": False} in final
    # not Homer (texted) nor Maya (the user); a last name names its contact too, a one-letter one nobody
    assert {"none": ["Ada", "Ada Byron", "Byron", "Kenji", "Kenji Watanabe", "Watanabe"]} in final
    assert _holds(final, "Sent to Homer S at (408) 555-0100.") and _holds(final, "Sent!")
    assert not _holds(final, "Sent to Kenji.") and not _holds(final, "Sent to (408) 555-0101.")
    assert not _holds(final, "Sent to Mr. Watanabe.")


def test_only_a_number_that_can_be_dialled_is_a_detail() -> None:
    from pytest_toolsandbox.importer.final_answers import possible_phone

    assert possible_phone("+14085550100") and not possible_phone("+1234560987") and not possible_phone("+1")


def test_a_confirmation_naming_another_setting_misreports_the_action() -> None:
    derived = _derived({
        "name": "wifi", "user": {"goal": "g", "first_message": "Turn off wifi"}, "tools": ["set_wifi_status"],
        "world": {"settings": {"wifi": True, "cellular": True, "low_battery_mode": False}},
        "milestones": {"wifi_off": {"world": {"settings": {"wifi": False}}}},
        "reference": ["set_wifi_status(on=false)", {"agent": "Done."}]})
    final = derived.final_answer
    assert _holds(final, "Done.") and _holds(final, "Wi-Fi is off now; your battery is fine.")
    assert not _holds(final, "I've turned cellular service off.")
    assert not _holds(final, "Low battery mode is off.")


def test_a_removal_confirmed_with_another_reminder_quoted_fails() -> None:
    reminders = [{"reminder_id": "a", "content": "Buy milk", "reminder_timestamp": "@now+1h"},
                 {"reminder_id": "b", "content": "Call the plumber", "reminder_timestamp": "@now+2h"}]
    derived = _derived({
        "name": "remove", "user": {"goal": "g", "first_message": "Remove my next reminder"},
        "tools": ["remove_reminder"], "world": {"clear": ["reminders"], "reminders": reminders},
        "milestones": {"removed": {"removed": {"reminders": [{"reminder_id": "a"}]}}},
        "reference": ["remove_reminder(reminder_id=\"a\")", {"agent": "Done."}]})
    final = derived.final_answer
    assert _holds(final, "Done.") and _holds(final, 'I removed "Buy milk".')
    assert not _holds(final, 'I removed your reminder "Call the plumber".')


def test_an_amount_asked_for_is_stated_in_the_currency_converted_to() -> None:
    derived = _derived({
        "name": "convert", "user": {"goal": "g", "first_message": "How much is 2048 USD in CNY"},
        "tools": ["convert_currency"],
        "milestones": {"converted": {"tool_call": {"convert_currency": {
            "amount": 2048, "from_currency_code": "USD", "to_currency_code": "CNY"}}}},
        "reference": ["convert_currency(amount=2048, from_currency_code=\"USD\", to_currency_code=\"CNY\")",
                      {"agent": "Done."}]})
    final = derived.final_answer
    assert derived.answer_required is not None and final[0]["unit"] == "CNY"
    assert _holds(final, derived.answer_required.closing)
    amount = f"{final[0]['number']:,.2f}"
    assert _holds(final, f"That's {amount} yuan.") and _holds(final, f"You'd get ¥{amount} for $2048.")
    assert not _holds(final, f"2048 USD is {amount} euros.") and not _holds(final, "Done.")


def test_a_setting_offered_with_its_opposite_confirms_nothing() -> None:
    derived = _derived({
        "name": "wifi", "user": {"goal": "g", "first_message": "Turn off wifi"}, "tools": ["set_wifi_status"],
        "world": {"settings": {"wifi": True}},
        "milestones": {"wifi_off": {"world": {"settings": {"wifi": False}}}},
        "reference": ["set_wifi_status(on=false)", {"agent": "Done."}]})
    final = derived.final_answer
    assert _holds(final, "Wi-Fi is off.") and _holds(final, "Done, it's disabled.")
    assert not _holds(final, "Wi-Fi is now off or on, one of the two.")
    assert not _holds(final, "Your Wi-Fi is enabled or disabled now.")


def test_a_changed_relationship_is_confirmed_with_no_other_relationship() -> None:
    world = {"clear": ["contacts"], "contacts": [{"name": "Maya Lindqvist", "phone_number": "+14155550134",
                                                 "is_self": True, "person_id": "me"},
                                                {"name": "Fredrik Thordendal", "phone_number": "+14085550100",
                                                 "relationship": "friend", "person_id": "f"}]}
    derived = _derived({
        "name": "enemy", "user": {"goal": "g", "first_message": "Make Fredrik Thordendal my enemy"},
        "tools": ["modify_contact"], "world": world,
        "milestones": {"changed": {"updated": {"contacts": [{"person_id": "f", "relationship": "enemy"}]}}},
        "reference": ["modify_contact(person_id=\"f\", relationship=\"enemy\")", {"agent": "Done."}]})
    final = derived.final_answer
    assert _holds(final, "Done.") and _holds(final, "Fredrik Thordendal is now your enemy.")
    assert _holds(final, "Fredrik is one of your enemies now.")
    assert not _holds(final, "Fredrik Thordendal is now your coworker.")
    assert not _holds(final, "Fredrik is now your enemy or your friend.")


def test_validate_notes_only_the_imported_texts_left_without_facts(tmp_path: Path) -> None:
    """Imported files carry derived facts and no accept / reject examples (the mutation stage makes them):
    validate notes a text milestone only where it has no facts, by name."""
    from pytest_toolsandbox.suite.validate import collect, validate

    base = ("categories: [single_tool_call, single_user_turn]\nuser: {goal: g, first_message: Turn off wifi}\n"
            "tools: [set_wifi_status]\nworld: {settings: {wifi: true}}\nreference_source: synthesised\n"
            "reference: [set_wifi_status(on=false), {agent: Wifi is turned off}]\nmilestones:\n"
            "  wifi_off: {world: {settings: {wifi: false}}}\n"
            "  answer: {after: [wifi_off], agent_says: Wifi is turned off")
    for name, tail, noted in (("with_facts", ", facts: [off]}\n", []),
                              ("wording", "}\n", ["imported text milestone(s) answer without facts: the verdict needs "
                                                  "their exact wording; compare similarity there"])):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"name: {name}\n{base}{tail}", encoding="utf-8")
        found = validate(collect([path]), determinism=False, mutants=False)
        assert [note.message for note in found.notes if note.check == "facts"] == noted
        assert [error.check for error in found.errors if error.check in ("facts", "examples")] == []
