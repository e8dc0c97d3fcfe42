"""What a run writes besides the report: `--update-baseline`, the Markdown summary (file and GitHub job
summary), the JUnit properties, a report directory rid of the previous run's stale files (and only
those), and pytest's exit statuses when an output cannot be written."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite


def test_update_baseline_writes_the_summary_that_then_gates(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    result = run(pytester, "--update-baseline", "baselines/reference.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "must be a file in an existing directory" in result.stderr.str()
    pytester.mkdir("baselines")
    result = run(pytester, "--update-baseline", "baselines/reference.json")
    assert "baseline updated: baselines/reference.json (4 scored trials)" in result.stdout.str()
    written = json.loads((pytester.path / "baselines" / "reference.json").read_text())
    assert [(item["path"], item["passed"]) for item in written["items"]] == sorted(
        (record["path"], record["passed"]) for record in summary(pytester)["records"])
    run(pytester, "--baseline", "baselines/reference.json").assert_outcomes(passed=2, xfailed=2)


def test_a_partial_run_does_not_replace_the_baseline(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    result = run(pytester, "-x", "-p", "no:randomly", "--update-baseline", "new.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "new.json: not updated, the run is partial" in result.stdout.str()
    assert not (pytester.path / "new.json").exists()


def test_the_previous_runs_stale_files_go_and_the_users_files_stay(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    report = pytester.path / "toolsandbox-report"
    run(pytester)
    shutil.copy(report / "summary.json", pytester.path / "baseline.json")
    run(pytester, "--baseline", "baseline.json")
    assert (report / "comparison.html").is_file()
    (report / "notes.txt").write_text("mine")
    (report / "trajectories" / "mine.html").write_text("mine too")
    stale = report / "trajectories" / "scenarios" / "settings" / "half"
    assert stale.is_dir()
    run(pytester, "scenarios/messaging").assert_outcomes(passed=1)
    left = sorted(path.relative_to(report).as_posix() for path in report.rglob("*") if path.is_file())
    assert "comparison.html" not in left and not stale.exists()  # written by the last run only
    assert not (report / "trajectories" / "scenarios" / "settings").exists()  # emptied directories go too
    assert {"notes.txt", "trajectories/mine.html"} <= set(left)  # never written by the plugin: kept
    assert [path for path in left if path.startswith("trajectories/scenarios/")] == [
        "trajectories/scenarios/messaging/wifi_status/base.html",
        "trajectories/scenarios/messaging/wifi_status/base.json"]


def test_an_output_that_cannot_be_written_fails_the_run_with_pytests_status(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    report = pytester.path / "toolsandbox-report"
    report.mkdir()
    (report / "trajectories").write_text("a file where a directory should be")
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # not 3, pytest's "internal error"
    assert "output file(s) could not be written; results above are complete" in result.stdout.str()


def test_markdown_summary_lists_regressions_with_links(pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester)
    run(pytester)
    shutil.copy(pytester.path / "toolsandbox-report" / "summary.json", pytester.path / "baseline.json")
    step_summary = pytester.path / "step-summary.md"
    step_summary.write_text("earlier step\n")
    for name, value in {"GITHUB_STEP_SUMMARY": str(step_summary), "GITHUB_SERVER_URL": "https://github.com",
                        "GITHUB_REPOSITORY": "me/project", "GITHUB_SHA": "abc123", "GITHUB_RUN_ID": "42"}.items():
        monkeypatch.setenv(name, value)
    pytester.mkdir("out")
    result = run(pytester, "--agent", "unhelpful", "--baseline", "baseline.json", "--ts-markdown", "out/run.md")
    result.assert_outcomes(failed=2, xfailed=2)
    text = (pytester.path / "out" / "run.md").read_text()
    assert text.startswith("## ToolSandbox: 4 items (2 failed, 2 xfailed)")
    assert "| group | items | similarity | pass rate | turns | errors |" in text
    assert "| category single_tool_call | 3 | 0.000 | 0.0% | 1.0 | 0 |" in text
    assert "Baseline `baseline.json`: 2 regressions, 0 improvements, 2 known failures." in text
    assert "### Regressions (passed in the baseline) (2)" in text
    link = ("- [`scenarios/settings/wifi_off.yaml` [base]](https://github.com/me/project/blob/abc123/"
            "scenarios/settings/wifi_off.yaml) — similarity 0.000 · diagnosis ")
    assert link in text
    assert "[trajectory](../toolsandbox-report/trajectories/scenarios/settings/wifi_off/base.html)" in text
    job = step_summary.read_text()
    assert job.startswith("earlier step\n## ToolSandbox: 4 items")  # appended after the other steps' text
    assert "trajectory: `trajectories/scenarios/settings/wifi_off/base.html` in the report artifact" in job
    assert "[this run](https://github.com/me/project/actions/runs/42)" in job


def test_junit_xml_carries_similarity_diagnosis_and_category(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "--junitxml", "junit.xml", "-n", "2").assert_outcomes(passed=2, failed=2)
    cases = {case.get("name"): case for case in ET.parse(pytester.path / "junit.xml").iter("testcase")
             if case.get("classname", "").endswith("half.yaml")}
    properties = {prop.get("name"): prop.get("value") for prop in cases["test_scenario[base]"].iter("property")}
    assert properties["toolsandbox_similarity"] == "0.5"
    assert properties["toolsandbox_categories"] == "multiple_tool_call,state_dependency"
    assert re.fullmatch(r"[A-Z_]+(,[A-Z_]+)*|", properties["toolsandbox_diagnosis"])
    assert properties["toolsandbox_variant"] == "base" and properties["toolsandbox_passed"] == "false"
    assert Path(pytester.path / "toolsandbox-report" / properties["toolsandbox_page"]).is_file()
