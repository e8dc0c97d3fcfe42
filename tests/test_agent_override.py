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
    return ReferenceAgent(toolsandbox_scenario) if toolsandbox_case.agent == "good" else UnhelpfulAgent()
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
    run(pytester, "--agent", "agents:Good", "--agent", "unhelpful").assert_outcomes(failed=2)
    assert {record["agent_spec"] for record in summary(pytester)["records"]} == {"agents:Good", "unhelpful"}
