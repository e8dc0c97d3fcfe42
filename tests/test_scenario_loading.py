"""Scenario files: the format, time expressions and error messages that name file, field and fix."""

from __future__ import annotations

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
     "milestones.a refers to unknown milestone 'b'"),
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
    with pytest.raises(ScenarioError, match=r"case.yaml: field world: unknown setting\(s\) \['wify'\]"):
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
