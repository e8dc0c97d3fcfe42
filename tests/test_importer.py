"""The importer of the reference benchmark's scenarios, piece by piece.

The JSON fixtures are hand-written here in the reader's output format (our own invented scenarios,
no text of the reference package). The end-to-end test against the real package runs only where an
interpreter with `tool_sandbox` is named by TOOLSANDBOX_PYTHON (CI does not have it).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from pytest_toolsandbox.basics.vocabulary import REFERENCE_PROMPTS_FILE
from pytest_toolsandbox.importer import read_toolsandbox as reader
from pytest_toolsandbox.importer.command import build, drift, write
from pytest_toolsandbox.importer.convert import ConversionError, common_prefix, group_bases, world_patch
from pytest_toolsandbox.importer.times import absolute_time, relative_time
from pytest_toolsandbox.roles.prompts import user_instruction
from pytest_toolsandbox.roles.reference_prompts import PromptsError
from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario, parse_scenario
from pytest_toolsandbox.scenario.timeexpr import resolve_time
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.suite.validate import validate
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world.clock import FrozenClock
from pytest_toolsandbox.world.messages import Role

ALL_TABLES = ["CONTACT", "MESSAGING", "REMINDER", "SANDBOX", "SETTING"]
INSTRUCTION = "Act as the phone's owner. Your task: "


def _message(sender: str, recipient: str, content: str, demo: bool = False) -> dict[str, Any]:
    return {"sender": sender, "recipient": recipient, "content": content, "visible_to": ["USER"] if demo else None}


def _sandbox(sender: str, recipient: str, **columns: Any) -> dict[str, Any]:
    kinds = {"sender": {"kind": "exact"}, "recipient": {"kind": "exact"}}
    kinds.update({name: {"kind": kind} for name, (_, kind) in columns.items()})
    return {"table": "SANDBOX", "kind": "snapshot", "reference": None, "columns": kinds,
            "rows": [{"sender": sender, "recipient": recipient, **{n: v for n, (v, _) in columns.items()}}]}


def _detail(task: str, first: str, settings: dict[str, Any], events: list[list[dict[str, Any]]],
            own_demo: bool = False) -> dict[str, Any]:
    shared = [_message("SYSTEM", "USER", INSTRUCTION + "Find the bakery's opening hours.", True),
              _message("USER", "AGENT", "When does the bakery open?", True),
              _message("AGENT", "USER", "At seven.", True),
              _message("USER", "EXECUTION_ENVIRONMENT", "end_conversation()", True)]
    own = [_message("SYSTEM", "USER", INSTRUCTION + "Mute the phone.", True),
           _message("USER", "AGENT", "Silence please", True)] if own_demo else []
    return {
        "max_messages": 30,
        "messages": [_message("SYSTEM", "EXECUTION_ENVIRONMENT", "setup"),
                     _message("SYSTEM", "AGENT", "Think before acting."), *shared, *own,
                     _message("SYSTEM", "USER", INSTRUCTION + task), _message("USER", "AGENT", first)],
        "tables": {
            "SETTING": [{"device_id": "phone-1", "cellular": True, "wifi": True, "location_service": True,
                         "low_battery_mode": False, "latitude": 37.3, "longitude": -122.0, **settings}],
            "CONTACT": [{"person_id": "p-owner", "name": "Ines Ferreira", "phone_number": "+15550100001",
                         "relationship": "self", "is_self": True}],
            "MESSAGING": [{"message_id": "m-1", "sender_person_id": None, "sender_phone_number": "+15550100002",
                           "recipient_person_id": "p-owner", "recipient_phone_number": "+15550100001",
                           "content": "See you soon", "creation_timestamp": {"seconds_from_now": -3600.0}}],
            "REMINDER": [],
        },
        "milestones": {"events": [{"constraints": c, "guarded_tables": ALL_TABLES} for c in events],
                       "edges": [[i, i + 1] for i in range(len(events) - 1)]},
        "minefields": {"events": [], "edges": []},
    }


def fixture_data() -> dict[str, Any]:
    """Two invented bases (one with a distraction variant) in the reader's JSON format."""
    wifi = _detail("Turn the wifi on.", "Switch my wifi on", {"wifi": False}, [
        [{"table": "SETTING", "kind": "snapshot", "reference": None, "rows": [{"wifi": True}],
          "columns": {"wifi": {"kind": "exact"}}}],
        [_sandbox("AGENT", "USER", content=("Your wifi is on now.", "rouge"))],
    ], own_demo=True)
    time = _detail("Ask what time it is.", "What time is it?", {}, [
        [_sandbox("EXECUTION_ENVIRONMENT", "AGENT",
                  tool_trace=(json.dumps({"tool_name": "get_current_timestamp", "arguments": {}}), "trace"))],
        [{**_sandbox("AGENT", "USER", content=("The timestamp is {stamp}.", "rouge")), "kind": "fill",
          "reference": 0, "fill_to": "content",
          "values": [{"name": "stamp", "path": "result", "formats": ["{:.0f}"]}]}],
    ])
    return {
        "source": {"package": "tool_sandbox", "version": "9.9", "commit": "0123456789abcdef"},
        "now": "2026-03-12T09:30:00", "timezone": "America/Los_Angeles",
        "items": [
            {"name": "wifi_on", "tools": ["end_conversation", "set_wifi_status"], "deny": [], "augmentations": [],
             "categories": ["SINGLE_TOOL_CALL", "SINGLE_USER_TURN", "STATE_DEPENDENCY", "NO_DISTRACTION_TOOLS"],
             "detail": "w"},
            {"name": "wifi_on_3_distraction_tools", "deny": [], "augmentations": [], "detail": "w",
             "tools": ["end_conversation", "set_wifi_status", "get_wifi_status", "set_cellular_service_status",
                       "get_cellular_service_status"],
             "categories": ["SINGLE_TOOL_CALL", "SINGLE_USER_TURN", "STATE_DEPENDENCY", "THREE_DISTRACTION_TOOLS"]},
            {"name": "what_time", "tools": ["end_conversation", "get_current_timestamp"], "deny": [],
             "augmentations": [], "categories": ["SINGLE_TOOL_CALL", "SINGLE_USER_TURN", "NO_DISTRACTION_TOOLS"],
             "detail": "t"},
        ],
        "details": {"w": wifi, "t": time},
    }


