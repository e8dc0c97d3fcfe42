"""The baseline file `--update-baseline` writes: only what the gate needs, one item per line in a fixed
order, so a refresh with nothing changed writes the same bytes and a changed verdict is a one-line diff;
old baselines (whole summaries) still gate, and a file of another version says how to refresh it."""

from __future__ import annotations

import difflib
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from pytest_toolsandbox.report.ci.baseline_file import dump_baseline, load_baseline_data
from pytest_toolsandbox.report.results.summary import SummaryError
from tests.test_plugin_support import run, summary, write_suite

REGRESSING_AGENT = """
import os

import pytest

from pytest_toolsandbox.roles.scripted import ReferenceAgent, UnhelpfulAgent


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario, toolsandbox_case):
    if toolsandbox_scenario.name == os.environ.get("BROKEN"):
        return UnhelpfulAgent()
    return ReferenceAgent(toolsandbox_scenario)
"""


ITEM = {"agent": "a", "path": "s/a.yaml", "variant": "base", "trial": 1, "categories": [], "passed": True,
        "similarity": 1.0}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_refreshing_twice_writes_the_same_bytes_and_a_flip_changes_one_line(pytester: pytest.Pytester,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester)
    pytester.makeconftest(REGRESSING_AGENT)
    first = run(pytester, "--update-baseline", "base.json", "-n", "2")
    assert "baseline updated: base.json (4 scored trials)" in first.stdout.str()
    before = (pytester.path / "base.json").read_text()
    run(pytester, "--update-baseline", "base.json")  # another run: other durations, workers, dates
    assert digest(pytester.path / "base.json") == hashlib.sha256(before.encode()).hexdigest()
    data = json.loads(before)
    assert (data["format"], data["version"], data["agents"], data["rules"]) == ("pytest-toolsandbox baseline", 2,
                                                                                ["reference"], "ours")
    assert data["refresh"] == "python -m pytest --update-baseline base.json"
    assert set(data["items"][0]) == {"agent", "path", "variant", "trial", "categories", "passed", "similarity"}
    assert [item["path"] for item in data["items"]] == sorted(item["path"] for item in data["items"])

    monkeypatch.setenv("BROKEN", "wifi_off")
    run(pytester, "--update-baseline", "base.json")
    after = (pytester.path / "base.json").read_text().splitlines()
    diff = list(difflib.unified_diff(before.splitlines(), after, lineterm="", n=0))[3:]  # without ---, +++, @@
    assert len(diff) == 2 and diff[0].startswith("-") and diff[1].startswith("+")
    assert '"path": "scenarios/settings/wifi_off.yaml"' in diff[1] and '"passed": false' in diff[1]


