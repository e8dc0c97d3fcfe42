"""`python -m pytest_toolsandbox compare A.json B.json`: deltas and a paired test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.cli import main
from pytest_toolsandbox.report.compare import paired_test


def summary_file(path: Path, scores: dict[str, list[float]], agent: str = "a") -> str:
    records = [{"id": f"{name}-{trial}", "path": f"s/{name}.yaml", "variant": "base", "agent": agent,
                "categories": ["canonicalization"] if name.startswith("j") else ["state_dependency"],
                "score": score, "passed": score >= 1.0, "outcome": "passed" if score >= 1.0 else "failed"}
               for name, values in scores.items() for trial, score in enumerate(values)]
    trials = max(len(values) for values in scores.values())
    data: dict[str, Any] = {"run": {"options": {"trials": trials}}, "records": records}
    path.write_text(json.dumps(data))
    return str(path)


def test_paired_test_degenerate_inputs() -> None:
    assert paired_test([0.5], [1.0]) == (None, "fewer than 2 paired tasks")
    assert paired_test([0.5, 1.0], [0.5, 1.0]) == (1.0, "no task changed")
    p, method = paired_test([0.0] * 10, [0.5] * 10)
    assert method == "wilcoxon" and p == pytest.approx(2 / 2 ** 10)  # exact: all ten pairs improved


def test_compare_prints_deltas_and_significance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = [f"{letter}task" for letter in "abcdefghij"]  # a..i are state_dependency, j canonicalization
    before = summary_file(tmp_path / "a.json", {name: [0.0, 0.5] for name in names})
    after = summary_file(tmp_path / "b.json", {name: [1.0, 1.0] for name in names})
    assert main(["compare", before, after]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = {line.split()[0] if line.startswith("all") else " ".join(line.split()[:2]): line.split()
             for line in lines[1:-1]}
    assert table["all"][1:8] == ["10", "0.250", "1.000", "+0.750", "0.0%", "100.0%", "+100.0%"]
    assert table["all"][8:] == ["0.002", "*"]
    assert table["category state_dependency"][2:3] == ["9"]
    assert table["category canonicalization"][9:] == ["n/a", "(fewer", "than", "2", "paired", "tasks)"]
    assert lines[-1].startswith("p: Wilcoxon signed-rank test")


def test_single_trial_runs_get_no_test_and_bad_input_exits_2(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    before = summary_file(tmp_path / "a.json", {"x": [0.5], "y": [1.0]})
    after = summary_file(tmp_path / "b.json", {"x": [1.0], "y": [1.0]})
    assert main(["compare", before, after]) == 0
    assert "no significance test" in capsys.readouterr().out
    assert main(["compare", before, str(tmp_path / "missing.json")]) == 2
    assert "missing.json: cannot read the summary" in capsys.readouterr().err
    two_agents = tmp_path / "two.json"
    data = json.loads(Path(before).read_text())
    data["records"] += [{**record, "agent": "other"} for record in data["records"]]
    two_agents.write_text(json.dumps(data))
    assert main(["compare", str(two_agents), after]) == 2
    assert "several agents (a, other)" in capsys.readouterr().err
    assert main(["compare", str(two_agents), after, "--agent-a", "other"]) == 0
