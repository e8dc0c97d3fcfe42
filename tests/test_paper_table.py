"""`paper-table`: our rows in the paper's Table 5 / Table 11 columns, next to its shipped rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.basics.vocabulary import CATEGORIES
from pytest_toolsandbox.cli import main
from pytest_toolsandbox.report.results.summary import build_summary, dump_summary, load_summary
from pytest_toolsandbox.report.text.paper import COLUMNS, our_rows, paper_rows, shippable

AUGMENTATIONS = COLUMNS[1 + len(CATEGORIES):]


@pytest.mark.parametrize("table", ["similarity", "turns"])
def test_the_shipped_paper_rows_hold_the_checks_that_tie_their_columns(table: str) -> None:
    rows = paper_rows(table)
    assert len(rows) == 13 and len(COLUMNS) == 16
    for model, values in rows:
        assert values["avg"] == pytest.approx(sum(values[c] for c in AUGMENTATIONS) / 8, abs=0.1), model
        partition = (152 * values["single_tool_call"] + 656 * values["multiple_tool_call"]
                     + 224 * values["insufficient_information"]) / 1032
        assert values["avg"] == pytest.approx(partition, abs=0.15), model
    if table == "similarity":
        assert dict(rows)["GPT-4o-2024-05-13"]["avg"] == 73.0


def _record(name: str, variant: str, outcome: str, score: float | None, turns: int | None,
            categories: list[str], user_model: str | None = None) -> dict[str, Any]:
    return {"id": f"scenarios/toolsandbox/{name}.yaml::test_scenario[{variant}]", "scenario": name,
            "path": f"scenarios/toolsandbox/{name}.yaml", "categories": categories, "variant": variant, "trial": 1,
            "agent": "m", "agent_spec": "openai:m", "agent_model": "m", "user": "scripted", "user_model": user_model,
            "outcome": outcome, "score": score, "passed": score == 1.0 if score is not None else None,
            "turn_count": turns, "max_messages": 30, "ended_by": "user", "error": "RuntimeError: quoted text",
            "verdict": {"passed": score == 1.0, "fired": [], "crash": None, "milestones": [
                {"name": "answer", "reached": score == 1.0, "index": 3, "missing": "say 'Christmas'",
                 "closest": "quoted text", "fact": "quoted text"}]},
            "milestones": [{"name": "answer", "expected": ["It is 287 days till Christmas Day"]}]}


def _summary(rules: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    run = {"options": {"rules": rules, "prompts": "reference", "trials": 1, "report_dir": "/home/me/report"},
           "agents": ["openai:m"], "users": ["scripted"], "imported_suite": True}
    return build_summary(run, records, 1, len(records), False, None)


STC, MUT = ["single_tool_call", "single_user_turn"], ["multiple_tool_call", "multiple_user_turn"]
RECORDS = [_record("a", "base", "passed", 1.0, 4, STC), _record("b", "base", "failed", 0.5, 8, MUT),
           _record("c", "base", "error", None, None, MUT), _record("a", "all_tools", "failed", 0.0, 6, STC)]


def test_our_row_has_each_cell_s_population_and_says_what_is_not_comparable() -> None:
    (row,) = our_rows(_summary("reference", RECORDS))
    assert row.label == "ours: m"
    avg, mut, base, all_tools = (row.cells[c] for c in ("avg", "multiple_user_turn", "0_distraction_tools",
                                                          "all_tools"))
    assert (avg.similarity, avg.items, avg.variants) == (pytest.approx(37.5), 4, ("base", "all_tools"))
    assert (avg.turns, mut.similarity, mut.turns, mut.items) == (pytest.approx(12.0), 25.0, 19.0, 2)  # error = 0, 30
    assert (base.similarity, base.items, all_tools.similarity) == (pytest.approx(50.0), 3, 0.0)
    assert row.cells["3_distraction_tools"].items == 0 and row.not_comparable["3_distraction_tools"] == ["not run"]
    assert "0_distraction_tools" not in row.not_comparable and "all_tools" not in row.not_comparable
    assert row.not_comparable["avg"][0].startswith("averages only base, all_tools")
    assert any(why.startswith("scripted user") for why in row.not_comparable["multiple_user_turn"])
    assert "1 errored items counted as 0 (reference rules)" in row.notes
    (ours,) = our_rows(_summary("ours", RECORDS))
    assert ours.cells["multiple_user_turn"].similarity == 50.0  # the error is left out under our rules
    assert ours.not_comparable["0_distraction_tools"] == ["other rules than the paper's"]


def test_a_model_user_is_no_floor() -> None:
    records = [_record("b", "base", "passed", 1.0, 8, MUT, user_model="gpt-4o-2024-05-13")]
    (row,) = our_rows(_summary("reference", records))
    assert not any(why.startswith("scripted") for why in row.not_comparable.get("multiple_user_turn", []))
    assert "user simulator: gpt-4o-2024-05-13 (the paper's: GPT-4o-2024-05-13)" in row.notes


def test_the_command_prints_both_tables_and_ships_results_without_text(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    summary = tmp_path / "summary.json"
    summary.write_text(dump_summary(_summary("reference", RECORDS)), encoding="utf-8")
    shipped = tmp_path / "shipped.json"
    assert main(["paper-table", str(summary), "--write-results", str(shipped)]) == 0
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert lines[0] == "Table 5 — average similarity × 100" and "Table 11 — average turn count" in lines
    ours = [line for line in lines if line.startswith("ours: m ")]
    assert ours[0].split()[2:4] == ["37.5*", "50.0*"] and ours[1].split()[2] == "12.0*"
    assert "paper rows: Lu et al." in printed and "C4AI-Command R+" in printed
    text = shipped.read_text(encoding="utf-8")
    assert "quoted text" not in text and "Christmas" not in text and "/home/me" not in text
    first = {record["id"]: record for record in load_summary(shipped)["records"]}[RECORDS[0]["id"]]
    assert first["verdict"]["milestones"] == [{"name": "answer", "reached": True, "index": 3}]
    assert main(["paper-table", str(shipped)]) == 0
    assert capsys.readouterr().out.replace(str(shipped), "S") == printed.replace(str(summary), "S")


def test_an_unreadable_summary_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"records": "no"}), encoding="utf-8")
    assert main(["paper-table", str(tmp_path / "summary.json")]) == 2
    assert "not a pytest-toolsandbox summary" in capsys.readouterr().err


def test_shippable_keeps_scores_and_verdicts_only() -> None:
    record = shippable(_summary("reference", RECORDS))["records"][0]
    assert set(record) >= {"score", "passed", "turn_count", "verdict", "categories", "variant", "outcome"}
    assert "milestones" not in record and "error" not in record


def test_shippable_keeps_where_an_agent_crashed_not_what_it_called() -> None:
    crashed = {**RECORDS[0], "verdict": {"passed": False, "fired": [], "milestones": [],
                                         "crash": "message 3: the agent called 'Homer S', a tool it was not offered"}}
    verdict = shippable(_summary("reference", [crashed]))["records"][0]["verdict"]
    assert verdict["crash"] == "message 3" and "Homer" not in json.dumps(verdict)


def test_a_run_of_the_imported_suite_gets_the_paper_page(pytester: pytest.Pytester) -> None:
    from tests.test_importer import build, fixture_data, write
    from tests.test_plugin_support import run

    out = pytester.path / "scenarios" / "toolsandbox"
    write(build(fixture_data(), out), out)
    run(pytester, "scenarios/toolsandbox", "--agent", "reference", "--prompts", "reference")
    report = pytester.path / "toolsandbox-report"
    page = (report / "paper.html").read_text(encoding="utf-8")
    assert "Table 5: average similarity × 100" in page and "GPT-4o-2024-05-13" in page
    assert "ours: reference" in page and "Lu et al." in page
    assert "href='paper.html'" in (report / "index.html").read_text(encoding="utf-8")
    assert json.loads((report / "summary.json").read_text(encoding="utf-8"))["run"]["options"]["rules"] == "reference"
    (report / "paper.html").unlink()
    run(pytester, "scenarios/toolsandbox", "--agent", "reference", "--scenarios", "scenarios")
    assert (report / "paper.html").is_file()  # ours prompts, same imported suite: the page, with its notes
    pytester.makefile(".yaml", **{"scenarios/own/wifi": (out / "wifi_on.yaml").read_text(encoding="utf-8")})
    (report / "paper.html").unlink()
    run(pytester, "scenarios/own")
    assert not (report / "paper.html").exists()