def test_a_baseline_file_gates_like_the_summary_it_came_from(pytester: pytest.Pytester,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(pytester)
    pytester.makeconftest(REGRESSING_AGENT)
    run(pytester, "--update-baseline", "base.json").assert_outcomes(passed=2, failed=2)
    shutil.copy(pytester.path / "toolsandbox-report" / "summary.json", pytester.path / "old.json")  # the old format
    monkeypatch.setenv("BROKEN", "wifi_off")
    for baseline in ("base.json", "old.json"):
        result = run(pytester, "--baseline", baseline)
        result.assert_outcomes(passed=1, failed=1, xfailed=2)
        assert f"baseline {baseline}: 1 regression, 0 improvements, 2 known failures" in result.stdout.str()
        assert summary(pytester)["baseline"]["regression"] == ["scenarios/settings/wifi_off.yaml::test_scenario[base]"]


def test_a_baseline_of_another_version_fails_with_one_line_saying_how_to_refresh(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    (pytester.path / "future.json").write_text(json.dumps({"format": "pytest-toolsandbox baseline", "version": 3,
                                                           "items": []}))
    result = run(pytester, "--baseline", "future.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.str().splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("ERROR: --baseline: ") and errors[0].endswith(
        "future.json: baseline version 3 is not 2; rewrite it with `python -m pytest --update-baseline "
        f"{pytester.path / 'future.json'}`")


def test_items_keep_only_scored_trials_and_round_similarity(tmp_path: Path) -> None:
    records = [{"agent": "a", "agent_spec": "a", "path": "s/x.yaml", "variant": "base", "trial": 1,
                "categories": ["b", "a"], "outcome": "failed", "passed": False, "score": 1 / 3, "duration": 1.5},
               {"agent": "a", "agent_spec": "a", "path": "s/w.yaml", "variant": "base", "trial": 1,
                "categories": [], "outcome": "error", "passed": None, "score": None}]
    text = dump_baseline(records, "b.json", "ours")
    assert text.count('"path"') == 1 and '"similarity": 0.333333' in text and '"categories": ["a", "b"]' in text
    assert "duration" not in text
    path = tmp_path / "b.json"
    path.write_text(text)
    loaded = load_baseline_data(path)["records"]
    assert loaded == [{"id": "s/x.yaml::base::t1", "agent": "a", "agent_spec": "a", "path": "s/x.yaml",
                       "scenario": "s/x.yaml", "variant": "base", "trial": 1, "categories": ["a", "b"],
                       "outcome": "failed", "passed": False, "score": 0.333333}]


def test_a_gate_against_results_of_other_rules_says_so(pytester: pytest.Pytester) -> None:
    """`--rules` changes verdicts: the baseline file records it, and a gate across rules says it compares
    results scored by other rules (a summary.json given as baseline too)."""
    write_suite(pytester)
    run(pytester, "--rules", "reference", "--update-baseline", "base.json")
    assert json.loads((pytester.path / "base.json").read_text())["rules"] == "reference"
    shutil.copy(pytester.path / "toolsandbox-report" / "summary.json", pytester.path / "old.json")
    note = "the baseline was scored under other options (rules: 'reference' then, 'ours' now)"
    for baseline in ("base.json", "old.json"):
        result = run(pytester, "--baseline", baseline)
        assert note in result.stdout.str()
        assert summary(pytester)["baseline"]["differs"] == ["rules: 'reference' then, 'ours' now"]
    same = run(pytester, "--baseline", "base.json", "--rules", "reference")
    assert "other options" not in same.stdout.str() and summary(pytester)["baseline"]["differs"] == []


def test_the_file_is_exactly_a_header_and_one_sorted_item_per_line(tmp_path: Path) -> None:
    records = [{"agent": "Named", "agent_spec": "spec-b", "path": "s/b.yaml", "variant": "base", "trial": 2,
                "categories": ["z", "é"], "outcome": "xfailed", "passed": False, "score": 0.1234567},
               {"agent": "Own", "agent_spec": None, "path": "s/a.yaml", "variant": "base", "trial": None,
                "categories": None, "outcome": "passed", "passed": 1, "score": 1},
               {"agent": "Own", "agent_spec": None, "path": "s/a.yaml", "variant": "all_tools", "trial": 3,
                "categories": [], "outcome": "xpassed", "passed": True, "score": 0.5},
               {"agent": "Own", "path": "s/c.yaml", "variant": "base", "trial": 1, "categories": [],
                "outcome": "passed", "passed": True, "score": None},
               {"agent": "Own", "path": "s/d.yaml", "variant": "base", "trial": 1, "categories": [],
                "outcome": "skipped", "passed": False, "score": 0.0}]

    text = dump_baseline(records, "base é.json", "ours")

    assert text == (
        '{\n'
        ' "format": "pytest-toolsandbox baseline",\n'
        ' "version": 2,\n'
        ' "refresh": "python -m pytest --update-baseline base é.json",\n'
        ' "rules": "ours",\n'
        ' "agents": ["Own", "spec-b"],\n'
        ' "items": [\n'
        '  {"agent": "Own", "path": "s/a.yaml", "variant": "all_tools", "trial": 3, "categories": [], '
        '"passed": true, "similarity": 0.5},\n'
        '  {"agent": "Own", "path": "s/a.yaml", "variant": "base", "trial": 1, "categories": [], '
        '"passed": true, "similarity": 1.0},\n'
        '  {"agent": "spec-b", "path": "s/b.yaml", "variant": "base", "trial": 2, "categories": ["z", "é"], '
        '"passed": false, "similarity": 0.123457}\n'
        ' ]\n'
        '}\n')
    assert dump_baseline([], "b.json", "ours").endswith('"agents": [],\n "items": [\n ]\n}\n')
    path = tmp_path / "b.json"
    path.write_text(text, encoding="utf-8")
    loaded = load_baseline_data(path)["records"]
    assert [(r["id"], r["agent"], r["agent_spec"], r["outcome"], r["score"]) for r in loaded] == [
        ("s/a.yaml::all_tools::t3", "Own", "Own", "passed", 0.5), ("s/a.yaml::base::t1", "Own", "Own", "passed", 1.0),
        ("s/b.yaml::base::t2", "spec-b", "spec-b", "failed", 0.123457)]


NOT_AN_ITEM = "is not a baseline item (needs agent, path, variant, trial, categories, passed, similarity)"


@pytest.mark.parametrize(("data", "problem"), [
    ({"version": 1, "items": []}, "baseline version 1 is not 2"),
    ({"version": 2, "items": {}}, "baseline version 2 is not 2"),
    ({"version": 2}, "baseline version 2 is not 2"),
    ({"version": 2, "items": ["x"]}, f"items[0] {NOT_AN_ITEM}"),
    ({"version": 2, "items": [{"agent": "a"}]}, f"items[0] {NOT_AN_ITEM}"),
    ({"version": 2, "items": [ITEM, {**ITEM, "similarity": "1"}]}, f"items[1] {NOT_AN_ITEM}"),
    ({"version": 2, "items": [{**ITEM, "categories": "a"}]}, f"items[0] {NOT_AN_ITEM}"),
])
def test_a_baseline_file_that_is_not_one_fails_with_one_line_naming_the_fix(tmp_path: Path, data: dict[str, object],
                                                                             problem: str) -> None:
    path = tmp_path / "base.json"
    path.write_text(json.dumps({"format": "pytest-toolsandbox baseline", **data}))

    with pytest.raises(SummaryError) as error:
        load_baseline_data(path)

    assert str(error.value) == f"{path}: {problem}; rewrite it with `python -m pytest --update-baseline {path}`"


def test_a_summary_is_read_as_a_summary(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"records": [{**ITEM, "id": "x", "outcome": "passed", "score": 1.0}]}))

    assert [record["id"] for record in load_baseline_data(path)["records"]] == ["x"]
    with pytest.raises(SummaryError, match="cannot read"):
        load_baseline_data(tmp_path / "missing.json")
