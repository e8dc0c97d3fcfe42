"""Hostile agents, files and options against whole pytest runs (issue 7).

Each run plays the four-scenario suite; one scenario (`messaging/wifi_status`) gets a hostile agent
through a conftest override, the three others the reference agent. Whatever the hostile agent does,
the run must complete without INTERNALERROR, only the hostile item may error, with a one-paragraph
reason, and `summary.json` must be strict JSON holding every other result.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_plugin_support import QUIET, SUITE, records_by_id, run, write_suite

HOSTILE_ID = "scenarios/messaging/wifi_status.yaml::test_scenario[base]"
OTHERS = {"scenarios/settings/wifi_off.yaml::test_scenario[base]": "passed",
          "scenarios/settings/half.yaml::test_scenario[base]": "failed",
          "scenarios/settings/refuse.yaml::test_scenario[base]": "failed"}

AGENTS = r'''
import enum
import os
import socket

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall

DEEP = '{"a": ' + "[" * 1000 + "]" * 1000 + "}"


class Base:
    name = "hostile"

    def __init__(self, scenario=None):
        self.turns = 0

    def respond(self, messages, tools):
        self.turns += 1
        if self.turns == 1:
            return self.first(tools)
        return Turn(text="Done.")

    def first(self, tools):
        return Turn(tool_calls=(ToolCall(id="c1", name="get_wifi_status", arguments="{}"),))


class DeepArguments(Base):
    def first(self, tools):
        return Turn(tool_calls=(ToolCall(id="c1", name="get_wifi_status", arguments=DEEP),))


class SdkUsage(Base):
    model = "gpt-4o"  # priced: spend is computed from the counts that are numbers
    usage = {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 0,
             "audio_tokens": None}, "cache_creation_input_tokens": None, "ratio": float("nan"),
             "input_tokens": None, "output_tokens": "many"}


class Model(enum.Enum):
    GPT = "gpt-4o"


class ObjectModel(Base):
    model = Model.GPT
    usage = {"client": object(), Model.GPT: 1}


class ClientModel(Base):
    model = socket.socket  # an object (a class), not a name


class RaisesSystemExit(Base):
    def respond(self, messages, tools):
        raise SystemExit(3)


class RaisesGeneratorExit(Base):
    def respond(self, messages, tools):
        raise GeneratorExit("bye")


class RaisesBaseException(Base):
    def respond(self, messages, tools):
        raise BaseException("custom base exception")


class Flood(Base):
    def first(self, tools):
        return Turn(tool_calls=tuple(ToolCall(id=f"c{k}", name="set_wifi_status", arguments='{"on": false}')
                                     for k in range(10_000)))


class Terminal(Base):
    name = "\x1b]0;owned\x07evil\x1b[31mred\x1b[0m"

    def respond(self, messages, tools):
        self.turns += 1
        if self.turns == 1:
            return Turn(tool_calls=(ToolCall(id="c1", name="get_wifi_status", arguments="{}"),))
        return Turn(text="\x1b[2J\x1b]8;;http://x\x07click\x1b]8;;\x07 \x9b31m")


class Declines(Base):
    def first(self, tools):
        return Turn(text="No.")


globals()["Declines-x"] = Declines  # a second spec that spells the same id as hostile_agents:Declines_x
Declines_x = Base


class Unbuildable(Base):
    def __init__(self, scenario=None):
        raise RuntimeError("OPENAI_API_KEY is not set")


class Hung(Base):
    """Blocks on a loopback server that never answers (like an HTTP call that hangs)."""

    def respond(self, messages, tools):
        connection = socket.create_connection(("127.0.0.1", int(os.environ["HUNG_PORT"])))
        connection.recv(1)
        return Turn(text="never")
'''

CONFTEST = """
import pytest
import hostile_agents
from pytest_toolsandbox.roles.scripted import ReferenceAgent


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    if toolsandbox_scenario.name == "wifi_status":
        return getattr(hostile_agents, "{kind}")(scenario=toolsandbox_scenario)
    return ReferenceAgent(toolsandbox_scenario)
