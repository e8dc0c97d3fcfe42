"""`python -m pytest_toolsandbox world`: authors see the starting world without reading the source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolsandbox.cli import main


def test_default_world_lists_every_table_with_local_times(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["world"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("now 2026-03-12T09:30:00-07:00 (America/Los_Angeles, timestamp 1773333000)")
    assert "Olivia Chen" in out and "+14155550127" in out and "neighbor" in out
    assert "settings (1 rows)" in out and "contacts (9 rows)" in out and "reminders (5 rows)" in out
    assert "2026-03-12 09:25:00 PDT" in out  # message times shown in the scenario's zone, not as epochs


def test_a_scenario_patch_is_applied_and_json_keeps_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "categories: [single_tool_call]\nworld: {settings: {cellular: false}, clear: [reminders]}\n"
        "user: {goal: g, first_message: hi}\ntools: [get_wifi_status]\n", encoding="utf-8")
    assert main(["world", str(scenario), "--json"]) == 0
    tables = json.loads(capsys.readouterr().out)
    assert tables["settings"][0]["cellular"] is False and tables["reminders"] == []
    assert isinstance(tables["messaging"][0]["creation_timestamp"], float)


def test_a_broken_scenario_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text("categories: [nope]\n", encoding="utf-8")
    assert main(["world", str(scenario)]) == 2
    assert "bad.yaml" in capsys.readouterr().err