# -- the reader's probes (on comparison functions written here) ---------------------------------------------


def _exact(dataframe: pl.DataFrame, column_name: str, value: Any, atol_dict: Any = None) -> pl.DataFrame:
    return dataframe.select(pl.col(column_name).eq(value).cast(pl.Float32).alias("similarity"))


def _substring(dataframe: pl.DataFrame, column_name: str, value: Any, atol_dict: Any = None) -> pl.DataFrame:
    return dataframe.select(pl.col(column_name).str.contains(value, literal=True).cast(pl.Float32).alias("similarity"))


def _word_overlap(dataframe: pl.DataFrame, column_name: str, value: Any, atol_dict: Any = None) -> pl.DataFrame:
    wanted = set(value.split())
    return pl.DataFrame({"similarity": [len(wanted & set(cell.split())) / len(wanted | set(cell.split()))
                                        for cell in dataframe[column_name]]})


def _always(dataframe: pl.DataFrame, column_name: str, value: Any, atol_dict: Any = None) -> pl.DataFrame:
    return pl.DataFrame({"similarity": [1.0] * dataframe.height})


@pytest.mark.parametrize(("function", "kind"), [(_exact, "exact"), (_substring, "contains"),
                                                (_word_overlap, "rouge"), (_always, "any")])
def test_column_comparisons_are_classified_by_their_answers(function: Any, kind: str) -> None:
    assert reader.classify_column(function, "content", pl) == {"kind": kind}


