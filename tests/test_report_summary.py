"""Aggregates of summary.json: errors are counted, never scored; groups per category and variant."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_toolsandbox.report.baseline import baseline_from_records, classify
from pytest_toolsandbox.report.files import write_atomic
from pytest_toolsandbox.report.record import item_outcome, trajectory_slug
from pytest_toolsandbox.report.summary import aggregate
from pytest_toolsandbox.report.table import format_table


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
    assert stats["all"] == {"items": 4, "scored": 3, "errors": 1, "tasks": 4, "mean_similarity": pytest.approx(2.5 / 3),
                            "pass_rate": pytest.approx(2 / 3), "mean_turns": pytest.approx(16 / 3)}
    assert list(stats["categories"]) == ["state_dependency", "canonicalization"]  # the model's order
    assert stats["categories"]["canonicalization"]["mean_similarity"] == pytest.approx(0.75)
    assert stats["categories"]["canonicalization"]["errors"] == 1
    assert list(stats["variants"]) == ["base", "all_tools"]
    assert "pass_k" not in stats["all"]
    lines = format_table(aggregate(RECORDS, trials=1), trials=1)
    assert lines[0] == "agent a"
    assert lines[2].split() == ["all", "4", "0.833", "66.7%", "5.3", "1"]


def test_baseline_status_and_changes() -> None:
    baseline = baseline_from_records("b.json", RECORDS)
    assert baseline.status("s/one.yaml", "base") is True
    assert baseline.status("s/two.yaml", "base") is False
    assert baseline.status("s/three.yaml", "base") is False  # an error is not a pass
    assert baseline.status("s/new.yaml", "base") is None
    assert [classify(True, "failed"), classify(False, "xpassed"), classify(False, "xfailed"),
            classify(None, "failed"), classify(True, "error")] == [
        "regression", "improvement", "known_failure", "new", None]


def test_phase_outcomes() -> None:
    assert item_outcome("setup", "passed", xfail=False) is None
    assert item_outcome("setup", "failed", xfail=False) == "error"
    assert item_outcome("call", "skipped", xfail=True) == "xfailed"
    assert item_outcome("call", "passed", xfail=True) == "xpassed"
    assert item_outcome("teardown", "passed", xfail=False) is None


def test_trajectory_slugs_stay_inside_the_report() -> None:
    assert trajectory_slug("scenarios/messaging/x.yaml", "base-t2") == "scenarios/messaging/x/base-t2"
    assert trajectory_slug("../outside/x.yml", "a/b") == "_up_/outside/x/a_b"
    assert trajectory_slug("/abs/x.yaml", "base") == "abs/x/base"


def test_atomic_write_replaces_whole_files(tmp_path) -> None:
    target = tmp_path / "deep" / "summary.json"
    write_atomic(target, "first")
    write_atomic(target, "second")
    assert target.read_text() == "second"
    assert [path.name for path in target.parent.iterdir()] == ["summary.json"]
