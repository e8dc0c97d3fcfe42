"""Aggregates of summary.json: errors are counted, never scored; groups per category and variant."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.report.ci.baseline import baseline_from_records, classify
from pytest_toolsandbox.report.results.record import item_outcome
from pytest_toolsandbox.report.results.slug import trajectory_slug
from pytest_toolsandbox.report.results.summary import aggregate
from pytest_toolsandbox.report.text.table import format_table
from pytest_toolsandbox.report.writing.collector import RunCollector
from pytest_toolsandbox.report.writing.files import write_atomic


def record(path: str, score: float | None, outcome: str, categories: list[str], variant: str = "base",
           turns: int | None = 4) -> dict[str, Any]:
    return {"id": f"{path}::test_scenario[{variant}]", "path": path, "variant": variant, "agent": "a",
            "categories": categories, "score": score, "passed": None if score is None else score >= 1.0,
            "outcome": outcome, "turn_count": turns}


RECORDS = [
    record("s/one.yaml", 1.0, "passed", ["state_dependency"]),
    record("s/two.yaml", 0.5, "failed", ["state_dependency", "canonicalization"], turns=8),
    record("s/two.yaml", 1.0, "passed", ["state_dependency", "canonicalization"], variant="all_tools"),
    record("s/three.yaml", None, "error", ["canonicalization"], turns=None),
]


def test_aggregates_per_category_and_variant_exclude_errors_from_scores() -> None:
    stats = aggregate(RECORDS, trials=1)["a"]
    assert stats["all"].pop("usage")["tokens"]["agent"]["requests"] == 0  # these records used no model
    assert stats["all"] == {"items": 4, "scored": 3, "errors": 1, "tasks": 4, "mean_similarity": pytest.approx(2.5 / 3),
                            "pass_rate": pytest.approx(2 / 3), "mean_turns": pytest.approx(16 / 3),
                            "user_sim_checked": 0, "user_sim_suspect": 0}  # no model user simulator
    assert list(stats["categories"]) == ["state_dependency", "canonicalization"]  # the model's order
    assert stats["categories"]["canonicalization"]["mean_similarity"] == pytest.approx(0.75)
    assert stats["categories"]["canonicalization"]["errors"] == 1
    assert list(stats["variants"]) == ["base", "all_tools"]
    assert "pass_k" not in stats["all"]
    lines = format_table(aggregate(RECORDS, trials=1), trials=1)
    assert lines[0] == "agent a"
    assert lines[2].split() == ["all", "4", "0.833", "66.7%", "5.3", "1"]


def test_tokens_per_item_column_appears_when_a_role_reported_usage() -> None:
    used = {"agent": {"input_tokens": 900, "output_tokens": 100, "requests": 3},
            "user": {"input_tokens": 150, "output_tokens": 50, "requests": 2}}
    records = [{**RECORDS[0], "tokens": used}, {**RECORDS[1], "tokens": {"agent": None, "user": None}}]
    lines = format_table(aggregate(records, trials=1), trials=1)
    assert lines[1].split() == ["items", "similarity", "pass", "rate", "turns", "tokens/item", "errors"]
    assert lines[2].split() == ["all", "2", "0.750", "50.0%", "6.0", "600", "0"]  # 1,200 tokens over 2 items
    assert "tokens/item" not in format_table(aggregate(RECORDS, trials=1), trials=1)[1]


def test_baseline_status_and_changes() -> None:
    baseline = baseline_from_records("b.json", RECORDS)
    assert baseline.status("a", "s/one.yaml", "base") is True
    assert baseline.status("a", "s/two.yaml", "base") is False
    assert baseline.status("a", "s/three.yaml", "base") is None  # only an infrastructure error: no evidence
    assert baseline.status("a", "s/new.yaml", "base") is None
    assert [classify(True, "failed"), classify(False, "xpassed"), classify(False, "xfailed"),
            classify(None, "failed"), classify(True, "error")] == [
        "regression", "improvement", "known_failure", "new", None]


def test_an_error_among_trials_does_not_make_a_known_failure() -> None:
    trials = [record("s/one.yaml", 1.0, "passed", ["state_dependency"]),
              record("s/one.yaml", None, "error", ["state_dependency"], turns=None)]
    assert baseline_from_records("b.json", trials).status("a", "s/one.yaml", "base") is True


def test_baseline_gates_each_agent_against_its_own_results() -> None:
    records = [{**record("s/one.yaml", 1.0, "passed", ["state_dependency"]), "agent_spec": "good"},
               {**record("s/one.yaml", 0.0, "failed", ["state_dependency"]), "agent_spec": "bad"}]
    baseline = baseline_from_records("b.json", records)
    assert baseline.for_agents(["good"]).status("good", "s/one.yaml", "base") is True
    assert baseline.for_agents(["good", "bad"]).status("bad", "s/one.yaml", "base") is False
    assert baseline.for_agents(["good", "other"]).status("other", "s/one.yaml", "base") is None
    # a single-agent baseline gates a single-agent run whatever the agent's spec (the agent changed)
    single = baseline_from_records("b.json", records[:1]).for_agents(["good_v2"])
    assert single.status("good_v2", "s/one.yaml", "base") is True


def test_aggregates_are_per_agent_spec_even_when_agents_share_a_name() -> None:
    records = [{**record("s/one.yaml", 1.0, "passed", ["state_dependency"]), "agent": "bot", "agent_spec": spec}
               for spec in ("v1:Bot", "v2:Bot")]
    records[1].update(score=0.0, passed=False, outcome="failed")
    stats = aggregate(records, trials=1)
    assert list(stats) == ["v1:Bot", "v2:Bot"]
    assert [stats[spec]["all"]["pass_rate"] for spec in stats] == [1.0, 0.0]
    assert stats["v1:Bot"]["names"] == ["bot"]
    assert format_table(stats, trials=1)[0] == "agent v1:Bot (bot)"


def test_a_failed_teardown_turns_a_recorded_item_into_an_error(tmp_path: Path) -> None:
    collector = RunCollector(tmp_path, trials=1)
    item = {**record("s/one.yaml", 0.0, "failed", ["state_dependency"]), "scenario": "one", "trial": 1,
            "change": "regression", "error": None}
    collector.add_phase(item["id"], "call", True, 0.5, None, item, None, None)
    collector.add_phase(item["id"], "teardown", True, 0.1, None, None, None, None)
    summary = collector.finish({"options": {"trials": 1}}, interrupted=False, baseline={"path": "b.json"})
    assert summary is not None
    (finished,) = summary["records"]
    assert (finished["outcome"], finished["change"], finished["error"]) == ("error", None, "teardown failed")
    assert summary["baseline"]["regression"] == []  # an infrastructure error is not a regression
    assert summary["aggregates"]["a"]["all"]["errors"] == 1


def test_phase_outcomes() -> None:
    assert item_outcome("setup", "passed", xfail=False) is None
    assert item_outcome("setup", "failed", xfail=False) == "error"
    assert item_outcome("call", "skipped", xfail=True) == "xfailed"
    assert item_outcome("call", "passed", xfail=True) == "xpassed"
    assert item_outcome("teardown", "passed", xfail=False) is None


def test_trajectory_slugs_stay_inside_the_report() -> None:
    assert trajectory_slug("scenarios/messaging/x.yaml", "base-t2") == "scenarios/messaging/x/base-t2"
    assert re.fullmatch(r"_up_/outside/x~[0-9a-f]{8}/a_b", trajectory_slug("../outside/x.yml", "a/b"))
    assert re.fullmatch(r"abs/x~[0-9a-f]{8}/base", trajectory_slug("/abs/x.yaml", "base"))


def test_different_scenario_files_never_share_a_slug() -> None:
    paths = ["s/x.yaml", "s/x.yml", "s/x y.yaml", "s/x_y.yaml", "s/x+y.yaml", "s/café.yaml", "s/caf_.yaml",
             "s/x.yml.yaml", "../s/x.yaml", "_up_/s/x.yaml"]
    slugs = [trajectory_slug(path, "base") for path in paths]
    assert len(set(slugs)) == len(paths), slugs
    assert trajectory_slug("s/x.yml", "base") == trajectory_slug("s/x.yml", "base")  # stable


def test_atomic_write_replaces_whole_files_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "deep" / "summary.json"
    write_atomic(target, "first")
    write_atomic(target, "second")
    assert target.read_text() == "second"

    def interrupted(source: str, destination: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "third")
    monkeypatch.undo()
    assert target.read_text() == "second"  # a reader never sees a half-written file
    assert [path.name for path in target.parent.iterdir()] == ["summary.json"]  # no temporary file left


def test_written_files_follow_the_umask_and_survive_lone_surrogates(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        write_atomic(tmp_path / "index.html", "ok")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "index.html").stat().st_mode) == 0o644  # not mkstemp's 0o600
    write_atomic(tmp_path / "summary.json", json.dumps({"text": "half \ud83d emoji"}, ensure_ascii=False))
    assert json.loads((tmp_path / "summary.json").read_text())["text"] == "half \ufffd emoji"  # as in the records
