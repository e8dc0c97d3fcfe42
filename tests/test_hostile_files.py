"""Hostile files and pipes against the command line and the loaders (issue 7, classes 7 and 9).

Malformed baselines, trajectories and scenario values must give an error naming the file, the field
and the fix — never a traceback, never gigabytes of memory.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest


def test_cli_output_piped_into_a_closed_reader_ends_quietly() -> None:
    process = subprocess.Popen([sys.executable, "-m", "pytest_toolsandbox", "tools", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()  # like `| head -1`
    error = process.stderr.read().decode()
    process.wait(timeout=60)
    assert "Traceback" not in error and "BrokenPipeError" not in error


# ------------------------------------------------------------------------------------------------
# Malformed baselines: --baseline and compare give one error naming the file and field.

def _records(tmp_path: Path, name: str, records: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"format": 1, "records": records}) if not isinstance(records, str) else records)
    return path


GOOD = {"id": "s.yaml::test_scenario[base]", "path": "s.yaml", "variant": "base", "outcome": "passed",
        "agent": "a", "agent_spec": "a", "categories": ["single_tool_call"], "trial": 1, "score": 1.0,
        "passed": True, "turn_count": 2}
BAD_BASELINES = {
    "not_objects": ([1, "two", None], "records[0]"),
    "null_path": ([{**GOOD, "path": None}], "records[0].path"),
    "null_categories": ([{**GOOD, "categories": None}], "records[0].categories"),
    "string_score": ([{**GOOD, "score": "1.0"}], "records[0].score"),
    "deep": ('{"records": ' + "[" * 5000 + "]" * 5000 + "}", "nested more than"),
}


@pytest.mark.parametrize("case", sorted(BAD_BASELINES))
def test_malformed_summaries_are_errors_naming_the_field(tmp_path: Path, case: str) -> None:
    from pytest_toolsandbox.cli import main

    records, field = BAD_BASELINES[case]
    bad = _records(tmp_path, "bad.json", records)
    good = _records(tmp_path, "good.json", [GOOD])
    for arguments in (["compare", str(good), str(bad)], ["compare", str(bad), str(good)]):
        process = subprocess.run([sys.executable, "-m", "pytest_toolsandbox", *arguments],
                                 capture_output=True, text=True, timeout=120)
        assert process.returncode == 2, process.stderr
        assert "Traceback" not in process.stderr and f"{bad}" in process.stderr and field in process.stderr
    assert main  # the same loader serves --baseline (see test_malformed_baseline_is_a_usage_error)


def test_malformed_baseline_is_a_usage_error(pytester: pytest.Pytester) -> None:
    from tests.test_plugin_support import run, write_suite

    write_suite(pytester)
    for case, (records, field) in BAD_BASELINES.items():
        bad = _records(pytester.path, f"{case}.json", records)
        result = run(pytester, f"--baseline={bad}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR, case
        assert field in result.stderr.str() and "Traceback" not in result.stderr.str()


# ------------------------------------------------------------------------------------------------
# Malformed trajectories: `score` reports the field, never a traceback, never gigabytes.

@pytest.fixture(scope="module")
def trajectory() -> dict:
    process = subprocess.run([sys.executable, "-m", "pytest_toolsandbox", "run",
                              "scenarios/messaging/send_message_cellular_off.yaml", "--json"],
                             capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[1])
    return json.loads(process.stdout)


def _zone(data: dict) -> None:
    data["timezone"] = "Mars/Olympus"


def _rows(data: dict) -> None:
    data["snapshots"]["settings"][0]["rows"][0]["wifi"] = "yes"


def _row_type(data: dict) -> None:
    data["snapshots"]["contacts"][0]["rows"] = [[1, 2]]


def _many(data: dict) -> None:
    last = data["messages"][-1]
    data["messages"] += [{**last, "index": len(data["messages"]) + k} for k in range(30_000)]


BAD_TRAJECTORIES = {"zone": (_zone, "Mars/Olympus"), "rows": (_rows, "snapshots.settings[0].rows"),
                    "row_type": (_row_type, "snapshots.contacts.0.rows.0"), "many": (_many, "at most 2500")}


@pytest.mark.parametrize("case", sorted(BAD_TRAJECTORIES))
def test_score_reports_malformed_trajectories(tmp_path: Path, trajectory: dict, case: str) -> None:
    change, expected = BAD_TRAJECTORIES[case]
    data = json.loads(json.dumps(trajectory))
    change(data)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    process = subprocess.run([sys.executable, "-m", "pytest_toolsandbox", "score", str(path), "--scenario",
                              str(Path(__file__).parents[1] / "scenarios/messaging/send_message_cellular_off.yaml")],
                             capture_output=True, text=True, timeout=120)
    assert process.returncode == 2
    assert "Traceback" not in process.stderr and expected in process.stderr and str(path) in process.stderr
    assert len(process.stderr.strip().splitlines()) == 1


def test_score_handles_call_arguments_nested_a_thousand_levels(tmp_path: Path, trajectory: dict) -> None:
    data = json.loads(json.dumps(trajectory))
    for message in data["messages"]:
        if message.get("tool_call"):
            message["tool_call"]["arguments"] = '{"a": ' + "[" * 1000 + "]" * 1000 + "}"
        if message.get("tool_trace"):  # the calls failed, so scoring parses the raw arguments
            message.update(tool_trace=None, exception="InvalidFormatError: too deep", error_code="IFE")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    process = subprocess.run([sys.executable, "-m", "pytest_toolsandbox", "score", str(path), "--json", "--scenario",
                              str(Path(__file__).parents[1] / "scenarios/messaging/send_message_cellular_off.yaml")],
                             capture_output=True, text=True, timeout=120)
    assert process.returncode == 0, process.stderr
    assert 0.0 <= json.loads(process.stdout)["score"] < 1.0


# ------------------------------------------------------------------------------------------------
# Scenario values that used to pass loading and fail (or explode) later.

SCENARIO = """
categories: [single_tool_call]
user: {{goal: Know whether wifi is on., first_message: "Is my wifi on?"}}
tools: [get_wifi_status, search_contacts]
{extra}
milestones:
  status: {{tool_call: {{get_wifi_status: {{}}}}}}
  told:
    after: [status]
    agent_says: "{says}"
    fill_from: {{milestone: status, values: {{state: result}}, formats: ["{fmt}"]}}