def test_snapshot_comparisons_are_classified_by_their_answers() -> None:
    def whole(snapshot, target_dataframe=None, column_similarities=None, reference_snapshot=None):
        return float(snapshot.drop("sandbox_message_index").equals(target_dataframe))

    def added(snapshot, target_dataframe=None, column_similarities=None, reference_snapshot=None):
        new = snapshot.join(reference_snapshot, on=snapshot.columns, how="anti").drop("sandbox_message_index")
        kept = snapshot.join(reference_snapshot, on=snapshot.columns, how="inner").height == reference_snapshot.height
        return float(kept and new.equals(target_dataframe))

    assert reader.classify_snapshot(whole, pl) == "snapshot"
    assert reader.classify_snapshot(added, pl) == "addition"


def test_extractors_are_read_as_paths_and_formats() -> None:
    def temperature(trace: dict[str, Any]) -> list[dict[str, Any]]:
        value = float(trace["result"]["current_temperature"])
        return [{"temperature": f"{value:.0f}"}, {"temperature": f"{value:.1f}"}]

    def timestamp(trace: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"timestamp_0": float(trace["result"])}]

    assert reader.classify_extractor(temperature) == [
        {"name": "temperature", "path": "result.current_temperature", "formats": ["{:.0f}", "{:.1f}"]}]
    assert reader.classify_extractor(timestamp) == [{"name": "timestamp_0", "path": "result", "formats": []}]


def test_times_that_move_with_the_clock_are_marked_relative() -> None:
    first = {"row": {"created": 1000.0, "fixed": 5.0}, "trace": json.dumps({"arguments": {"t": 1000.0}})}
    second = {"row": {"created": 1100.0, "fixed": 5.0}, "trace": json.dumps({"arguments": {"t": 1100.0}})}
    marked = reader.mark_times(first, second, now=900.0)
    assert marked["row"] == {"created": {"seconds_from_now": 100.0}, "fixed": 5.0}
    assert json.loads(marked["trace"]) == {"arguments": {"t": {"seconds_from_now": 100.0}}}


# -- times --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("seconds", "expected"), [(0, "@now"), (-86400, "@now-1d"), (-273906, "@now-3d4h5m6s"),
                                                   (113400, "@tomorrow 17:00"), (3600, "@now+1h"), (-60, "@now-1m")])
def test_relative_times_become_expressions_that_resolve_back(seconds: float, expected: str) -> None:
    clock = FrozenClock.at()
    assert relative_time(seconds, clock) == expected
    assert resolve_time(expected, clock) == clock.timestamp() + seconds


def test_absolute_times_stay_absolute() -> None:
    clock = FrozenClock.at()
    stamp = clock.to_timestamp(clock.now.replace(year=2024, month=3, day=22, hour=17, minute=0).replace(tzinfo=None))
    assert absolute_time(stamp, clock) == "@2024-03-22 17:00"
    assert resolve_time(absolute_time(stamp, clock), clock) == stamp


# -- conversion and the written files ----------------------------------------------------------------------


def test_starting_rows_keep_their_ids_a_repeated_one_is_dropped_and_rows_without_one_stay() -> None:
    rows = [{"reminder_id": "r1", "content": "a"}, {"reminder_id": "r1", "content": "b"},
            {"content": "c"}, {"content": "d"}]
    patch = world_patch({"tables": {"REMINDER": rows}}, FrozenClock.at())
    assert patch["reminders"] == [{"reminder_id": "r1", "content": "a"}, {"content": "b"}, {"content": "c"},
                                  {"content": "d"}]


def test_common_prefix_ends_at_a_boundary() -> None:
    assert common_prefix([INSTRUCTION + "Turn the wifi on.", INSTRUCTION + "Text Ada."]) == INSTRUCTION


def test_items_are_grouped_under_their_base() -> None:
    bases = group_bases(fixture_data())
    assert [base.name for base in bases] == ["what_time", "wifi_on"]
    assert sorted(bases[1].variants) == ["3_distraction_tools", "base"]


