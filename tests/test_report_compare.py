"""`python -m pytest_toolsandbox compare A.json B.json`: deltas and the baseline gate's tests, same verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.cli import main


def summary_file(path: Path, scores: dict[str, list[float]], agent: str = "a") -> str:
    records = [{"id": f"{name}-{trial}", "path": f"s/{name}.yaml", "variant": "base", "agent": agent,
                "categories": ["canonicalization"] if name.startswith("j") else ["state_dependency"],
                "score": score, "passed": score >= 1.0, "outcome": "passed" if score >= 1.0 else "failed"}
               for name, values in scores.items() for trial, score in enumerate(values)]
    trials = max(len(values) for values in scores.values())
    data: dict[str, Any] = {"run": {"options": {"trials": trials}}, "records": records}
    path.write_text(json.dumps(data))
    return str(path)


def table(lines: list[str]) -> dict[str, list[str]]:
    """The rows of compare's table by group name."""
    rows = {}
    for line in lines:
        words = line.split()
        if words and words[0] == "all":
            rows["all"] = words
        elif len(words) > 1 and words[0] in ("category", "variant"):
            rows[" ".join(words[:2])] = words
    return rows


def test_compare_prints_deltas_and_the_gate_tests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = [f"{letter}task" for letter in "abcdefghij"]  # a..i are state_dependency, j canonicalization
    before = summary_file(tmp_path / "a.json", {name: [0.0, 0.5] for name in names})
    after = summary_file(tmp_path / "b.json", {name: [1.0, 1.0] for name in names})
    assert main(["compare", before, after]) == 0  # better, not worse
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "no regression"
    rows = table(lines)
    assert rows["all"][1:11] == ["10", "0.250", "1.000", "+0.750", "0.00098", "0.0%", "100.0%", "+100.0%", "0.00098",
                                 "improved:"]  # exact one-sided p of ten pairs all up: 1/1024
    assert rows["category state_dependency"][2] == "9"
    assert " ".join(rows["category canonicalization"][11:]) == "too few pairs (1 < 5)"
    assert lines[-1].startswith("p: one-sided, over the tasks in both runs")


def test_compare_fails_on_a_drop_like_the_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One trial per task is enough across tasks: ten tasks all lower by 0.2."""
    names = [f"{letter}task" for letter in "abcdefghij"]
    before = summary_file(tmp_path / "a.json", {name: [0.6] for name in names})
    after = summary_file(tmp_path / "b.json", {name: [0.4] for name in names})
    assert main(["compare", before, after, "--html", str(tmp_path / "page")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "REGRESSED: all, category state_dependency"  # variants are shown, not gated
    assert " ".join(table(lines)["all"][10:]) == "regressed: similarity"
    page = (tmp_path / "page" / "comparison.html").read_text()
    assert "Regressed: all, category state_dependency<" in page
    assert page.count("data-verdict='regressed'") == 3
    assert main(["compare", before, after, "--min-effect", "0.25"]) == 0  # significant, but smaller than asked
    assert "significant, below min effect: similarity" in capsys.readouterr().out


def test_each_groups_tests_run_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table and the exit status judge the same rows: the tests (a Wilcoxon test per group) run once."""
    from pytest_toolsandbox.report.ci import compare

    judged: list[str] = []
    real = compare.judge_group

    def counted(agent: str, group: str, *args: Any) -> Any:
        judged.append(group)
        return real(agent, group, *args)

    monkeypatch.setattr(compare, "judge_group", counted)
    names = [f"{letter}task" for letter in "abcdefghij"]
    before = summary_file(tmp_path / "a.json", {name: [0.6] for name in names})
    after = summary_file(tmp_path / "b.json", {name: [0.4] for name in names})
    assert main(["compare", before, after]) == 1
    assert sorted(judged) == ["all", "category canonicalization", "category state_dependency", "variant base"]


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = summary_file(tmp_path / "a.json", {"x": [0.5], "y": [1.0]})
    after = summary_file(tmp_path / "b.json", {"x": [1.0], "y": [1.0]})
    assert main(["compare", before, str(tmp_path / "missing.json")]) == 2
    assert "missing.json: cannot read the summary" in capsys.readouterr().err
    assert main(["compare", before, after, "--alpha", "0"]) == 2
    assert "--alpha: 0 must be strictly between 0 and 1 (default: 0.05)" in capsys.readouterr().err
    assert main(["compare", before, after, "--min-effect", "1.5"]) == 2
    assert capsys.readouterr().err == "--min-effect: 1.5 must be between 0 and 1 (default: 0.05)\n"
    assert main(["compare", before, after, "--min-effect", "0"]) == 0  # no smallest drop: a bound, not refused
    two_agents = tmp_path / "two.json"
    data = json.loads(Path(before).read_text())
    data["records"] += [{**record, "agent": "other"} for record in data["records"]]
    two_agents.write_text(json.dumps(data))
    assert main(["compare", str(two_agents), after]) == 2
    assert "several agents (a, other)" in capsys.readouterr().err
    assert main(["compare", str(two_agents), after, "--agent-a", "other"]) == 0