"""


def _strict(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def hostile_run(pytester: pytest.Pytester, kind: str, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    write_suite(pytester)
    pytester.makepyfile(hostile_agents=AGENTS)
    pytester.makeconftest(CONFTEST.replace("{kind}", kind))
    pytester.syspathinsert()
    result = run(pytester, *args)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    data = _strict((pytester.path / "toolsandbox-report" / "summary.json").read_text(encoding="utf-8"))
    records = records_by_id(data)
    assert {nodeid: records[nodeid]["outcome"] for nodeid in OTHERS} == OTHERS
    assert data["counts"]["finished"] == 4 and not data["partial"]
    return result, records[HOSTILE_ID]


def _error_text(result: pytest.RunResult) -> str:
    output = result.stdout.str()
    assert "Traceback" not in output
    return output


@pytest.mark.parametrize("kind", ["RaisesSystemExit", "RaisesGeneratorExit", "RaisesBaseException"])
def test_base_exceptions_from_an_agent_error_that_item_alone(pytester: pytest.Pytester, kind: str) -> None:
    result, record = hostile_run(pytester, kind, "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=2, errors=1)
    assert record["outcome"] == "error" and record["ended_by"] == "error"
    assert "the episode stopped with an error" in record["error"]
    assert "fixture" not in _error_text(result).lower().split("short test summary")[0].split("errors")[-1]


def test_arguments_nested_a_thousand_levels_deep_are_a_format_error(pytester: pytest.Pytester) -> None:
    result, record = hostile_run(pytester, "DeepArguments")
    result.assert_outcomes(passed=1, failed=3)
    assert record["outcome"] == "failed"
    assert any(finding["code"] == "IFE" for finding in record["diagnosis"])
    page = (pytester.path / "toolsandbox-report" / record["page"]).read_text(encoding="utf-8")
    assert "[[[[" in page  # shown as the agent sent it


def test_sdk_shaped_usage_is_recorded_as_plain_data(pytester: pytest.Pytester) -> None:
    result, record = hostile_run(pytester, "SdkUsage")
    result.assert_outcomes(passed=2, failed=2)
    assert record["tokens"]["agent"] == {
        "prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 0,
                                                                               "audio_tokens": None},
        "cache_creation_input_tokens": None, "ratio": None, "input_tokens": None, "output_tokens": "many"}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_object_models_are_recorded_as_names(pytester: pytest.Pytester, workers: list[str]) -> None:
    result, record = hostile_run(pytester, "ObjectModel", *workers)
    result.assert_outcomes(passed=2, failed=2)
    assert record["agent_model"] == "gpt-4o"
    assert record["tokens"]["agent"] == {"client": "<object>", "gpt-4o": 1}


def test_a_class_as_model_is_recorded_by_its_type(pytester: pytest.Pytester) -> None:
    _, record = hostile_run(pytester, "ClientModel")
    assert record["agent_model"] == "<type>"


def test_ten_thousand_calls_in_one_turn_are_capped_with_feedback(pytester: pytest.Pytester) -> None:
    from pytest_toolsandbox.running.episode import MAX_CALLS_PER_TURN

    result, record = hostile_run(pytester, "Flood")
    result.assert_outcomes(passed=1, failed=3)
    trajectory = json.loads((pytester.path / "toolsandbox-report" / record["trajectory"]).read_text())
    calls = [m for m in trajectory["messages"] if m.get("tool_call")]
    assert len(calls) == MAX_CALLS_PER_TURN
    assert any("9984 of the 10000 tool calls" in (m.get("exception") or "") for m in trajectory["messages"])


def test_control_sequences_never_reach_the_terminal(pytester: pytest.Pytester) -> None:
    result, record = hostile_run(pytester, "Terminal", "-v")
    output = result.stdout.str()
    assert "\x1b]" not in output and "\x07" not in output and "\x9b" not in output and "\x1b[2J" not in output
    assert record["agent"] == "\x1b]0;owned\x07evil\x1b[31mred\x1b[0m"  # the data itself is kept


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_an_agent_that_cannot_be_built_is_one_usage_error(pytester: pytest.Pytester, workers: list[str]) -> None:
    write_suite(pytester)
    pytester.makepyfile(hostile_agents=AGENTS)
    pytester.syspathinsert()
    result = run(pytester, "--agent", "hostile_agents:Unbuildable", *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output
    assert output.count("RuntimeError: OPENAI_API_KEY is not set") == 1
    assert not (pytester.path / "toolsandbox-report").exists()


@pytest.fixture
def hung_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A loopback server that accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    monkeypatch.setenv("HUNG_PORT", str(port))
    yield port
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    server.close()


def test_a_hung_agent_errors_within_the_timeout_under_two_workers(pytester: pytest.Pytester,
                                                                  hung_server: int) -> None:
    result, record = hostile_run(pytester, "Hung", "-n", "2", "--episode-timeout", "2")
    result.assert_outcomes(passed=1, failed=2, errors=1)
    assert record["outcome"] == "error"
    assert "did not finish within 2 s" in record["error"]
    assert record["duration"] < 30  # the timeout, not the blocked call, decided


def test_a_file_as_report_directory_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    (pytester.path / "toolsandbox-report").write_text("not a directory")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "toolsandbox-report is a file, not a directory" in result.stderr.str()


def test_write_failures_mid_run_keep_every_result(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    report = pytester.path / "toolsandbox-report"
    report.mkdir()
    (report / "trajectories").write_text("a file where the trajectories directory should be")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # pytest's meaning: the run did not succeed
    result.assert_outcomes(passed=2, failed=2)  # every item ran
    assert "INTERNALERROR" not in result.stdout.str()
    assert "output file(s) could not be written" in result.stdout.str()
    data = _strict((report / "summary.json").read_text(encoding="utf-8"))
    assert data["counts"]["finished"] == 4
    assert all(record["trajectory"] is None and record["page"] is None for record in data["records"])


def test_an_unwritable_summary_still_prints_the_results(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    (pytester.path / "toolsandbox-report" / "summary.json").mkdir(parents=True)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, failed=2)
    assert "summary.json" in result.stdout.str() and "could not be written" in result.stdout.str()
    result.stdout.fnmatch_lines(["*all*4*"])  # the per-category table from memory
    assert "report: toolsandbox-report/index.html" not in result.stdout.str()
    assert "report: NOT written: toolsandbox-report/summary.json could not be written" in result.stdout.str()


def test_a_full_disk_at_the_summary_is_reported_as_not_written(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    pytester.makeconftest("""
import errno

