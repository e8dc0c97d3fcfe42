"""Scenario files: the format, time expressions and error messages that name file, field and fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from pytest_toolsandbox.scenario.loader import ScenarioError, find_scenarios, load_scenario
from pytest_toolsandbox.scenario.reference import parse_call
from pytest_toolsandbox.scenario.timeexpr import TimeExpressionError, resolve_time
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.world import FrozenClock, Table

ROOT = Path(__file__).resolve().parents[1]
MINIMAL = """
categories: [single_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Turn off wifi please.}
tools: [set_wifi_status]
milestones:
  wifi_off: {world: {settings: {wifi: false}}}
reference:
  - set_wifi_status(on=false)
  - agent: Wifi is off.
"""


def write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_every_shipped_scenario_loads() -> None:
    paths = find_scenarios(ROOT / "scenarios")
    assert paths
    for path in paths:
        assert load_scenario(path).name


def test_minimal_scenario_defaults(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, MINIMAL))
    assert scenario.name == "case"
    assert scenario.threshold == 1.0 and scenario.max_messages == 30
    assert scenario.reference[0].calls[0].arguments == {"on": False}


@pytest.mark.parametrize("patch,fragment", [
    ("categories: [single_tool_cal]", "field categories[0]: Input should be 'single_tool_call'"),
    ("tools: [set_wifi]", "field tools[0]: unknown tool 'set_wifi' (did you mean set_wifi_status"),
    ("colour: blue", "field colour: unknown field"),
    ("milestones: {a: {after: [b], world: {settings: {wifi: false}}}}",
     "field milestones.a.after[0]: unknown milestone 'b'; known: ['a']"),
    ("milestones: {a: {world: {settings: {wifi: false}}}, b: {agent_says: 'x {v}', "
     "fill_from: [{milestone: a, values: {v: result}}, {milestone: c, values: {w: result}}]}}",
     "field milestones.b.fill_from[1].milestone: unknown milestone 'c'"),
    ("milestones: {a: {added: {reminders: [{content: x, reminder_timestamp: '@next fridya 9:00'}]}}}",
     "field milestones.a.added.reminders[0].reminder_timestamp: '@next fridya 9:00' is not a time expression"),
    ("milestones: {a: {tool_call: {add_reminder: {reminder_timestamp: '@tomorow'}}}}",
     "field milestones.a.tool_call.add_reminder.reminder_timestamp: '@tomorow' is not a time expression"),
    ("milestones: {a: {after: []}}", "a milestone needs at least one of"),
    ("reference: [set_wifi_status(False)]", "pass arguments by keyword"),
    ("reference: ['set_wifi_status(on=__import__(\"os\"))']", "must be a literal"),
    ("now: yesterday", "field now: use an ISO local time"),
    ("timezone: Mars/Olympus", "field timezone: use an IANA time zone"),
    ("threshold: 1.5", "field threshold: Input should be less than or equal to 1"),
])
def test_errors_name_file_field_and_fix(tmp_path: Path, patch: str, fragment: str) -> None:
    data = {**yaml.safe_load(MINIMAL), **yaml.safe_load(patch)}
    path = write(tmp_path, yaml.safe_dump(data))
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert str(path) in str(error.value)
    assert fragment in str(error.value)


def test_yaml_syntax_error_has_a_line(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"case.yaml: invalid YAML at line 2"):
        load_scenario(write(tmp_path, "name: x\n  bad: [\n"))


def test_world_patch_errors_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"case.yaml: field world.settings: unknown setting\(s\) \['wify'\]"):
        load_scenario(write(tmp_path, MINIMAL + "world: {settings: {wify: false}}\n"))


def test_milestone_targets_are_checked_at_load_time(tmp_path: Path) -> None:
    text = MINIMAL.replace("wifi_off: {world: {settings: {wifi: false}}}",
                           "wifi_off: {world: {settings: {wify: false}}}")
    with pytest.raises(ScenarioError, match=r"case.yaml: field milestones.wifi_off.world.settings: unknown col"):
        load_scenario(write(tmp_path, text))


def test_world_patch_adds_rows_with_times_and_seeded_ids(tmp_path: Path) -> None:
    text = MINIMAL + ("world:\n  reminders: [{content: Call mom, reminder_timestamp: '@tomorrow 17:00'}]\n"
                      "  clear: [contacts]\n")
    scenario = load_scenario(write(tmp_path, text))
    world = build_world(scenario)
    row = world.table(Table.REMINDERS).row(-1, named=True)
    assert world.clock.local(row["reminder_timestamp"]).isoformat() == "2026-03-13T17:00:00-07:00"
    assert row["reminder_id"] == build_world(scenario).table(Table.REMINDERS).row(-1, named=True)["reminder_id"]
    assert world.table(Table.CONTACTS).height == 0


def test_time_expressions() -> None:
    clock = FrozenClock.at("2026-03-12T09:30:00", "America/Los_Angeles")
    assert clock.local(resolve_time("@now-1d2h", clock)).isoformat() == "2026-03-11T07:30:00-07:00"
    assert clock.local(resolve_time("@next monday 08:15", clock)).isoformat() == "2026-03-16T08:15:00-07:00"
    with pytest.raises(TimeExpressionError, match="not a time expression"):
        resolve_time("@someday", clock)


def test_reference_calls_accept_json_literals_and_refuse_code() -> None:
    assert parse_call('f(a=true, b=null, c=[1, {"k": false}])').arguments == {
        "a": True, "b": None, "c": [1, {"k": False}]}
    with pytest.raises(ValueError, match="must be a literal"):
        parse_call("f(a=open('x'))")


@pytest.mark.parametrize("world,fragment", [
    ("{contacts: [{name: Bob, phone_number: +14155550999}]}",
     "field world.contacts[0].phone_number: must be a string, got 14155550999; YAML reads an unquoted "
     "+14155550123 as a number, so quote phone numbers"),
    ("{contacts: [{name: Bob, phone_number: '+14155550999', relationship: no}]}",
     "field world.contacts[0].relationship: must be a string, got False; YAML reads unquoted yes/no"),
    ("{settings: {cellular: 2}}", "field world.settings.cellular: must be true or false, got 2"),
    ("{settings: {wifi: 'off'}}", "field world.settings.wifi: must be true or false, got 'off'"),
    ("{reminders: [{content: x, reminder_timestamp: '@tomorow 17:00'}]}",
     "field world.reminders[0].reminder_timestamp: '@tomorow 17:00' is not a time expression"),
    ("{reminders: [{content: x, reminder_timestamp: '@tomorrow 25:00'}]}",
     "field world.reminders[0].reminder_timestamp: '@tomorrow 25:00': 25:00 is not a clock time"),
    ("{contacts: [{person_id: p, name: A, phone_number: '+14155550999'}, "
     "{person_id: p, name: B, phone_number: '+14155550998'}]}",
     "field world.contacts: person_id ['p'] used by more than one row"),
])
def test_world_patch_values_are_type_checked(tmp_path: Path, world: str, fragment: str) -> None:
    """YAML gotchas used to slip through: +1415… became '14155550999' (no +), `cellular: 2` became false."""
    with pytest.raises(ScenarioError) as error:
        load_scenario(write(tmp_path, MINIMAL + f"world: {world}\n"))
    assert str(error.value).startswith(f"{tmp_path / 'case.yaml'}: {fragment}")


def test_yes_no_are_booleans_where_booleans_belong(tmp_path: Path) -> None:
    world = build_world(load_scenario(write(tmp_path, MINIMAL + "world: {settings: {wifi: no, cellular: yes}}\n")))
    assert world.table(Table.SETTINGS).select("wifi", "cellular").row(0) == (False, True)


@pytest.mark.parametrize("reference,fragment", [
    ("[{agent: ok}, set_wifi_status(enabled=false)]",
     "field reference[1]: set_wifi_status has no argument named 'enabled'"),
    ("[set_wifi_status(on=\"no\")]", "field reference[0]: Argument 'on' of set_wifi_status must be of type boolean"),
    ("[{agent: ok}, {user: 5}]", "field reference[1]: 'user' takes the text the user says"),
    ("[get_wifi_status()]", "field reference[0]: the agent is not offered 'get_wifi_status'; add it to tools:"),
])
def test_reference_errors_name_the_step(tmp_path: Path, reference: str, fragment: str) -> None:
    text = MINIMAL.split("reference:")[0] + f"reference: {reference}\n"
    with pytest.raises(ScenarioError) as error:
        load_scenario(write(tmp_path, text))
    assert f"case.yaml: {fragment}" in str(error.value)


def test_unquoted_phone_number_in_a_reference_call_fails_at_load_time(tmp_path: Path) -> None:
    text = MINIMAL.replace("tools: [set_wifi_status]", "tools: [set_wifi_status, add_contact]") + (
        "  - add_contact(name=\"Bob\", phone_number=+14155550999)\n")
    with pytest.raises(ScenarioError, match=r"field reference\[2\]: Argument 'phone_number' of add_contact must be "
                                            r"of type string, got int 14155550999.*quote phone numbers"):
        load_scenario(write(tmp_path, text))


def test_yaml_on_key_in_a_mapping_style_reference_call(tmp_path: Path) -> None:
    text = MINIMAL.replace("  - set_wifi_status(on=false)", "  - {tool: set_wifi_status, arguments: {on: false}}")
    assert load_scenario(write(tmp_path, text)).reference[0].calls[0].arguments == {"on": False}


def test_hour_offsets_are_elapsed_time_across_daylight_saving() -> None:
    """Clocks sprang forward at 02:00 on 2026-03-08: an hour before 03:30 PDT is 01:30 PST, not "02:30",
    which does not exist and used to resolve to 03:30 again."""
    clock = FrozenClock.at("2026-03-08T03:30:00", "America/Los_Angeles")
    assert resolve_time("@now-1h", clock) == clock.timestamp() - 3600
    assert resolve_time("@now-45m", clock) == clock.timestamp() - 45 * 60
    assert clock.local(resolve_time("@now-1d", clock)).isoformat() == "2026-03-07T03:30:00-08:00"
    assert resolve_time("@now+1d2h", clock) == clock.timestamp() + 26 * 3600


def test_default_world_is_in_the_past_just_after_a_clock_change() -> None:
    from pytest_toolsandbox.world.default_world import default_tables

    clock = FrozenClock.at("2026-03-08T03:30:00", "America/Los_Angeles")
    messages = default_tables(clock)[Table.MESSAGING]
    assert messages["creation_timestamp"].max() == clock.timestamp() - 5 * 60  # "5 minutes ago"
    assert (messages["creation_timestamp"] < clock.timestamp()).all()


def test_tools_all_and_domains_expand_at_load_time(tmp_path: Path) -> None:
    from pytest_toolsandbox.tools.registry import all_tools

    registry = all_tools()
    grouped = load_scenario(write(tmp_path, MINIMAL.replace("tools: [set_wifi_status]",
                                                            "tools: [contact, messaging, set_wifi_status]")))
    assert grouped.tools == ["add_contact", "modify_contact", "remove_contact", "search_contacts",
                             "send_message_with_phone_number", "search_messages", "set_wifi_status"]
    everything = load_scenario(write(tmp_path, MINIMAL.replace("tools: [set_wifi_status]", "tools: all")))
    assert set(everything.tools) == set(registry) - {"end_conversation"}
    assert len(everything.tools) == 33
    denied = load_scenario(write(tmp_path, MINIMAL.replace("tools: [set_wifi_status]",
                                                           "tools: [setting]\ndeny: [search]")))
    assert "set_wifi_status" in denied.tools and "search_lat_lon" in denied.deny


@pytest.mark.parametrize("tools,fragment", [
    ("[contact, set_wify]", "field tools[1]: unknown tool 'set_wify' (did you mean set_wifi_status"),
    ("[contacts]", "use a tool name, a domain (contact, messaging, reminder, search, setting, utilities) or all"),
    ("[set_wifi_status, end_conversation]", "field tools[1]: 'end_conversation' is the simulated user's tool"),
])
def test_tool_groups_errors_name_the_entry_as_written(tmp_path: Path, tools: str, fragment: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(fragment)):
        load_scenario(write(tmp_path, MINIMAL.replace("tools: [set_wifi_status]", f"tools: {tools}")))


def test_folded_yaml_text_loses_its_final_newline(tmp_path: Path) -> None:
    text = MINIMAL.replace("wifi_off: {world: {settings: {wifi: false}}}",
                           "wifi_off: {world: {settings: {wifi: false}}}\n  told:\n    after: [wifi_off]\n"
                           "    agent_says: >\n      Wifi is\n      off now.\n")
    text += "description: |\n  Two\n  lines.\n"
    scenario = load_scenario(write(tmp_path, text))
    assert scenario.milestones["told"].agent_says == "Wifi is off now."
    assert scenario.description == "Two\nlines."


def test_clearing_contacts_fails_when_a_tool_needs_the_owner(tmp_path: Path) -> None:
    base = MINIMAL + "world: {clear: [contacts]}\n"
    assert load_scenario(write(tmp_path, base)).tools == ["set_wifi_status"]  # nothing needs the owner
    needing = base.replace("tools: [set_wifi_status]", "tools: [set_wifi_status, send_message_with_phone_number]")
    with pytest.raises(ScenarioError, match=r"field world\.clear: clearing contacts removes the owner's own entry "
                                            r"\(is_self: true\), which send_message_with_phone_number needs"):
        load_scenario(write(tmp_path, needing))
    owner = needing.replace("world: {clear: [contacts]}",
                            "world: {clear: [contacts], contacts: [{name: Ann Lee, phone_number: '+14155550100', "
                            "is_self: true}]}")
    world = build_world(load_scenario(write(tmp_path, owner)))
    assert world.table(Table.CONTACTS)["name"].to_list() == ["Ann Lee"]


def test_two_owners_are_an_error(tmp_path: Path) -> None:
    text = MINIMAL + "world: {contacts: [{name: Ann Lee, phone_number: '+14155550100', is_self: true}]}\n"
    with pytest.raises(ScenarioError, match=r"field world\.contacts: 2 contacts have is_self: true"):
        load_scenario(write(tmp_path, text))


def test_added_messages_get_person_ids_from_phone_numbers(tmp_path: Path) -> None:
    from pytest_toolsandbox.world.default_world import contact_id

    text = MINIMAL + (
        "world:\n"
        "  contacts: [{name: Ann Lee, phone_number: '+14155550100'}]\n"
        "  messaging:\n"
        "    - {sender_phone_number: '+14155550100', recipient_phone_number: '+14155550134', content: Hi,\n"
        "       creation_timestamp: '@now-1h'}\n"
        "    - {sender_phone_number: '+18005550100', recipient_phone_number: '+14155550134', content: Ad,\n"
        "       creation_timestamp: '@now-2h'}\n")
    world = build_world(load_scenario(write(tmp_path, text)))
    contacts = world.table(Table.CONTACTS)
    ann = contacts.filter(contacts["name"] == "Ann Lee")["person_id"][0]
    hi, ad = world.table(Table.MESSAGING).tail(2).iter_rows(named=True)
    assert (hi["sender_person_id"], hi["recipient_person_id"]) == (ann, contact_id("Maya Lindqvist"))
    assert (ad["sender_person_id"], ad["recipient_person_id"]) == (None, contact_id("Maya Lindqvist"))


def test_next_weekday_is_the_first_such_day_after_today() -> None:
    clock = FrozenClock.at("2026-03-12T09:30:00", "America/Los_Angeles")  # a Thursday
    assert clock.local(resolve_time("@next friday", clock)).date().isoformat() == "2026-03-13"
    assert clock.local(resolve_time("@next thursday", clock)).date().isoformat() == "2026-03-19"
    assert clock.local(resolve_time("@next wednesday 18:00", clock)).isoformat() == "2026-03-18T18:00:00-07:00"
