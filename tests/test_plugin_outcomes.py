"""Pass/fail semantics: short failure messages, thresholds, errors, agent overrides, --lf."""

from __future__ import annotations

import pytest

from tests.test_plugin_support import records_by_id, run, summary, write_suite

REFUSE = "scenarios/settings/refuse.yaml::test_scenario[base]"
HALF = "scenarios/settings/half.yaml"

WIFI_OFF_AGENT = """
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall


class WifiOffAgent:
    name = "wifi-off-agent"

    def __init__(self, scenario=None):
        self.called = False

    def respond(self, messages, tools):
        if not self.called:
            self.called = True
            return Turn(tool_calls=(ToolCall(id="c1", name="set_wifi_status", arguments='{"on": false}'),))
        return Turn(text="Done, your wifi is off.")
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    write_suite(pytester)
    return pytester


def test_failure_message_is_short_and_points_at_the_trajectory(suite: pytest.Pytester) -> None:
    result = run(suite, "scenarios/settings/refuse.yaml")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "refuse [base]: failed (similarity 0.0000)" in output  # no threshold set: the verdict decides
    assert "missed milestone wifi_off (0.000)" in output
    assert "trajectory: toolsandbox-report/trajectories/scenarios/settings/refuse/base.html" in output
    assert (suite.path / "toolsandbox-report/trajectories/scenarios/settings/refuse/base.html").is_file()
    assert "Traceback" not in output and "plugin.py" not in output and "raise ScenarioFailed" not in output
    assert f"_ {REFUSE} _" in output  # the failure headline names the scenario file


def test_threshold_from_option_ini_and_scenario_file(suite: pytest.Pytester) -> None:
    run(suite, HALF).assert_outcomes(failed=1)
    run(suite, HALF, "--threshold", "0.5").assert_outcomes(passed=1)
    run(suite, HALF, "--threshold", "0.6").assert_outcomes(failed=1)
    suite.makeini("[pytest]\ntoolsandbox_threshold = 0.5\n")
    run(suite, HALF).assert_outcomes(passed=1)
    text = (suite.path / HALF).read_text()
    (suite.path / HALF).write_text(text + "threshold: 0.4\n")
    run(suite, HALF, "--threshold", "0.9").assert_outcomes(passed=1)  # the file's own threshold wins
    record = summary(suite)["records"][0]
    assert record["threshold"] == 0.4 and record["score"] == pytest.approx(0.5) and record["passed"]


def test_conftest_overrides_the_agent_fixture(suite: pytest.Pytester) -> None:
    suite.makepyfile(my_agents=WIFI_OFF_AGENT)
    suite.makeconftest("""
import pytest
from my_agents import WifiOffAgent


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    return WifiOffAgent(toolsandbox_scenario)
""")
    run(suite, "scenarios/settings/refuse.yaml").assert_outcomes(passed=1)
    assert records_by_id(summary(suite))[REFUSE]["agent"] == "wifi-off-agent"


def test_conftest_overrides_the_start_world(suite: pytest.Pytester) -> None:
    suite.makeconftest("""
import polars as pl
import pytest
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.world import Table


@pytest.fixture
def toolsandbox_start_world(toolsandbox_scenario):
    world = build_world(toolsandbox_scenario)
    world.write(Table.SETTINGS, world.table(Table.SETTINGS).with_columns(pl.lit(False).alias("wifi")))
    return world
""")
    # The refusing agent changes nothing, but wifi already starts off: the milestone holds.
    run(suite, "scenarios/settings/refuse.yaml").assert_outcomes(passed=1)


def test_agent_option_accepts_module_and_class(suite: pytest.Pytester) -> None:
    suite.makepyfile(my_agents=WIFI_OFF_AGENT)
    suite.syspathinsert()
    result = run(suite, "scenarios/settings/refuse.yaml", "--agent", "my_agents:WifiOffAgent")
    result.assert_outcomes(passed=1)
    record = records_by_id(summary(suite))[REFUSE]
    assert (record["agent"], record["agent_spec"]) == ("wifi-off-agent", "my_agents:WifiOffAgent")


def test_agent_option_accepts_an_entry_point(suite: pytest.Pytester) -> None:
    suite.makepyfile(my_agents=WIFI_OFF_AGENT)
    info = suite.path / "my_agents-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-agents\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest_toolsandbox.agents]\nwifi = my_agents:WifiOffAgent\n")
    suite.syspathinsert()
    run(suite, "scenarios/settings/refuse.yaml", "--agent", "wifi").assert_outcomes(passed=1)


def test_replay_agent_rescores_a_previous_report(suite: pytest.Pytester) -> None:
    run(suite).assert_outcomes(passed=2, failed=2)
    first = records_by_id(summary(suite))
    replay = run(suite, "--agent", "replay:toolsandbox-report/trajectories", "--report-dir", "replayed")
    replay.assert_outcomes(passed=2, failed=2)
    again = records_by_id(summary(suite, "replayed"))
    assert {nodeid: record["score"] for nodeid, record in again.items()} == {
        nodeid: record["score"] for nodeid, record in first.items()}
    assert {record["agent"] for record in again.values()} == {"replay"}


def test_max_messages_caps_the_episode(suite: pytest.Pytester) -> None:
    result = run(suite, "scenarios/settings/wifi_off.yaml", "--max-messages", "1")
    result.assert_outcomes(failed=1)
    assert "episode ended by max_messages" in result.stdout.str()
    assert summary(suite)["records"][0]["ended_by"] == "max_messages"


def test_a_crashing_agent_is_an_error_not_a_failure(suite: pytest.Pytester) -> None:
    suite.makeconftest("""
import pytest


class Broken:
    name = "broken"

    def respond(self, messages, tools):
        raise RuntimeError("provider unavailable")


@pytest.fixture
def toolsandbox_agent():
    return Broken()
""")
    result = run(suite, "scenarios/settings/wifi_off.yaml")
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert "the episode stopped with an error" in output and "provider unavailable" in output
    assert "Traceback" not in output
    data = summary(suite)
    assert data["records"][0]["outcome"] == "error"
    stats = data["aggregates"]["broken"]  # the conftest's agent goes by its own name, not the default spec's
    assert list(data["aggregates"]) == ["broken"] and stats["names"] == ["broken"] and "agent broken\n" in output
    assert stats["all"]["errors"] == 1
    assert stats["all"]["mean_similarity"] is None


def test_half_an_emoji_in_agent_output_is_reported_not_an_internal_error(suite: pytest.Pytester) -> None:
    """A lone surrogate (a model's output cut inside an emoji) cannot be encoded as UTF-8."""
    suite.makeconftest("""
import pytest
from pytest_toolsandbox.roles.base import Turn


class Cut:
    name = "cut"

    def respond(self, messages, tools):
        return Turn(text="done \\ud83d")


@pytest.fixture
def toolsandbox_agent():
    return Cut()
""")
    result = run(suite, "scenarios/settings/wifi_off.yaml")
    result.assert_outcomes(failed=1)
    assert "INTERNALERROR" not in result.stdout.str()
    page = suite.path / "toolsandbox-report" / summary(suite)["records"][0]["trajectory"]
    assert "done \ufffd" in page.read_text(encoding="utf-8")


def test_last_failed_reruns_only_the_failures(suite: pytest.Pytester) -> None:
    run(suite, cache=True).assert_outcomes(passed=2, failed=2)
    again = run(suite, "--lf", cache=True)
    again.assert_outcomes(failed=2)
    assert "rerun previous 2 failures" in again.stdout.str()