def test_a_variant_that_changes_more_than_tools_is_refused() -> None:
    data = fixture_data()
    data["details"]["w2"] = copy.deepcopy(data["details"]["w"])
    data["details"]["w2"]["max_messages"] = 5
    data["items"][1]["detail"] = "w2"
    with pytest.raises(ConversionError, match="wifi_on_3_distraction_tools: differs from its base wifi_on"):
        group_bases(data)


def test_import_writes_loadable_scenarios_with_witnesses(tmp_path: Path) -> None:
    imported = build(fixture_data(), tmp_path)
    assert sorted(imported.files) == [REFERENCE_PROMPTS_FILE, "what_time.yaml", "wifi_on.yaml"]
    text = imported.files["wifi_on.yaml"]
    assert text.startswith("# Generated by `python -m pytest_toolsandbox import-toolsandbox` from the installed "
                           "tool_sandbox 9.9, commit 0123456789ab.\n# Do not edit")
    write(imported, tmp_path)
    wifi = load_scenario(tmp_path / "wifi_on.yaml")
    assert wifi.reference_source == "synthesised"
    assert [call.tool for step in wifi.reference for call in step.calls] == ["set_wifi_status"]
    assert wifi.milestones["wifi_on"].world == {"settings": {"wifi": True}}
    assert wifi.user.goal == "Turn the wifi on." and wifi.user.first_message == "Switch my wifi on"
    assert [d.goal for d in wifi.user.demonstrations] == ["Mute the phone."]  # the shared one is in the prompts file
    assert wifi.world.messaging[0]["creation_timestamp"] == "@now-1h"
    assert {name: score for name, (score, _, _) in imported.witnesses.items()} == {"what_time": 1.0, "wifi_on": 1.0}
    time = load_scenario(tmp_path / "what_time.yaml")
    assert time.milestones["answer"].fills()[0].milestone == "get_current_timestamp"
    prompts = json.loads(imported.files[REFERENCE_PROMPTS_FILE])
    assert prompts["agent_system_prompt"] == "Think before acting."
    assert prompts["user_instruction"] == INSTRUCTION
    assert [d["goal"] for d in prompts["demonstrations"]] == ["Find the bakery's opening hours."]


def test_import_is_idempotent_and_check_reports_drift(tmp_path: Path) -> None:
    first = build(fixture_data(), tmp_path)
    write(first, tmp_path)
    assert build(fixture_data(), tmp_path).files == first.files
    assert drift(first, tmp_path) == []
    (tmp_path / "wifi_on.yaml").write_text(first.files["wifi_on.yaml"] + "# edited\n", encoding="utf-8")
    (tmp_path / "stale.yaml").write_text("name: stale\n", encoding="utf-8")
    (tmp_path / "what_time.yaml").unlink()
    assert drift(first, tmp_path) == [f"missing {tmp_path / 'what_time.yaml'}",
                                      f"changed {tmp_path / 'wifi_on.yaml'} (comments or layout only)",
                                      f"no longer generated {tmp_path / 'stale.yaml'}"]
    (tmp_path / "wifi_on.yaml").write_text(first.files["wifi_on.yaml"] + "threshold: 0\n", encoding="utf-8")
    assert f"changed {tmp_path / 'wifi_on.yaml'} (fields threshold)" in drift(first, tmp_path)


def _poison(data: dict[str, Any], where: str, value: Any) -> None:
    """Set the field at the dotted path `where` (list positions as numbers) to `value`."""
    *parents, last = where.split(".")
    for part in parents:
        data = data[int(part)] if part.isdigit() else data[part]
    data[int(last) if last.isdigit() else last] = value