import pytest_toolsandbox.report.results.summary as summary

original = summary.write_atomic


def full_disk(path, text):
    if path.name == "summary.json":
        raise OSError(errno.ENOSPC, "No space left on device", str(path))
    original(path, text)


summary.write_atomic = full_disk


def pytest_unconfigure(config):  # pytester runs in this process: later runs must write again
    summary.write_atomic = original
""")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # a run that would pass exits 1 when an output is lost
    output = result.stdout.str()
    assert "report: toolsandbox-report/index.html" not in output
    assert "report: NOT written: toolsandbox-report/summary.json could not be written" in output
    assert "summary.json: No space left on device" in output
    assert not (pytester.path / "toolsandbox-report" / "summary.json").exists()


def test_nan_threshold_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    result = run(pytester, "--threshold", "nan")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "'nan' is not a finite number" in result.stderr.str()


def write_baseline(path: Path, records: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"records": records}), encoding="utf-8")
    return path


def test_verbose_lines_show_node_ids_and_headlines_name_the_file(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    for workers in ([], ["-n", "2"]):
        output = run(pytester, "-v", *workers).stdout.str()
        assert "half::yaml" not in output
        assert "scenarios/settings/half.yaml::test_scenario[base] FAILED" in output.replace("[gw0] ", "").replace(
            "[gw1] ", "") or "FAILED scenarios/settings/half.yaml::test_scenario[base]" in output
        assert "_ scenarios/settings/half.yaml::test_scenario[base] _" in output


@pytest.mark.parametrize("form", ["space", "equals"])
@pytest.mark.parametrize("only", ["--baseline", "--report-dir", None])
def test_path_options_outside_the_repository_do_not_move_the_rootdir(
        pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, form: str, only: str | None) -> None:
    write_suite(pytester)
    pytester.makeini("[pytest]\ntestpaths = scenarios\ntoolsandbox_threshold = 1.0\n")
    pytester.makepyfile(test_not_a_scenario="def test_must_not_run():\n    assert False\n")
    run(pytester).assert_outcomes(passed=2, failed=2)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    baseline = elsewhere / "old.json"
    baseline.write_text((pytester.path / "toolsandbox-report" / "summary.json").read_text())
    (elsewhere / "scenarios").mkdir()
    (elsewhere / "report").mkdir()
    options = {"--baseline": str(baseline), "--report-dir": str(elsewhere / "report"),
               "--scenarios": str(pytester.path / "scenarios")}
    if only is not None:  # alone, or all three together
        options = {"--baseline": options["--baseline"], only: options[only]}
    flat = [part for flag, value in options.items()
            for part in ([flag, value] if form == "space" else [f"{flag}={value}"])]
    result = run(pytester, *flat)
    result.stdout.fnmatch_lines([f"rootdir: {pytester.path}", "configfile: tox.ini"])
    result.assert_outcomes(passed=2, xfailed=2)  # gated by the baseline; the ini's testpaths ran
    assert result.ret == pytest.ExitCode.OK
    report = elsewhere / "report" if "--report-dir" in options else pytester.path / "toolsandbox-report"
    data = json.loads((report / "summary.json").read_text())
    assert data["baseline"]["known_failure"] and data["counts"]["finished"] == 4


def test_replay_of_a_report_finds_its_files_next_to_another_agent(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "first").assert_outcomes(passed=2, failed=2)
    result = run(pytester, "--agent", "reference", "--agent", "replay:first/trajectories")
    result.assert_outcomes(passed=4, failed=4)
    records = list(records_by_id(summary_of(pytester)).values())
    assert all(record["error"] is None for record in records)
    by_agent = {spec: sorted((r["path"], r["outcome"]) for r in records if r["agent_spec"] == spec)
                for spec in ("reference", "replay:first/trajectories")}
    assert by_agent["reference"] == by_agent["replay:first/trajectories"]


def test_agent_specs_spelling_the_same_id_keep_their_own_trajectories(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": SUITE["scenarios/settings/wifi_off.yaml"]})
    pytester.makepyfile(hostile_agents=AGENTS)
    pytester.syspathinsert()
    result = run(pytester, "--agent", "hostile_agents:Declines-x", "--agent", "hostile_agents:Declines_x")
    result.assert_outcomes(failed=2)
    records = summary_of(pytester)["records"]
    assert len({record["id"] for record in records}) == 2
    assert len({record["trajectory"] for record in records}) == 2
    texts = {record["agent_spec"]: (pytester.path / "toolsandbox-report" / record["trajectory"]).read_text()
             for record in records}
    assert '"No."' in texts["hostile_agents:Declines-x"] and '"No."' not in texts["hostile_agents:Declines_x"]


def summary_of(pytester: pytest.Pytester) -> dict[str, Any]:
    return _strict((pytester.path / "toolsandbox-report" / "summary.json").read_text(encoding="utf-8"))


def test_a_scenario_file_name_with_markup_is_escaped_in_pytest_html(pytester: pytest.Pytester) -> None:
    import html
    import re

    name = "scenarios/settings/<img src=x onerror=alert(1)>.yaml"
    write_suite(pytester, {name: SUITE["scenarios/settings/wifi_off.yaml"]})
    run(pytester, "--html=report.html").assert_outcomes(passed=1)
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    blob = json.loads(html.unescape(re.search(r'data-jsonblob="([^"]*)"', page).group(1)))
    cells = [cell for test in blob["tests"].values() for row in test for cell in row["resultsTableRow"]]
    id_cells = [cell for cell in cells if 'class="col-testId"' in cell]
    assert id_cells and all("<img" not in cell and "&lt;img src=x onerror=alert(1)&gt;" in cell for cell in id_cells)


# ------------------------------------------------------------------------------------------------
# A run that stops early never leaves the previous run's summary looking like its own (issue 25).

STOPS_AT_FIRST_ITEM = {
    "ctrl-c": ("""
