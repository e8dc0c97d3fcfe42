"""`validate`: the shipped suite passes, and deliberately broken copies fail with precise messages."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_toolsandbox.cli import main
from pytest_toolsandbox.scenario.loader import find_scenarios, load_scenario, read_yaml
from pytest_toolsandbox.suite.digests import DigestRun
from pytest_toolsandbox.suite.play import digest, play_reference
from pytest_toolsandbox.suite.steps import Piece, owners, script
from pytest_toolsandbox.suite.validate import Report, _where_they_differ, collect, validate
from pytest_toolsandbox.tools.augment import VARIANTS
from pytest_toolsandbox.tools.registry import all_tools

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


def broken_copy(tmp_path: Path, source: str, change: Callable[[dict[str, Any]], None], name: str = "") -> Path:
    """A copy of a shipped scenario, changed by `change`, written into tmp_path."""
    data = read_yaml((SCENARIOS / source).read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / (name or Path(source).name)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def check(path: Path) -> Report:
    """The checks this file tests; the mutation stage has its own tests (test_suite_mutants.py)."""
    return validate(collect([path]), determinism=False, mutants=False)


def lines(report: Report) -> list[str]:
    return [problem.line() for problem in report.errors]


def test_the_repository_suite_validates(capsys: pytest.CaptureFixture[str]) -> None:
    """CI guard: every shipped scenario passes every check, the cross-process determinism run and the mutation
    stage included: no generated wrong answer passes and no generated right answer fails, unless waived."""
    code = main(["validate", str(SCENARIOS), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == []
    assert [found for result in report["mutation"]["files"].values() for found in result["survivors"]] == []
    assert code == 0 and report["ok"] is True
    assert report["files"] == len(find_scenarios(SCENARIOS))
    assert report["items"] == report["files"] * len(VARIANTS)


def test_unsatisfiable_milestone_names_file_milestone_and_constraint(tmp_path: Path) -> None:
    def wrong_number(data: dict[str, Any]) -> None:
        data["milestones"]["message_sent"]["added"]["messaging"][0]["recipient_phone_number"] = "+19995550100"

    path = broken_copy(tmp_path, "messaging/send_message_cellular_off.yaml", wrong_number)
    report = check(path)
    assert not report.ok
    assert (f"{path}: reference [every variant]: milestone 'message_sent' reaches only 0 (at message 8: "
            "added.messaging 0, guardrails 1)") in lines(report)
    assert any(problem.milestone == "message_sent" for problem in report.errors)


def test_reference_that_fires_a_minefield(tmp_path: Path) -> None:
    def trap(data: dict[str, Any]) -> None:
        data["minefields"] = {"converted": {"tool_call": {"convert_currency": {
            "amount": 100, "from_currency_code": "USD", "to_currency_code": "EUR"}}}}

    path = broken_copy(tmp_path, "search/convert_currency.yaml", trap)
    report = check(path)
    assert (f"{path}: reference [every variant]: minefield 'converted' fires at message 4 "
            "(execution_environment → agent: '92.0')") in lines(report)


def test_tool_missing_from_the_allow_list(tmp_path: Path) -> None:
    def drop_clock(data: dict[str, Any]) -> None:
        data["tools"] = ["datetime_info_to_timestamp", "add_reminder"]
        data["reference"] = data["reference"][1:]
        data["milestones"]["clock_read"] = {"tool_call": {"get_current_timestamp": {}}}

    path = broken_copy(tmp_path, "reminders/add_reminder_tomorrow.yaml", drop_clock)
    report = check(path)
    tools = [problem for problem in report.errors if problem.check == "tools"]
    assert len(tools) == 1 and tools[0].milestone == "clock_read"
    assert tools[0].message == ("milestone 'clock_read' names 'get_current_timestamp', which the agent is not "
                                "offered (add it to tools:)")
    # Offered as a distraction in 10_distraction_tools and all_tools only: every other variant is listed.
    assert set(tools[0].variants) == set(VARIANTS) - {"10_distraction_tools", "all_tools"}


def test_minefield_on_a_denied_tool_can_never_fire(tmp_path: Path) -> None:
    def deny_trap(data: dict[str, Any]) -> None:
        data["minefields"]["asked_gps"] = {"tool_call": {"get_current_location": {}}}

    path = broken_copy(tmp_path, "insufficient_information/address_without_location.yaml", deny_trap)
    tools = [problem for problem in check(path).errors if problem.check == "tools"]
    assert tools and tools[0].variants == tuple(VARIANTS)
    assert tools[0].message == ("minefield 'asked_gps' names 'get_current_location', which the agent is not offered "
                                "(it is in deny:); its tool_call can never run — use attempted_call to catch attempts")


def test_attempted_call_minefield_may_name_a_withheld_tool(tmp_path: Path) -> None:
    """An agent can still try a denied tool by its real name; that attempt is what the minefield catches."""
    def deny_trap(data: dict[str, Any]) -> None:
        data["minefields"]["asked_gps"] = {"attempted_call": {"get_current_location": {}}}

    report = check(broken_copy(tmp_path, "insufficient_information/address_without_location.yaml", deny_trap))
    assert report.ok, lines(report)


def test_vacuous_milestone_satisfied_by_the_starting_world(tmp_path: Path) -> None:
    def already_true(data: dict[str, Any]) -> None:
        data["milestones"]["location_on"] = {"world": {"settings": {"location_service": True}}}

    path = broken_copy(tmp_path, "search/weather_here.yaml", already_true)
    assert lines(check(path)) == [
        f"{path}: vacuous: milestone 'location_on' is vacuous: it reaches 1.0 at message 2 (user → agent: "
        "\"What's the temperature outside right now?\"), before the agent does anything — make it require a "
        "change or call the agent must make"]


def test_vacuous_milestone_hiding_behind_a_needed_one(tmp_path: Path) -> None:
    """Mapped to the same message as a needed milestone, so only its own similarity reveals it."""
    def piggyback(data: dict[str, Any]) -> None:
        data["milestones"]["location_on"] = {"after": ["weather_looked_up"],
                                             "world": {"settings": {"location_service": True}}}

    path = broken_copy(tmp_path, "search/weather_here.yaml", piggyback)
    (problem,) = check(path).errors
    assert problem.check == "vacuous" and problem.milestone == "location_on"
    assert problem.message.startswith("milestone 'location_on' is vacuous: it still reaches 1.0 without reference[1] "
                                      "search_weather_around_lat_lon(latitude=37.323, longitude=-122.0322)")


def test_needed_milestones_pass_even_when_the_reference_repeats_a_step() -> None:
    """The failed send and the retry both belong to `message_sent`'s history; only the retry satisfies it."""
    report = check(SCENARIOS / "messaging" / "send_message_cellular_off.yaml")
    assert report.ok, lines(report)