READER_POISON = {
    "a newline in the version": ("source.version", "9.9\nthreshold: 0", "field source.version: must be one line"),
    "a NaN cell": ("details.w.tables.SETTING.0.latitude", float("nan"),
                   "field details.w.tables.SETTING[0].latitude: not a finite number"),
    "an infinite max_messages": ("details.w.max_messages", float("inf"), "field details.w.max_messages"),
    "a bad now": ("now", "yesterday-ish", "field now: 'yesterday-ish' is not an ISO date and time"),
    "an unknown time zone": ("timezone", "Mars/Olympus", "field timezone: 'Mars/Olympus' is not a known time zone"),
    "a name leaving the folder": ("items.0.name", "../escape", "field items[0].name: '../escape' is not a scenario"),
    "a count as text": ("details.w.max_messages", "30", "field details.w.max_messages: Input should be a valid "
                        "integer"),
    "a missing detail": ("items.2.detail", "nowhere", "field items[2].detail: 'nowhere' names no entry of details"),
    "an edge past the milestones": ("details.w.milestones.edges", [[0, 7]],
                                    "field details.w.milestones.edges[0]: [0, 7] names a milestone past"),
    "a control character in a tool": ("items.0.tools.1", "set_wifi\x1b[2J", "must not hold control characters"),
}


@pytest.mark.parametrize("case", sorted(READER_POISON))
def test_the_readers_output_is_checked_before_anything_is_written(tmp_path: Path, case: str) -> None:
    from pytest_toolsandbox.importer.reader_output import ReaderOutputError

    where, value, message = READER_POISON[case]
    data = fixture_data()
    _poison(data, where, value)
    with pytest.raises(ReaderOutputError) as raised:
        build(data, tmp_path)
    assert message in str(raised.value) and "\n" not in str(raised.value)
    assert str(raised.value).startswith("the reader's output: field ")
    assert list(tmp_path.iterdir()) == []


def test_validate_accepts_synthesised_references_and_says_so(tmp_path: Path) -> None:
    write(build(fixture_data(), tmp_path), tmp_path)
    report = validate([tmp_path / "wifi_on.yaml", tmp_path / "what_time.yaml"], determinism=False)
    assert report.ok, report.text()
    assert set(report.references.values()) == {"synthesised"}
    assert "reference dialogues: 2 synthesised from the milestones" in report.text()


def test_reference_prompts_are_read_beside_the_scenario(tmp_path: Path) -> None:
    write(build(fixture_data(), tmp_path), tmp_path)
    scenario = load_scenario(tmp_path / "wifi_on.yaml")
    world = build_world(scenario, prompts="reference")
    agent_prompt, user_prompt = world.messages[0], world.messages[1]
    assert agent_prompt.recipient is Role.AGENT and agent_prompt.content == "Think before acting."
    assert user_prompt.content.startswith(INSTRUCTION + "Turn the wifi on.")
    assert "User A: When does the bakery open?" in user_prompt.content  # shared demonstration
    assert "User A: Silence please" in user_prompt.content  # the scenario's own
    assert build_world(scenario).messages[0].content != "Think before acting."  # ours stay the default
    (tmp_path / REFERENCE_PROMPTS_FILE).unlink()
    with pytest.raises(PromptsError, match=r"no reference-prompts\.json next to .*wifi_on\.yaml; it is written by"):
        build_world(load_scenario(tmp_path / "wifi_on.yaml"), prompts="reference")


def test_our_user_instruction_shows_a_scenarios_demonstrations(tmp_path: Path) -> None:
    write(build(fixture_data(), tmp_path), tmp_path)
    text = user_instruction(load_scenario(tmp_path / "wifi_on.yaml").user)
    assert "Example conversation 1 (another person's goal: Mute the phone.):\n  PERSON: Silence please" in text


def test_solvable_in_lets_the_reference_use_that_variants_tools(tmp_path: Path) -> None:
    data = yaml.safe_load((Path(__file__).parent / "data" / "importer_solvable.yaml").read_text(encoding="utf-8"))
    path = tmp_path / "x.yaml"
    scenario = parse_scenario(data, path)
    assert scenario.solvable_in == ["all_tools"]
    with pytest.raises(ScenarioError, match=r"field reference\[0\]: the agent is not offered 'search_stock'; "):
        parse_scenario({key: value for key, value in data.items() if key != "solvable_in"}, path)


# -- the command line ---------------------------------------------------------------------------------------


