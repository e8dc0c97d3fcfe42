"""`python -m pytest_toolsandbox merge`: shards, reruns and single-agent runs merged into one report
equal to the run that would have produced them all at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.cli import main
from tests.test_plugin_support import run, summary, write_suite
from tests.test_plugin_xdist import VOLATILE_RECORD_KEYS, trajectories

BOTH_AGENTS = ("--agent", "reference", "--agent", "unhelpful")


def stable_records(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [{key: value for key, value in record.items() if key not in VOLATILE_RECORD_KEYS}
            for record in data["records"]]


def assert_same_results(merged: dict[str, Any], single: dict[str, Any]) -> None:
    assert stable_records(merged) == stable_records(single)
    assert merged["aggregates"] == single["aggregates"]
    assert merged["usage"] == single["usage"]
    assert merged["counts"] == single["counts"]
    assert merged["partial"] is single["partial"] is False


def page_links(root: Path) -> dict[str, list[str]]:
    """Every trajectory page's links to other trajectory pages (previous / next)."""
    import re

    return {str(path.relative_to(root)): sorted(re.findall(r"href='([^']*\.html)'", path.read_text()))
            for path in sorted((root / "trajectories").rglob("*.html"))}


def test_merged_shards_equal_the_unsharded_run(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    write_suite(pytester)
    arguments = (*BOTH_AGENTS, "--trials", "2")
    run(pytester, *arguments, "--report-dir", "single").assert_outcomes(passed=4, failed=12)
    run(pytester, *arguments, "--report-dir", "shard1", "scenarios/settings/half.yaml",
        "scenarios/messaging").assert_outcomes(passed=2, failed=6)
    run(pytester, *arguments, "--report-dir", "shard2", "-k", "wifi_off or refuse").assert_outcomes(passed=2, failed=6)
    assert main(["merge", "shard2", "shard1", "--out", "merged"]) == 0
    assert "merged 2 report(s): 16 records" in capsys.readouterr().out
    merged, single = summary(pytester, "merged"), summary(pytester, "single")
    assert_same_results(merged, single)
    assert merged["aggregates"]["reference"]["all"]["pass_k"] == single["aggregates"]["reference"]["all"]["pass_k"]
    assert trajectories(pytester.path / "merged" / "trajectories") == trajectories(pytester.path / "single" /
                                                                                   "trajectories")
    assert page_links(pytester.path / "merged") == page_links(pytester.path / "single")
    assert [source["records"] for source in merged["run"]["merged_from"]] == [8, 8]
    assert (pytester.path / "merged" / "index.html").is_file()


def test_single_agent_runs_merge_into_the_run_of_both_agents(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, *BOTH_AGENTS, "--report-dir", "both")
    run(pytester, "--agent", "reference", "--report-dir", "ref")
    run(pytester, "--agent", "unhelpful", "--report-dir", "unhelpful")
    assert main(["merge", "ref", "unhelpful", "--out", "merged"]) == 0
    merged, both = summary(pytester, "merged"), summary(pytester, "both")
    assert_same_results(merged, both)
    assert trajectories(pytester.path / "merged" / "trajectories") == trajectories(pytester.path / "both" /
                                                                                   "trajectories")


def test_a_rerun_with_another_result_is_a_conflict_unless_the_latest_is_preferred(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "first").assert_outcomes(passed=2, failed=2)
    run(pytester, "--report-dir", "rerun", "-k", "half").assert_outcomes(failed=1)
    rerun = pytester.path / "rerun" / "summary.json"  # a sampled model may pass an item it failed before
    data = json.loads(rerun.read_text(encoding="utf-8"))
    data["records"][0].update(outcome="passed", passed=True)
    rerun.write_text(json.dumps(data), encoding="utf-8")
    run(pytester, "--report-dir", "again", "-k", "wifi_off").assert_outcomes(passed=1)
    assert main(["merge", "first", "rerun", "again", "--out", "merged"]) == 1
    error = capsys.readouterr().err
    assert "1 item(s) ran in several directories" in error
    assert "scenarios/settings/half.yaml::test_scenario[base]" in error
    assert "wifi_off" not in error  # the same result twice is no conflict
    assert not (pytester.path / "merged").exists()

    first = pytester.path / "first" / "summary.json"  # runs a second apart may share a timestamp: set it apart
    data = json.loads(first.read_text(encoding="utf-8"))
    data["run"]["finished"] = "2000-01-01T00:00:00+00:00"
    first.write_text(json.dumps(data), encoding="utf-8")
    assert main(["merge", "rerun", "first", "--out", "merged", "--prefer", "latest"]) == 0
    records = {record["id"]: record for record in summary(pytester, "merged")["records"]}
    assert records["scenarios/settings/half.yaml::test_scenario[base]"]["outcome"] == "passed"  # finished last
    assert summary(pytester, "merged")["aggregates"]["reference"]["all"]["pass_rate"] == 0.75


def test_a_directory_without_a_summary_is_named(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    (pytester.path / "empty").mkdir()
    assert main(["merge", "empty", "--out", "merged"]) == 2
    assert "empty: no summary.json nor records.jsonl" in capsys.readouterr().err


def test_a_partial_shard_keeps_the_merge_partial(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "stopped", "-x").assert_outcomes(passed=1, failed=1)
    assert main(["merge", "stopped", "--out", "merged"]) == 0
    data = summary(pytester, "merged")
    assert data["partial"] is True
    assert data["counts"]["expected"] == 4 and data["counts"]["finished"] == 2
    assert len(data["unfinished"]) == 2
    assert json.loads((pytester.path / "stopped" / "summary.json").read_text())["unfinished"] == data["unfinished"]


def test_ts_shards_partition_the_run_by_scenario_and_merge_into_it(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    arguments = ("--augment", "base,tool_description_scrambled", "--trials", "2")
    run(pytester, *arguments, "--report-dir", "single")
    for index in (1, 2, 3):
        run(pytester, *arguments, "--ts-shard", f"{index}/3", "--report-dir", f"shard{index}")
    shards = [summary(pytester, f"shard{index}") for index in (1, 2, 3)]
    paths = [{record["path"] for record in shard["records"]} for shard in shards]
    assert sum(map(len, paths)) == 4
    assert set().union(*paths) == {record["path"] for record in summary(pytester, "single")["records"]}
    for shard, scenarios in zip(shards, paths, strict=True):  # whole scenarios: every variant and trial of each
        assert shard["counts"]["expected"] == shard["counts"]["finished"] == 4 * len(scenarios)
    assert main(["merge", "shard1", "shard2", "shard3", "--out", "merged"]) == 0
    assert_same_results(summary(pytester, "merged"), summary(pytester, "single"))


def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    result = run(pytester, "--ts-shard", "4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--ts-shard / toolsandbox_shard: '4/3': the shard number must be between 1 and 3" in result.stderr.str()


def test_shards_are_even_and_do_not_depend_on_collection_order() -> None:
    from pytest_toolsandbox.running.shard import shards

    paths = [f"scenarios/domain_{k % 7}/scenario_{k}.yaml" for k in range(158)]
    assigned = shards(paths, 4)
    sizes = sorted(list(assigned.values()).count(shard) for shard in (1, 2, 3, 4))
    assert sizes == [39, 39, 40, 40]
    assert shards(reversed(paths), 4) == assigned
