"""Compiling milestones (`evaluation/constraints.py`): a bad target is one line naming its exact field,
and a state milestone is guarded only against what it follows (found unpinned by mutation testing,
benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.constraints import compile_events
from pytest_toolsandbox.scenario.loader import ScenarioError
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from tests.test_scoring_support import call, play, say, scenario

HEAD = """
categories: [single_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [add_reminder, search_contacts, add_contact, set_wifi_status]
milestones:
"""
TIMES = "use @now, @now-3d2h, @tomorrow 17:00, @next friday 09:30 or @2026-03-14 17:00"
UNUSED = "write them as {placeholders} in agent_says/user_says text, or fill a tool_call or attempted_call"


@pytest.mark.parametrize(("milestones", "error"), [
    ("m: {tool_call: {add_reminder: {reminder_timestamp: '@bogus'}}}",
     f"milestones.m.tool_call.add_reminder.reminder_timestamp: '@bogus' is not a time expression; {TIMES}"),
    ("m: {added: {reminders: [{content: x}, {content: y, reminder_timestamp: '@bogus'}]}}",
     f"milestones.m.added.reminders[1].reminder_timestamp: '@bogus' is not a time expression; {TIMES}"),
    ("m: {world: {reminders: {content: x, reminder_timestamp: '@bogus'}}}",
     f"milestones.m.world.reminders.reminder_timestamp: '@bogus' is not a time expression; {TIMES}"),
    ("m: {world: {settings: {}}}", "milestones.m.world.settings: a target row needs at least one column"),
    ("m: {world: {contacts: []}}",
     "milestones.m.world.contacts: list at least one target row (an empty list would check nothing)"),
    ("m: {added: {contacts: []}}",
     "milestones.m.added.contacts: list at least one target row (an empty list would check nothing)"),
    ("m: {world: {contacts: {phone_number: 4155550100}}}",
     "milestones.m.world.contacts: column 'phone_number' holds String values, got 4155550100 (int); quote strings "
     "such as phone numbers"),
    ("m: {agent_says: hi, match: {content: {close: 1}}}",
     "milestones.m.agent_says.match: 'content' is not a numeric column, so 'close' cannot apply"),
    ("m: {world: {contacts: {name: Ann}}, match: {name: {close: 1}}}",
     "milestones.m.match: 'name' is not a numeric column, so 'close' cannot apply"),
    ("s: {tool_call: {search_contacts: {}}}\n  m: {after: [s], agent_says: hi, fill_from: {milestone: s, values: "
     "{x: result}}}", f"milestones.m.fill_from: no target uses the values ['x']; {UNUSED}"),
    ("s: {tool_call: {search_contacts: {}}}\n  t: {tool_call: {search_contacts: {}}}\n  m: {after: [s, t], "
     "agent_says: 'hi {x}', fill_from: [{milestone: s, values: {x: result}}, {milestone: t, values: {y: result}}]}",
     f"milestones.m.fill_from[1]: no target uses the values ['y']; {UNUSED}"),
])
def test_a_bad_target_names_its_field(milestones: str, error: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        scenario(HEAD + "  " + milestones + "\n")
    assert str(raised.value) == f"scenarios/crafted/crafted.yaml: field {error}"


def test_a_state_milestone_without_predecessors_ignores_earlier_changes_elsewhere() -> None:
    """Contacts changed before the wifi went off: a state milestone compares the world as it is, not
    with the start, so an unrelated change is no guardrail breach (an `added` milestone's is, since
    it compares with the start)."""
    s = scenario(HEAD + "  wifi_done: {world: {settings: {wifi: false}}}\n")
    turns = [call("add_contact", name="Ann Lee", phone_number="+14155550100"), call("set_wifi_status", on=False),
             say("Done.")]
    assert evaluate(s, play(s, turns)).score == 1.0
    added = scenario(HEAD + "  ann: {added: {contacts: [{name: Ann Lee, phone_number: '+14155550100'}]}}\n")
    turns = [call("set_wifi_status", on=False), call("add_contact", name="Ann Lee", phone_number="+14155550100"),
             say("Done.")]
    assert evaluate(added, play(added, turns)).score == 0.0


@pytest.mark.parametrize("kind", ["milestones", "minefields"])
def test_a_scenario_built_without_the_loader_fails_scoring_with_its_file_and_field(kind: str) -> None:
    """The loader compiles every target; a Scenario made in code is compiled when first scored, and a
    bad target then names the scenario file and the field, as the loader would."""
    good = scenario(HEAD.removesuffix("milestones:\n"))
    trajectory = play(good, [say("Done.")])
    bad = Scenario.model_validate({**good.model_dump(), kind: {"m": {"world": {"reminders": {
        "reminder_timestamp": "@soon"}}}}})
    with pytest.raises(ValueError) as raised:
        evaluate(bad, trajectory)
    assert str(raised.value) == (f"scenarios/crafted/crafted.yaml: {kind}.m.world.reminders.reminder_timestamp: "
                                 f"'@soon' is not a time expression; {TIMES}")


def test_a_milestone_mixing_a_change_since_another_and_a_text_scores_both_on_their_own_message() -> None:
    """`told` has a constraint on (its message, the check's message) and one on its message alone."""
    s = scenario(HEAD + "  checked: {tool_call: {search_contacts: {name: Ann}}}\n"
                        "  told: {after: [checked], added: {contacts: [{name: Ann Lee, phone_number: '+14155550100'}]},"
                        " agent_says: Ann Lee is added.}\n")
    turns = [call("search_contacts", name="Ann"), call("add_contact", name="Ann Lee", phone_number="+14155550100"),
             say("Ann Lee is added.")]
    evaluation = evaluate(s, play(s, turns))
    assert [(o.name, o.similarity) for o in evaluation.milestones] == [("checked", 1.0), ("told", 1.0)]
    assert evaluation.passed(None)


def test_empty_arguments_are_no_crash_under_the_reference_rules() -> None:
    """The SDKs send "" for a tool without parameters; text that is not JSON is a crash."""
    s = scenario(HEAD.replace("tools: [", "tools: [get_wifi_status, ") + "  told: {agent_says: On.}\n")
    assert play(s, [call("get_wifi_status", arguments=""), say("On.")], rules="reference").ended_by == "user"
    assert play(s, [call("get_wifi_status", arguments="{on"), say("On.")], rules="reference").ended_by == "crash"


def test_times_in_a_target_row_resolve_on_the_scenario_clock_and_only_followers_are_guarded() -> None:
    s = scenario(HEAD + "  due: {world: {reminders: {content: Call Ann, reminder_timestamp: '@now+1h'}}}\n"
                        "  later: {after: [due], agent_says: Done.}\n")
    specs = {spec.name: spec for spec in compile_events(s.milestones, scenario_clock(s))}
    [row] = specs["due"].constraints[0].rows
    assert row == {"content": "Call Ann", "reminder_timestamp": scenario_clock(s).now.timestamp() + 3600}
    assert (specs["due"].guarded, specs["due"].guard_against) == ((), ())
    assert specs["later"].guard_against == ("due",) and len(specs["later"].guarded) == 3


@pytest.mark.parametrize("cell", ["[Ann, Bob]", "{first: Ann}"])
def test_a_target_cell_that_is_a_list_or_a_mapping_is_refused(cell: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        scenario(HEAD + "  m: {world: {contacts: {name: " + cell + "}}}\n")
    assert "milestones.m.world.contacts: column 'name' holds String values, got " in str(raised.value)