def test_a_missing_reference_package_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, "-m", "pytest_toolsandbox", "import-toolsandbox", "--python",
                                sys.executable, "--out", str(tmp_path / "out")], capture_output=True, text=True,
                               check=False, cwd=Path(__file__).parents[1])
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"import-toolsandbox: tool_sandbox is not importable by {sys.executable}")
    assert "pip install -e ToolSandbox" in lines[0]
    assert not (tmp_path / "out").exists()


def test_a_poisoned_reader_is_one_line_and_check_does_not_call_it_up_to_date(tmp_path: Path) -> None:
    """A stand-in for the reference's interpreter that prints the reader's JSON with a newline in its version."""
    data = fixture_data()
    data["source"]["version"] = "9.9\nthreshold: 0"
    (tmp_path / "output.json").write_text(json.dumps(data), encoding="utf-8")
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\ncat {tmp_path / 'output.json'}\n", encoding="utf-8")
    fake.chmod(0o755)
    for extra in ([], ["--check"]):
        completed = subprocess.run([sys.executable, "-m", "pytest_toolsandbox", "import-toolsandbox", "--python",
                                    str(fake), "--out", str(tmp_path / "out"), *extra], capture_output=True, text=True,
                                   check=False, cwd=Path(__file__).parents[1])
        assert completed.returncode == 2, completed.stdout
        assert completed.stderr.splitlines() == ["import-toolsandbox: the reader's output: field source.version: "
                                                  "must be one line of text"]
        assert "up to date" not in completed.stdout
    assert not (tmp_path / "out").exists()


REFERENCE_PYTHON = os.environ.get("TOOLSANDBOX_PYTHON")


@pytest.mark.skipif(not REFERENCE_PYTHON, reason="set TOOLSANDBOX_PYTHON to an interpreter with tool_sandbox "
                    "installed (apple/ToolSandbox) to import the real package")
def test_the_real_package_imports_completely(tmp_path: Path) -> None:
    from pytest_toolsandbox.importer.command import read_reference

    data = read_reference(str(REFERENCE_PYTHON))
    imported = build(data, tmp_path)
    write(imported, tmp_path)
    assert len(imported.witnesses) == 129 and imported.items == 1032
    assert all(score >= 1.0 for score, _, _ in imported.witnesses.values())
    assert validate(sorted(tmp_path.glob("*.yaml")), determinism=False).ok


# -- the plugin ---------------------------------------------------------------------------------------------


def test_prompts_reference_runs_imported_scenarios_with_the_reference_prompts(pytester: pytest.Pytester) -> None:
    from tests.test_plugin_support import run

    out = pytester.path / "scenarios" / "toolsandbox"
    write(build(fixture_data(), out), out)
    pytester.makepyfile(prompt_user="""
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall

class FlaggedUser:
    '''Ends at once; remembers whether the plugin told it the instruction is complete as it stands.'''
    name = "flagged"

    def __init__(self, *args, **kwargs):
        self.raw_instruction = False

    def respond(self, messages, tools):
        with open("seen.txt", "a") as file:
            file.write(f"{self.raw_instruction}\\n")
        return Turn(tool_calls=(ToolCall(id="end", name=tools[0].name),))
""")
    result = run(pytester, "scenarios/toolsandbox/wifi_on.yaml", "--prompts", "reference", "--user",
                 "prompt_user:FlaggedUser", "--agent", "unhelpful")
    result.assert_outcomes(failed=1)
    trajectory = json.loads((pytester.path / "toolsandbox-report/trajectories/scenarios/toolsandbox/wifi_on/"
                             "base.json").read_text(encoding="utf-8"))
    assert trajectory["messages"][0]["content"] == "Think before acting."
    assert trajectory["messages"][1]["content"].startswith(INSTRUCTION + "Turn the wifi on.")
    assert (pytester.path / "seen.txt").read_text() == "True\n"


