"""What `--resume DIR` takes over, rule by rule, in-process on report directories written here (the session
tests in test_resume.py resume real runs): which file's fingerprint counts, another run refused, an edited
scenario refused, records of other agents, variants, trials or scenarios dropped and counted, errored items
run again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.report.results.fingerprint import scenario_digest
from pytest_toolsandbox.report.results.summary import build_summary
from pytest_toolsandbox.running.resume import ResumeError, done, earlier_records


def record(path: str, outcome: str = "passed", agent: str = "ref", variant: str = "base", trial: int = 1) -> dict[
        str, Any]:
    named = "" if agent == "ref" else f"{agent}-"  # several agents' ids name the agent
    return {"id": f"{path}::test_scenario[{named}{variant}-t{trial}]", "scenario": Path(path).stem, "path": path,
            "agent": agent, "agent_spec": agent, "variant": variant, "trial": trial, "outcome": outcome,
            "passed": outcome == "passed", "score": 1.0, "categories": ["single_tool_call"], "turn_count": 3,
            "max_messages": 30, "ended_by": "user", "tokens": None, "spend_usd": None, "duration": 1.0}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name in ("a", "b"):
        (tmp_path / "s").mkdir(exist_ok=True)
        (tmp_path / "s" / f"{name}.yaml").write_text(f"name: {name}\n", encoding="utf-8")
    return tmp_path


def fingerprint(root: Path, **changes: Any) -> dict[str, Any]:
    scenarios = {path: scenario_digest(root / path) for path in ("s/a.yaml", "s/b.yaml")}
    return {"agents": ["ref"], "users": [None], "variants": ["base"], "trials": 2, "options": {"rules": "ours"},
            "scenarios": scenarios, **changes}


def write(directory: Path, summary_records: list[dict[str, Any]] | None = None,
          journal_records: list[dict[str, Any]] | None = None, summary_print: dict[str, Any] | None = None,
          journal_print: dict[str, Any] | None = None) -> Path:
    directory.mkdir(exist_ok=True)
    if summary_records is not None:
        run = {"fingerprint": summary_print} if summary_print is not None else {}
        summary = build_summary(run, summary_records, 2, 4, True, None)
        (directory / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    if journal_records is not None:
        header = {"journal": 1, **({"fingerprint": journal_print} if journal_print is not None else {})}
        lines = [json.dumps(line) for line in (header, *journal_records)]
        (directory / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def now(root: Path, **changes: Any) -> dict[str, Any]:
    return {key: value for key, value in fingerprint(root, **changes).items() if key != "scenarios"}


def test_a_directory_without_results_has_nothing_to_resume(root: Path) -> None:
    with pytest.raises(ResumeError) as error:
        earlier_records(root / "empty", now(root), root)
    assert str(error.value) == (f"{root / 'empty'} holds no summary.json nor records.jsonl: nothing to resume; pass "
                                "the report directory of the run to complete (its --report-dir)")


def test_the_summary_and_the_journal_are_read_together_the_journal_last(root: Path) -> None:
    a, b = record("s/a.yaml"), record("s/b.yaml", "error")
    later_b = record("s/b.yaml", "failed")
    directory = write(root / "report", [a, b], [b, later_b], fingerprint(root), fingerprint(root))

    earlier = earlier_records(directory, now(root), root)

    assert earlier.records == {a["id"]: a, b["id"]: later_b} and earlier.dropped == 0
    assert earlier.fingerprint == fingerprint(root)
    assert done(earlier.records) == {a["id"], b["id"]}
    assert done({b["id"]: b}) == set()  # an errored item runs again


def test_the_journal_alone_carries_the_fingerprint_of_a_killed_run(root: Path) -> None:
    a = record("s/a.yaml")
    directory = write(root / "report", journal_records=[a], journal_print=fingerprint(root))
    assert earlier_records(directory, now(root), root).records == {a["id"]: a}
    summary_only = write(root / "summary_only", [a], summary_print=fingerprint(root))
    assert earlier_records(summary_only, now(root), root).records == {a["id"]: a}


def test_a_summary_and_a_journal_of_two_runs_are_refused(root: Path) -> None:
    directory = write(root / "report", [], [], fingerprint(root), fingerprint(root, trials=1))
    with pytest.raises(ResumeError) as error:
        earlier_records(directory, now(root), root)
    assert str(error.value) == (f"{directory}: summary.json and records.jsonl belong to different runs; start a new "
                                "run into another --report-dir")


def test_a_run_without_a_fingerprint_is_refused_naming_the_file(root: Path) -> None:
    with pytest.raises(ResumeError) as error:
        earlier_records(write(root / "report", [record("s/a.yaml")]), now(root), root)
    assert str(error.value).startswith(f"{root / 'report' / 'summary.json'}: no run fingerprint")
    with pytest.raises(ResumeError) as error:
        earlier_records(write(root / "bad", journal_records=[], journal_print={"agents": "ref"}), now(root), root)
    assert str(error.value).startswith(f"{root / 'bad' / 'records.jsonl'}: field fingerprint.agents")


def test_another_run_is_refused_saying_what_differs(root: Path) -> None:
    directory = write(root / "report", [record("s/a.yaml")], summary_print=fingerprint(root))
    with pytest.raises(ResumeError) as error:
        earlier_records(directory, now(root, agents=["unhelpful"], trials=1), root)
    assert str(error.value) == (f"{directory} holds another run (agents: ['ref'] then, ['unhelpful'] now; "
                                "trials: 2 then, 1 now): pass that run's options to complete it, or start a new run "
                                "without --resume")


def test_an_edited_scenario_is_refused_naming_it_and_how_many_more(root: Path) -> None:
    directory = write(root / "report", [record("s/a.yaml")], summary_print=fingerprint(root))
    (root / "s" / "a.yaml").write_text("name: a2\n", encoding="utf-8")
    with pytest.raises(ResumeError) as error:
        earlier_records(directory, now(root), root)
    assert str(error.value) == (f"{directory}: s/a.yaml changed since that run, so its records are not this run's; "
                                "start a new run without --resume")
    (root / "s" / "b.yaml").write_text("name: b2\n", encoding="utf-8")
    with pytest.raises(ResumeError, match=r"s/a\.yaml \(and 1 more\) changed since that run"):
        earlier_records(directory, now(root), root)


def test_records_that_cannot_be_this_run_s_are_dropped_and_counted(root: Path) -> None:
    kept = [record("s/a.yaml"), record("s/b.yaml", trial=2)]
    foreign = [record("s/a.yaml", agent="other"), record("s/a.yaml", variant="all_tools"),
               record("s/a.yaml", trial=3), record("s/c.yaml")]
    directory = write(root / "report", kept + foreign, summary_print=fingerprint(root))

    earlier = earlier_records(directory, now(root), root)

    assert list(earlier.records) == sorted(r["id"] for r in kept) and earlier.dropped == len(foreign)
    (root / "s" / "b.yaml").unlink()  # a scenario deleted since: its records go, the rest stay
    gone = earlier_records(directory, now(root), root)
    assert list(gone.records) == [kept[0]["id"]] and gone.dropped == len(foreign) + 1


def test_a_later_line_of_an_item_replaces_its_earlier_one_even_where_it_is_not_this_run_s(root: Path) -> None:
    a = record("s/a.yaml")
    moved = {**a, "variant": "all_tools"}  # the same id, written last, of a variant this run does not have
    earlier = earlier_records(write(root / "report", [a], [moved], fingerprint(root), fingerprint(root)), now(root),
                              root)
    assert (earlier.records, earlier.dropped) == ({}, 1)


def test_an_unreadable_journal_record_is_one_error_naming_the_journal(root: Path) -> None:
    directory = write(root / "report", journal_records=[{"id": "x", "outcome": 5}], journal_print=fingerprint(root))
    with pytest.raises(ResumeError) as error:
        earlier_records(directory, now(root), root)
    assert str(error.value).startswith(f"{directory / 'records.jsonl'}: ")