def test_unhelpful_agent_passing_a_task_scenario_is_an_error(tmp_path: Path) -> None:
    def only_vacuous(data: dict[str, Any]) -> None:
        data["milestones"] = {"location_on": {"world": {"settings": {"location_service": True}}}}

    path = broken_copy(tmp_path, "search/weather_here.yaml", only_vacuous)
    unhelpful = [problem for problem in check(path).errors if problem.check == "unhelpful"]
    assert [p.message for p in unhelpful] == [
        "the always-declining agent passes (score 1): milestones ['location_on'] are reached without the agent "
        "doing anything"]


def test_a_bare_refusal_fails_insufficient_information_too(tmp_path: Path) -> None:
    """The always-declining agent names nothing that is missing; a `missing` list it happens to say is an error."""
    report = check(SCENARIOS / "insufficient_information" / "address_without_location.yaml")
    assert report.ok and report.notes == []
    path = broken_copy(tmp_path, "insufficient_information/address_without_location.yaml",
                       lambda data: data.update(missing=["coordinates", "help"]))
    assert [(p.check, p.message) for p in check(path).errors] == [(
        "unhelpful", "the always-declining agent passes: \"I'm sorry, I can't help with that.\" counts as an "
        "explanation; make `missing` name what the agent lacks (the tool or the information)")]


def test_reference_played_out_of_order(tmp_path: Path) -> None:
    def no_question(data: dict[str, Any]) -> None:  # the user's answer now has no question before it
        data["reference"] = [step for step in data["reference"] if step != {"agent": "Sure, who should I send it to?"}]

    path = broken_copy(tmp_path, "messaging/send_message_ask_recipient.yaml", no_question)
    messages = [problem.message for problem in check(path).errors if problem.check == "reference"]
    assert any(m.startswith("reference steps were played out of order (a user: step must directly follow the agent: "
                            "text it answers): reference[1] → reference[2] → reference[3] → reference[0]")
               for m in messages)
    assert any(m.startswith("the reference agent ran out of steps and had to improvise at message") for m in messages)


