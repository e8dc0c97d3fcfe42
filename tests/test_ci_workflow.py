"""The CI recipe's steps (docs/examples/toolsandbox-ci.yml), run as the job runs them, in a fresh clone
with no network: green on the shipped cassettes and baseline, with a job summary and JUnit properties;
red, with the regressions listed in the job summary, when another agent is gated on the same baseline."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.clone import ROOT, clone_env, make_clone, run_line, shipped_counts, shipped_outcome

WORKFLOW = yaml.safe_load((ROOT / "docs" / "examples" / "toolsandbox-ci.yml").read_text(encoding="utf-8"))
STEPS = WORKFLOW["jobs"]["evaluate"]["steps"]
EVALUATE = next(step["run"] for step in STEPS if step.get("name") == "Evaluate")


def job_env(clone: Path) -> dict[str, str]:
    """What GitHub Actions sets for a step (the job's env, the summary file, the run's coordinates)."""
    return clone_env(**WORKFLOW["jobs"]["evaluate"]["env"], GITHUB_STEP_SUMMARY=str(clone / "step-summary.md"),
                     GITHUB_SERVER_URL="https://github.com", GITHUB_REPOSITORY="me/agents", GITHUB_SHA="c0ffee",
                     GITHUB_RUN_ID="7")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    return make_clone(tmp_path)


def test_the_workflow_installs_replays_gates_and_uploads() -> None:
    runs = [step.get("run", "") for step in STEPS]
    assert any(command.startswith("python -m pip install -e") for command in runs)
    assert "--baseline" in EVALUATE and "--junitxml toolsandbox-report/junit.xml" in EVALUATE
    assert WORKFLOW["jobs"]["evaluate"]["env"]["CI"]
    upload = next(step for step in STEPS if str(step.get("uses", "")).startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "toolsandbox-report/"


def test_green_on_the_shipped_cassettes(clone: Path) -> None:
    result = run_line(EVALUATE, clone, job_env(clone))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = (clone / "step-summary.md").read_text(encoding="utf-8")
    known = shipped_outcome()[1]
    assert summary.startswith(f"## ToolSandbox: 158 items ({shipped_counts()})")
    assert "| category insufficient_information | 34 |" in summary
    assert f"0 regressions, 0 improvements, {known} known failures" in summary and "### Regressions" not in summary
    cases = list(ET.parse(clone / "toolsandbox-report" / "junit.xml").iter("testcase"))
    properties = [{prop.get("name"): prop.get("value") for prop in case.iter("property")} for case in cases]
    assert len(cases) == 158 and all("toolsandbox_similarity" in found for found in properties)
    assert all(found["toolsandbox_change"] in ("unchanged", "known_failure") for found in properties)


def test_red_with_the_regressions_in_the_job_summary(clone: Path) -> None:
    """The shipped baseline's 11 passes are insufficient-information tasks, which the unhelpful agent passes
    too (0 regressions, 23 improvements): a baseline the unhelpful agent can regress against is recorded
    first, with --update-baseline, from the reference agent on one folder."""
    folder = "scenarios/messaging/"
    recorded = run_line(f"python -m pytest --agent reference {folder} --update-baseline baselines/reference.json",
                        clone, clone_env())
    assert recorded.returncode == 0
    assert "baseline updated: baselines/reference.json (21 scored trials)" in recorded.stdout
    evaluate = EVALUATE.replace("baselines/qwen2.5-coder-1.5b-instruct.json", "baselines/reference.json")
    result = run_line(f"{evaluate} --agent unhelpful {folder}", clone, job_env(clone))
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert "unhelpful gated by the results of reference" in result.stdout
    summary = (clone / "step-summary.md").read_text(encoding="utf-8")
    assert "Baseline `baselines/reference.json`: 21 regressions, 0 improvements, 0 known failures." in summary
    gate, tables = summary.split("**agent unhelpful**", 1)  # the gate leads: what regressed, by how much
    assert "### ❌ REGRESSED against baseline baselines/reference.json: 6 groups dropped, 21 pass flips" in gate
    assert "- all tasks: similarity 1.000 → " in gate and " · `all.html` in the report artifact" in gate
    assert "- category multiple_tool_call: " in gate and "Regressions (passed in the baseline)" in tables
    regressions = summary.split("### Regressions (passed in the baseline) (21)\n", 1)[1]
    assert regressions.count("\n- [`scenarios/messaging/") == 21
    assert "](https://github.com/me/agents/blob/c0ffee/scenarios/messaging/" in regressions
    assert "trajectory: `trajectories/scenarios/messaging/" in regressions
    assert "[this run](https://github.com/me/agents/actions/runs/7)" in summary
    cases = [{prop.get("name"): prop.get("value") for prop in case.iter("property")}
             for case in ET.parse(clone / "toolsandbox-report" / "junit.xml").iter("testcase")]
    assert [case["toolsandbox_change"] for case in cases] == ["regression"] * 21
    assert all(float(case["toolsandbox_similarity"]) < 1 and case["toolsandbox_passed"] == "false" for case in cases)