import pytest
from pytest_toolsandbox.roles.scripted import ReferenceAgent


class Interrupted(ReferenceAgent):
    def respond(self, messages, tools):
        raise KeyboardInterrupt


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    return Interrupted(toolsandbox_scenario)
""", pytest.ExitCode.INTERRUPTED),
    "internal error": ("""
def pytest_runtest_logstart(nodeid, location):
    raise RuntimeError("a plugin bug")
""", pytest.ExitCode.INTERNAL_ERROR),
}


@pytest.mark.parametrize("case", sorted(STOPS_AT_FIRST_ITEM))
def test_a_run_stopped_before_its_first_result_replaces_the_last_summary(pytester: pytest.Pytester,
                                                                         case: str) -> None:
    write_suite(pytester)
    run(pytester).assert_outcomes(passed=2, failed=2)
    summary_path = pytester.path / "toolsandbox-report" / "summary.json"
    last = _strict(summary_path.read_text(encoding="utf-8"))
    assert not last["partial"] and last["counts"]["passed"] == 2
    conftest, status = STOPS_AT_FIRST_ITEM[case]
    pytester.makeconftest(conftest)
    result = pytester.runpytest_subprocess(*QUIET)  # a KeyboardInterrupt in-process would stop this session too
    assert result.ret == status
    data = _strict(summary_path.read_text(encoding="utf-8"))
    assert data["partial"] and data["run"]["exit_status"] == status
    assert data["counts"]["expected"] == 4 and data["counts"]["passed"] == 0
    assert data["run"]["started"] >= last["run"]["finished"]


def test_a_run_stopped_while_collecting_scenarios_removes_the_last_summary(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester).assert_outcomes(passed=2, failed=2)
    summary_path = pytester.path / "toolsandbox-report" / "summary.json"
    assert summary_path.exists()
    pytester.makeconftest("""
def pytest_collection_modifyitems(items):
    raise KeyboardInterrupt  # Ctrl-C at the end of collection
""")
    assert pytester.runpytest_subprocess(*QUIET, "--collect-only").ret == pytest.ExitCode.INTERRUPTED
    assert summary_path.exists()  # only showing what would run: the report is left alone
    assert pytester.runpytest_subprocess(*QUIET).ret == pytest.ExitCode.INTERRUPTED
    assert not summary_path.exists() and not (summary_path.parent / "index.html").exists()