def test_paraphrase_links(tmp_path: Path) -> None:
    original = broken_copy(tmp_path, "search/convert_currency.yaml", lambda data: None)
    good = broken_copy(tmp_path, "search/convert_currency.yaml", lambda data: data.update(
        paraphrase_of=original.name, user={**data["user"], "first_message": "What are 100 dollars in euro?"}),
        name="sibling.yaml")
    missing = broken_copy(tmp_path, "search/convert_currency.yaml",
                          lambda data: data.update(paraphrase_of="gone.yaml"), name="missing.yaml")
    same = broken_copy(tmp_path, "search/convert_currency.yaml",
                       lambda data: data.update(paraphrase_of=original.name), name="same.yaml")
    assert check(good).ok and not check(good).warnings
    assert lines(check(missing)) == [f"{missing}: paraphrase: paraphrase_of 'gone.yaml': no such file "
                                     f"({tmp_path / 'gone.yaml'}); give a path relative to this file"]
    assert [w.message for w in check(same).warnings] == [
        "same first_message as 'convert_currency.yaml'; a paraphrase should word the request differently"]


def test_schema_errors_name_the_field(tmp_path: Path) -> None:
    path = broken_copy(tmp_path, "search/convert_currency.yaml", lambda data: data.update(treshold=0.5))
    assert lines(check(path)) == [
        f"{path}: schema: field treshold: unknown field; check the spelling (see docs/scenario-format.md)"]


def test_owners_map_parallel_calls_and_replies_to_their_piece(tmp_path: Path) -> None:
    def parallel(data: dict[str, Any]) -> None:
        data["tools"].append("get_wifi_status")
        data["reference"][0] = {"parallel": ["get_current_location()", "get_wifi_status()"]}

    scenario = load_scenario(broken_copy(tmp_path, "search/weather_here.yaml", parallel))
    trajectory = play_reference(scenario, all_tools())
    found = owners(trajectory.messages, script(scenario.reference))
    assert {index: piece for index, piece in found.items() if index <= 6} == {
        3: Piece(0, 0), 4: Piece(0, 1), 5: Piece(0, 0), 6: Piece(0, 1)}
    assert found[max(found)] == Piece(2)  # the agent's answer
    assert 2 not in found  # the user's first message belongs to no step


def test_second_interpreter_gives_the_same_digests() -> None:
    paths = [str(SCENARIOS / "messaging" / "send_message_cellular_off.yaml"),
             str(SCENARIOS / "search" / "weather_here.yaml")]
    theirs = DigestRun(paths).result()
    registry = all_tools()
    for path in paths:
        scenario = load_scenario(path, registry)
        assert theirs[path]["tool_name_scrambled"] == digest(play_reference(scenario, registry, "tool_name_scrambled"))


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nowhere")]) == 2
    assert "nowhere: no such file or directory" in capsys.readouterr().err
    assert main(["validate", str(tmp_path)]) == 2
    assert "no scenario files" in capsys.readouterr().err
    broken_copy(tmp_path, "search/convert_currency.yaml", lambda data: data.update(treshold=0.5))
    assert main(["validate", str(tmp_path), "--no-determinism"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: 1 errors in 1 files" in out and "field treshold" in out


def test_a_determinism_failure_names_the_first_differing_message() -> None:
    """Two genuinely different trajectories (base vs scrambled names) stand in for two diverging runs."""
    path = SCENARIOS / "messaging" / "send_message_cellular_off.yaml"
    registry = all_tools()
    scenario = load_scenario(path, registry)
    base = digest(play_reference(scenario, registry))
    scrambled = digest(play_reference(scenario, registry, "tool_name_scrambled"))
    index = base.first_difference(scrambled)
    assert index is not None and base.messages[:index] == scrambled.messages[:index]
    assert base.first_difference(base) is None
    assert _where_they_differ(path, "base", scrambled, registry).startswith(f"first at message {index}: ")


def test_a_reference_explanation_naming_nothing_missing_fails_the_reference_check(tmp_path: Path) -> None:
    path = broken_copy(tmp_path, "insufficient_information/address_without_location.yaml",
                       lambda data: data.update(missing=["bluetooth"]))
    assert lines(check(path)) == [
        f"{path}: reference [every variant]: the verdict fails it: no agent message says that the task cannot be done "
        "and names what is missing (bluetooth)"]