reference:
  - get_wifi_status()
  - {call}
  - agent: Wifi is on.
"""
def laughs(levels: int, field: str = "description") -> str:
    """Billion laughs in one field: each level a list of nine aliases of the level before, so `levels`
    levels hold 9**levels strings once expanded (the 9-level file is 342 bytes)."""
    names = "abcdefghi"[:levels]
    steps = ['&a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
             *(f"&{name} [{','.join(['*' + previous] * 9)}]" for previous, name in itertools.pairwise(names))]
    return f"{field}: [{', '.join(steps)}]"


LAUGHS = laughs(9)
DEFAULTS = {"extra": "", "says": "Wifi is {state}", "fmt": "{}", "call": 'search_contacts(name="Ada")'}
BAD_SCENARIOS = {
    "far_future": ({"extra": "now: '9999-12-31T23:59:59'"}, "field now"),
    "binary_argument": ({"call": "{search_contacts: {name: !!binary aGVsbG8=}}"}, "!!binary"),
    "set_argument": ({"call": "{search_contacts: {name: !!set {a, b}}}"}, "!!set"),
    "attribute_format": ({"fmt": "{num.bar}"}, "fill_from"),
    "huge_width": ({"fmt": "{:>300000000}"}, "spec '>300000000' is not allowed"),
    "attribute_placeholder": ({"says": "Wifi is {state.__class__}"}, "attribute and index access"),
    "bytes_literal_call": ({"call": 'search_contacts(name=b"Ada")'}, "the value of 'name' must be a literal"),
    "set_literal_call": ({"call": 'search_contacts(name={"Ada"})'}, "the value of 'name' must be a literal"),
    "laughs": ({"extra": LAUGHS}, "expand to more than 100,000 values"),
    "recursive_alias": ({"extra": "description: &loop [*loop]"}, "recursive YAML"),
}


@pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
def test_hostile_scenario_values_fail_at_load_time(tmp_path: Path, case: str) -> None:
    from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario

    values, expected = BAD_SCENARIOS[case]
    path = tmp_path / "hostile.yaml"
    path.write_text(SCENARIO.format(**{**DEFAULTS, **values}))
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert str(path) in str(error.value) and expected in str(error.value)


def test_aliases_within_the_budget_still_load(tmp_path: Path) -> None:
    from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario

    path = tmp_path / "aliases.yaml"
    path.write_text(SCENARIO.format(**{**DEFAULTS, "extra": "paraphrase_of: &text x.yaml\ndescription: *text"}))
    assert load_scenario(path).description == "x.yaml"
    # the budget counts values as expanded: 9**5 laughs (73,810 values with their lists) pass the check
    # and fail as the wrong type for the field; 9**6 do not reach the field checks
    path.write_text(SCENARIO.format(**{**DEFAULTS, "extra": laughs(5, "deny")}))
    with pytest.raises(ScenarioError, match=r"field deny\[0\]: .* is not a tool name") as within:
        load_scenario(path)
    assert "expand" not in str(within.value)
    path.write_text(SCENARIO.format(**{**DEFAULTS, "extra": laughs(6, "deny")}))
    with pytest.raises(ScenarioError, match="expand to more than 100,000 values"):
        load_scenario(path)


def test_the_laughs_file_is_a_collection_error_naming_it(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("laughs.yaml").write_text(SCENARIO.format(**{**DEFAULTS, "extra": LAUGHS}))
    result = pytester.runpytest("-p", "no:cacheprovider", "laughs.yaml", "--agent", "reference")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["laughs.yaml: its aliases (*name) expand to more than 100,000 values*"])


def test_the_hostile_scenario_template_is_valid(tmp_path: Path) -> None:
    from pytest_toolsandbox.scenario.loader import load_scenario

    path = tmp_path / "fine.yaml"
    path.write_text(SCENARIO.format(**DEFAULTS))
    assert load_scenario(path).milestones["told"].fill_from is not None
