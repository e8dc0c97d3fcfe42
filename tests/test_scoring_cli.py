"""`python -m pytest_toolsandbox score`: offline re-scoring of a trajectory file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolsandbox.cli import main
from tests.test_scoring_support import DATA, ROOT, SEED_SCENARIO, play, seed_scenario, seed_turns

STORED = DATA / "seed_readme.trajectory.json"


def test_score_prints_mapping_turns_and_diagnosis(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the stored trajectory names its scenario relative to the repository
    assert main(["score", str(STORED)]) == 0
    out = capsys.readouterr().out
    assert "score 0.970646770957879" in out
    assert "confirmed     → message [ 11]  similarity 0.882587" in out
    assert "turn count 9" in out
    assert "diagnosis: none" in out
    assert "ground truth: precision 0.75" in out


def test_score_json_with_an_explicit_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trajectory = play(seed_scenario(), seed_turns()).model_copy(update={"scenario_path": ""})
    path = tmp_path / "t.json"
    path.write_text(trajectory.to_json())
    assert main(["score", str(path), "--scenario", str(SEED_SCENARIO), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["score"] == pytest.approx(0.970646770957879, abs=1e-12)
    assert [m["index"] for m in data["milestones"]] == [8, 4, 10, 11]
    assert data["turn_count"] == 9 and data["diagnosis"] == []


def test_missing_scenario_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trajectory = play(seed_scenario(), seed_turns()).model_copy(update={"scenario_path": "nowhere.yaml"})
    path = tmp_path / "t.json"
    path.write_text(trajectory.to_json())
    assert main(["score", str(path)]) == 2
    assert "pass --scenario" in capsys.readouterr().err


def test_unreadable_trajectory_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    assert main(["score", str(path)]) == 2
    assert "cannot read the trajectory" in capsys.readouterr().err
