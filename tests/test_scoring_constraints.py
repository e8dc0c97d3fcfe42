"""Compiling milestone declarations: constraint shapes, defaults, automatic guardrails, errors."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.columns import Close, Contains, Exact, Rouge, TraceMatch
from pytest_toolsandbox.evaluation.constraints import INITIAL, compile_events
from pytest_toolsandbox.scenario.loader import ScenarioError
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from pytest_toolsandbox.world.tables import Table
from tests.test_scoring_support import call, play, scenario, seed_scenario

HEADER = """
categories: [single_tool_call, single_user_turn]
user: {goal: x, first_message: hello}
tools: [add_contact, add_reminder, set_wifi_status, send_message_with_phone_number, search_contacts]
"""


def compiled(milestones: str):
    s = scenario(HEADER + milestones)
    return {spec.name: spec for spec in compile_events(s.milestones, scenario_clock(s))}


def test_seed_milestones_compile_like_the_reference() -> None:
    s = seed_scenario()
    specs = {spec.name: spec for spec in compile_events(s.milestones, scenario_clock(s))}
    assert [(c.label, c.table, c.comparison) for c in specs["cellular_on"].constraints] == [
        ("world.settings", Table.SETTINGS, "snapshot")]
    tool = specs["found_contact"].constraints[0]
    assert tool.rows[0]["sender"] == "execution_environment" and tool.rows[0]["recipient"] == "agent"
    assert tool.rows[0]["tool_trace"] == (("search_contacts", (("name", "Fredrik Thordendal"),)),)
    assert isinstance(tool.measures["tool_trace"], TraceMatch)
    sent = specs["message_sent"]
    assert sent.constraints[0].reference == "cellular_on"  # `since` defaults to the first predecessor
    assert sent.guard_against == ("cellular_on", "found_contact")
    assert sent.guarded == (Table.CONTACTS, Table.REMINDERS)  # settings and messaging are constrained
    assert specs["confirmed"].guarded == (Table.SETTINGS, Table.CONTACTS, Table.REMINDERS)
    assert specs["found_contact"].guarded == () and specs["found_contact"].guard_against == ()
    assert isinstance(specs["confirmed"].constraints[0].measures["content"], Rouge)


def test_root_additions_are_measured_against_and_guarded_by_the_initial_state() -> None:
    spec = compiled("milestones: {a: {added: {contacts: [{name: Ann}]}}}")["a"]
    assert spec.constraints[0].reference == INITIAL
    assert spec.guard_against == (INITIAL,)
    assert spec.guarded == (Table.SETTINGS, Table.MESSAGING, Table.REMINDERS)


def test_guardrail_controls() -> None:
    specs = compiled("""
milestones:
  a: {world: {settings: {wifi: false}}}
  b: {after: [a], agent_says: ok, no_guardrails: [contacts]}
  c: {after: [a], agent_says: ok, guardrails: [reminders, contacts]}
  d: {after: [a], agent_says: ok, guardrails: [settings]}
""")
    assert specs["b"].guarded == (Table.MESSAGING, Table.REMINDERS)
    assert specs["c"].guarded == (Table.REMINDERS, Table.CONTACTS)
    assert specs["d"].guarded == () and specs["d"].guard_against == ()


def test_column_overrides_and_tolerances() -> None:
    specs = compiled("""
milestones:
  a:
    added: {reminders: [{content: Buy milk, latitude: 37.3}]}
    match: {content: contains, latitude: {close: 0.001}}
  b: {tool_call: {add_reminder: {reminder_timestamp: "@tomorrow 17:00"}}, tolerance: {reminder_timestamp: 60}}
  c: {agent_says: {text: done, match: exact}}
""")
    measures = specs["a"].constraints[0].measures
    assert isinstance(measures["content"], Contains) and measures["latitude"] == Close(0.001)
    call_target = specs["b"].constraints[0]
    ((tool, arguments),) = call_target.rows[0]["tool_trace"]
    assert tool == "add_reminder" and isinstance(dict(arguments)["reminder_timestamp"], float)
    assert call_target.measures["tool_trace"] == TraceMatch((("reminder_timestamp", 60.0),))
    assert isinstance(specs["c"].constraints[0].measures["content"], Exact)


@pytest.mark.parametrize(("milestones", "message"), [
    ("milestones: {a: {added: {contacts: [{nickname: Ann}]}}}", "unknown column"),
    ("milestones: {a: {added: {contacts: [{phone_number: 14155550100}]}}}", "quote strings"),
    ("milestones: {a: {agent_says: hi, match: {colour: exact}}}", "unknown column"),
    ("milestones: {a: {agent_says: hi, match: {content: {close: 1}}}}", "not a numeric column"),
    ("milestones: {a: {tool_call: []}}", "no alternative"),
])
def test_errors_name_the_milestone_and_the_problem(milestones: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message) as error:  # at load time, before any episode runs
        scenario(HEADER + milestones)
    assert "field milestones.a" in str(error.value)


def test_an_action_call_milestone_is_guarded_on_the_table_its_tool_changes() -> None:
    # As in the reference: a tool_call milestone constrains no world table, so its guardrail against
    # a predecessor covers the table the call itself changes. Exclude it explicitly.
    text = HEADER + """
milestones:
  wifi: {tool_call: {set_wifi_status: {on: false}}}
  added: {after: [wifi], tool_call: {add_contact: {name: Ann Lee}}%s}
"""
    turns = [call("set_wifi_status", on=False), call("add_contact", name="Ann Lee", phone_number="+14155550100")]
    guarded = scenario(text % "")
    assert evaluate(guarded, play(guarded, turns)).milestones[1].similarity == 0.0
    exempt = scenario(text % ", no_guardrails: [contacts]")
    assert evaluate(exempt, play(exempt, turns)).milestones[1].similarity == 1.0


def test_unquoted_yaml_on_key_means_the_argument_on() -> None:
    text = "milestones: {a: {tool_call: [{set_wifi_status: {on: false}}, {set_wifi_status: {off: true}}]}}"
    spec = compiled(text)["a"]
    assert spec.constraints[0].rows[0]["tool_trace"] == (("set_wifi_status", (("on", False),)),
                                                          ("set_wifi_status", (("off", True),)))


def test_a_fill_source_named_twice_is_a_load_error_not_a_scoring_crash() -> None:
    # Scoring gave each fill_from entry its own axis, so a source named twice crashed with a numpy
    # "axes don't match" error mid-run; the values of one source belong in one entry.
    with pytest.raises(ScenarioError, match=r"milestones\.told\.fill_from\[1\]: milestone 'looked' is already a "
                                            r"source of fill_from\[0\]; list all its values in that entry"):
        compiled("""
milestones:
  looked: {tool_call: {search_contacts: {name: Ada}}}
  told:
    after: [looked]
    agent_says: ["{a} and {b}", {text: "{b}", match: contains}]
    fill_from:
      - {milestone: looked, values: {a: result}}
      - {milestone: looked, values: {b: result}}
""")