def test_an_imported_folder_runs_only_when_named(pytester: pytest.Pytester) -> None:
    from tests.test_plugin_support import run, write_suite

    write_suite(pytester)
    out = pytester.path / "scenarios" / "toolsandbox"
    write(build(fixture_data(), out), out)

    def collected(*args: str) -> list[str]:
        result = run(pytester, "--collect-only", "-q", *args)
        return sorted(line.split("::")[0] for line in result.outlines if "::test_scenario[" in line)

    everything = collected()
    assert everything and not any("toolsandbox" in line for line in everything)
    assert collected("scenarios/toolsandbox") == ["scenarios/toolsandbox/what_time.yaml",
                                                  "scenarios/toolsandbox/wifi_on.yaml"]
    assert collected("scenarios/toolsandbox/wifi_on.yaml") == ["scenarios/toolsandbox/wifi_on.yaml"]
    assert collected("--scenarios", "scenarios/toolsandbox") == ["scenarios/toolsandbox/what_time.yaml",
                                                                 "scenarios/toolsandbox/wifi_on.yaml"]


def test_facts_no_tool_gives_are_reported(tmp_path: Path) -> None:
    from pytest_toolsandbox.importer.facts import missing_facts
    from pytest_toolsandbox.suite.play import play_reference

    data = fixture_data()
    answer = data["details"]["w"]["milestones"]["events"][1]["constraints"][0]["rows"][0]
    answer["content"] = "Your wifi is on now; the router is 42.5 meters away, call +15550199999."
    imported = build(data, tmp_path)
    assert imported.missing_facts == {"wifi_on": ["42.5", "+15550199999"]}
    write(imported, tmp_path)
    scenario = load_scenario(tmp_path / "what_time.yaml")
    assert missing_facts(scenario, play_reference(scenario, all_tools())) == []  # filled from the result


def test_variants_outside_solvable_in_are_expected_failures(pytester: pytest.Pytester) -> None:
    from tests.test_plugin_support import run

    scenario = pytester.path / "scenarios" / "stock_question.yaml"
    scenario.parent.mkdir()
    scenario.write_text((Path(__file__).parent / "data" / "importer_solvable.yaml").read_text(encoding="utf-8"),
                        encoding="utf-8")
    result = run(pytester, "--augment", "all", "-rx")
    result.assert_outcomes(passed=1, xfailed=7)
    result.stdout.fnmatch_lines(["*XFAIL*test_scenario?base?*not solvable with the tools base offers "
                                 "(solvable_in: all_tools)*"])


def test_an_insufficient_information_base_names_what_its_denied_tools_would_give(tmp_path: Path) -> None:
    """`missing` is derived from `deny`, and the witness's refusal names it, so the verdict can pass it."""
    data = fixture_data()
    detail = _detail("Ask where you are.", "Where am I?", {}, [])
    detail["minefields"] = {"events": [{"constraints": [_sandbox(
        "EXECUTION_ENVIRONMENT", "AGENT",
        tool_trace=(json.dumps({"tool_name": "search_lat_lon", "arguments": {}}), "trace"))],
        "guarded_tables": ALL_TABLES}], "edges": []}
    data["details"]["l"] = detail
    data["items"].append({"name": "where_am_i", "tools": ["end_conversation", "search_lat_lon"],
                          "deny": ["get_current_location", "search_weather_around_lat_lon"], "augmentations": [],
                          "categories": ["INSUFFICIENT_INFORMATION", "SINGLE_USER_TURN", "NO_DISTRACTION_TOOLS"],
                          "detail": "l"})
    write(build(data, tmp_path), tmp_path)
    scenario = load_scenario(tmp_path / "where_am_i.yaml")
    assert scenario.missing == ["current location", "location", "locations", "weather coordinates", "weather",
                                "weathers", "coordinates", "latitude", "longitude"]
    assert [step.agent for step in scenario.reference] == ["I'm sorry, I can't do that: I don't have current location."]
    assert load_scenario(tmp_path / "wifi_on.yaml").missing == []  # only insufficient-information bases
    report = validate([tmp_path / "where_am_i.yaml"], determinism=False)
    assert report.ok, report.text()  # the witness passes the verdict, the always-declining agent fails it
