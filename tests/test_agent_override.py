"""`--agent` with a conftest.py that overrides `toolsandbox_agent`: an override that ignores the spec
stops the run with one message (the run would be labelled with a spec it did not run); an override that
reads the spec, or a run without `--agent`, runs as written."""

from __future__ import annotations

import re

import pytest

from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite

IGNORING = """
import pytest
from pytest_toolsandbox.roles.scripted import UnhelpfulAgent

@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    return UnhelpfulAgent()
"""

READING = """
import pytest
from pytest_toolsandbox.roles.scripted import ReferenceAgent, UnhelpfulAgent

@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario, toolsandbox_case):
    return ReferenceAgent(toolsandbox_scenario) if toolsandbox_case.agent == "agents:Good" else UnhelpfulAgent()
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_an_override_that_ignores_the_agent_option_stops_the_run(pytester: pytest.Pytester,
                                                                 workers: tuple[str, ...]) -> None:
    write_suite(pytester)
    pytester.makeconftest(IGNORING)
    result = run(pytester, "--agent", "reference", *workers)
    output = result.stdout.str()
    output = output + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    reported = output.split("short test summary info")[0]  # the summary repeats it in full when $CI is set
    assert reported.count("toolsandbox: --agent reference would not be used: the toolsandbox_agent fixture is "
                          "overridden (") == 1
    assert re.search(r"conftest.py:\d+\) and builds its own agent\. Drop --agent", output)
    assert "passed" not in output and "failed" not in output
    assert not (pytester.path / "toolsandbox-report" / "summary.json").exists()


def test_without_the_option_the_override_runs(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    pytester.makeconftest(IGNORING)
    run(pytester).assert_outcomes(failed=1)


def test_an_override_that_reads_the_spec_runs_each_agent(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    pytester.makeconftest(READING)
    pytester.makepyfile(agents="class Good:\n    pass\n")
    run(pytester, "--agent", "agents:Good", "--agent", "unhelpful").assert_outcomes(passed=1, failed=1)
    assert {record["agent_spec"]: record["outcome"] for record in summary(pytester)["records"]} == {
        "agents:Good": "passed", "unhelpful": "failed"}  # the override built the agent each spec names


OWN_AGENT = """
import os

import pytest

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ReferenceAgent


class {name}:
    {declared}
    def __init__(self, scenario):
        self.reference = ReferenceAgent(scenario)

    def respond(self, messages, tools):
        if os.environ.get("BROKEN"):
            return Turn(text="I cannot help with that.")
        return self.reference.respond(messages, tools)


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    return {name}(toolsandbox_scenario)
"""


@pytest.fixture
def reference_baseline(pytester: pytest.Pytester) -> pytest.Pytester:
    """The project's standing baseline (ini) holds the default agent's (reference's) results."""
    write_suite(pytester)
    run(pytester, "--update-baseline", "reference.json").assert_outcomes(passed=2, failed=2)
    pytester.makeini("[pytest]\ntoolsandbox_baseline = reference.json\n")
    return pytester


@pytest.mark.parametrize(("declared", "identity"), [("", "OneToolAgent"), ('name = "my-agent"', "my-agent")])
def test_an_agent_built_by_an_override_goes_by_its_own_name(reference_baseline: pytest.Pytester,
                                                            monkeypatch: pytest.MonkeyPatch, declared: str,
                                                            identity: str) -> None:
    """Never under the default spec's name, so never gated by the default agent's baseline: its failures are
    real failures (not expected ones) until it has a baseline of its own, which then gates it."""
    pytester = reference_baseline
    pytester.makeconftest(OWN_AGENT.format(name="OneToolAgent", declared=declared))
    monkeypatch.setenv("BROKEN", "1")
    result = run(pytester, "--ts-markdown", "summary.md")
    result.assert_outcomes(failed=4)  # not 2 xfailed: reference's known failures say nothing about this agent
    output = result.stdout.str()
    assert f"{identity} ran ungated (the baseline holds results of reference only)" in output
    assert f"agent {identity}\n" in output
    data = summary(pytester)
    assert list(data["aggregates"]) == [identity] and data["run"]["agents"] == [identity]
    assert {record["agent_spec"] for record in data["records"]} == {identity}
    assert data["baseline"]["ungated"] == [identity] and data["baseline"]["gates"] == {}
    assert f"{identity} ran ungated" in (pytester.path / "summary.md").read_text()
    assert f"agent {identity}" in (pytester.path / "toolsandbox-report" / "index.html").read_text()

    monkeypatch.delenv("BROKEN")
    run(pytester, "--update-baseline", "mine.json").assert_outcomes(passed=2, failed=2)
    monkeypatch.setenv("BROKEN", "1")
    gated = run(pytester, "--baseline", "mine.json")
    gated.assert_outcomes(failed=2, xfailed=2)  # its own known failures, its own regressions
    assert gated.ret == pytest.ExitCode.TESTS_FAILED
    assert "baseline mine.json: 2 regressions, 0 improvements, 2 known failures" in gated.stdout.str()
    assert summary(pytester)["baseline"]["gates"] == {identity: identity}
