"""Hostile report directories and a full disk (issue 32): what a run writes survives a disk that fills
up; `merge` and `--resume` take other runs' files as untrusted input; reports stay bounded by
`--max-message-chars`; Markdown and scenario files cannot be turned against the reader."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.cli import main
from tests.test_plugin_support import QUIET, WIFI_OFF, run, summary, write_suite

# ------------------------------------------------------------------------------------------------
# 1. A full disk (a real tmpfs): every line that fits is kept, every file that does not is named, the
# results print, and summary.json gets the room of what can be written again from it.

BLOCK = 4096
"""tmpfs allocates whole pages: a file of 4,097 bytes takes two."""


def _blocks(path: Path) -> int:
    return -(-path.stat().st_size // BLOCK)


def _run_on_a_small_disk(pytester: pytest.Pytester, blocks: int) -> tuple[int, str, Path]:
    """Run the suite in a subprocess whose report directory is a real tmpfs of `blocks` pages, mounted in a
    private user and mount namespace (no root needed, nothing left mounted); its exit status, its output
    and a copy of what it wrote."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare (util-linux) to mount a small tmpfs")
    (pytester.path / "disk").mkdir(exist_ok=True)
    script = ('mount -t tmpfs -o size="$0" tmpfs disk || exit 99\n'
              '"$@" > out.txt 2>&1; echo $? > status.txt; rm -rf kept; cp -a disk/r kept')
    command = [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", script, f"{blocks * BLOCK // 1024}k",
               sys.executable, "-m", "pytest", *QUIET, "--report-dir", "disk/r"]
    done = subprocess.run(command, cwd=pytester.path, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        pytest.skip(f"no private tmpfs on this machine (user namespaces refused?): {done.stderr.strip()}")
    return (int((pytester.path / "status.txt").read_text()), (pytester.path / "out.txt").read_text(),
            pytester.path / "kept")


@pytest.fixture
def measured(pytester: pytest.Pytester) -> dict[str, int]:
    """The suite run once on a roomy disk: the pages each kind of file takes."""
    write_suite(pytester)
    run(pytester, "--report-dir", "roomy")
    roomy = pytester.path / "roomy"
    trajectories = sorted((roomy / "trajectories").rglob("*.json"))
    assert len(trajectories) == 4
    return {"trajectory": max(map(_blocks, trajectories)),
            "trajectories": sum(map(_blocks, trajectories)),
            "pages": sum(map(_blocks, (roomy / "trajectories").rglob("*.html"))),
            "journal": _blocks(roomy / "records.jsonl"), "summary": _blocks(roomy / "summary.json")}


def _ids(records: list[dict[str, Any]]) -> list[str]:
    return sorted(record["id"] for record in records)


def test_on_a_full_disk_the_summary_takes_the_room_of_the_pages_written_during_the_run(
        pytester: pytest.Pytester, measured: dict[str, int]) -> None:
    """Room for every trajectory, its page and the journal, one page to spare: the summary only fits
    once the pages (written again from it) give their room."""
    assert measured["summary"] > 2
    status, output, kept = _run_on_a_small_disk(
        pytester, measured["trajectories"] + measured["pages"] + measured["journal"] + 1)
    assert status == pytest.ExitCode.TESTS_FAILED
    assert "INTERNALERROR" not in output and "Traceback" not in output
    assert re.search(r"all +4 +0\.625 +50\.0%", output)  # the table, from memory
    assert "summary.json could not be written" not in output and "report: " in output
    data = json.loads((kept / "summary.json").read_text(encoding="utf-8"))
    assert _ids(data["records"]) == _ids(summary(pytester, "roomy")["records"])
    header, *records = map(json.loads, (kept / "records.jsonl").read_text(encoding="utf-8").splitlines())
    assert header["journal"] == 1 and _ids(records) == _ids(data["records"])
    assert len(list((kept / "trajectories").rglob("*.json"))) == 4  # nothing else holds them: kept
    assert "file(s) not written (No space left on device)" in output  # pages and listings without room


def test_on_a_full_disk_the_journal_lends_its_room_to_the_summary(pytester: pytest.Pytester,
                                                                   measured: dict[str, int]) -> None:
    """Two trajectories fit, then the disk is full: the summary (all four records) only fits in the
    journal's room, and holds what the journal held."""
    assert measured["trajectory"] > measured["summary"] - measured["journal"] > 0
    status, output, kept = _run_on_a_small_disk(pytester, 2 * measured["trajectory"] + measured["summary"])
    assert status == pytest.ExitCode.TESTS_FAILED and "Traceback" not in output
    data = json.loads((kept / "summary.json").read_text(encoding="utf-8"))
    assert _ids(data["records"]) == _ids(summary(pytester, "roomy")["records"])
    assert len(list((kept / "trajectories").rglob("*.json"))) == 2
    assert re.search(r"records\.jsonl: No space left on device \([1-4] record\(s\) missing from it\)", output)


JOURNAL_FULL_ONCE = """
import errno
import os

import pytest_toolsandbox.report.results.journal as journal

CALLS = {"count": 0}


class _Os:
    def __getattr__(self, name):
        return getattr(os, name)

    def write(self, descriptor, data):  # the second record's line meets a full disk, then space is freed
        CALLS["count"] += 1
        if CALLS["count"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return os.write(descriptor, data)


journal.os = _Os()


def pytest_unconfigure(config):  # pytester runs in this process: later runs must write again
    journal.os = os
"""


def test_a_journal_that_lost_a_line_is_completed_once_the_summary_is_written(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    pytester.makeconftest(JOURNAL_FULL_ONCE)
    result = run(pytester)
    assert "records.jsonl" not in result.stdout.str()  # not reported missing: it was completed
    report = pytester.path / "toolsandbox-report"
    header, *records = map(json.loads, (report / "records.jsonl").read_text(encoding="utf-8").splitlines())
    assert header["journal"] == 1
    assert sorted(record["id"] for record in records) == sorted(record["id"] for record in summary(pytester)["records"])
    assert len(records) == 4


def test_a_journal_line_the_disk_cannot_take_is_cut_off_and_later_lines_still_fit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_toolsandbox.report.results import journal as module

    real_write = os.write
    calls = {"count": 0}

    def full_once(descriptor: int, data: Any) -> int:
        calls["count"] += 1
        if calls["count"] == 2:  # the second line: a part is written, then the disk is full
            real_write(descriptor, bytes(data)[:10])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(descriptor, data)

    monkeypatch.setattr(module.os, "write", full_once)
    journal = module.Journal(tmp_path, append=False)
    journal.write({"id": "a"})
    with pytest.raises(OSError):
        journal.write({"id": "b", "text": "x" * 100})
    journal.write({"id": "c"})
    journal.close()
    journal.close()  # nothing is buffered: closing never fails
    assert [record["id"] for record in module.read_journal(tmp_path).records] == ["a", "c"]
    assert journal.lost == 1


# ------------------------------------------------------------------------------------------------
# 2-4. merge and --resume read untrusted directories.


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_merge_is_bounded_by_the_records_not_by_the_trials_a_summary_claims(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "shard")

    def claim(data: dict[str, Any]) -> None:
        data["run"]["options"]["trials"] = data["run"]["fingerprint"]["trials"] = 10**9

    _edit(pytester.path / "shard" / "summary.json", claim)
    assert main(["merge", "shard", "--out", "merged"]) == 0
    merged = summary(pytester, "merged")
    assert merged["run"]["options"]["trials"] == merged["run"]["fingerprint"]["trials"] == 1
    assert "pass_k" not in merged["aggregates"]["reference"]["all"]


def test_merge_reads_no_file_outside_its_inputs_and_names_a_malformed_trajectory(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "shard")
    (pytester.path / "secret.json").write_text('{"password": "hunter2"}', encoding="utf-8")
    shard = pytester.path / "shard"
    trajectories = {record["id"]: record["trajectory"] for record in summary(pytester, "shard")["records"]}
    half, wifi, refuse = (trajectories[f"scenarios/settings/{name}.yaml::test_scenario[base]"]
                          for name in ("half", "wifi_off", "refuse"))

    def point_out(data: dict[str, Any]) -> None:
        for record in data["records"]:
            if record["trajectory"] == half:
                record["trajectory"] = "trajectories/../../secret.json"

    _edit(shard / "summary.json", point_out)
    (shard / wifi).unlink()
    (shard / wifi).symlink_to(pytester.path / "secret.json")
    (shard / refuse).write_text('{"scenario": 1}', encoding="utf-8")
    assert main(["merge", "shard", "--out", "merged"]) == 2  # an input that cannot be read (docs/scale-out.md)
    errors = capsys.readouterr().err.splitlines()
    assert any("secret.json: leads out of" in line for line in errors)
    assert any(wifi in line and "leads out of" in line for line in errors)
    assert any(refuse in line and "not a trajectory: field" in line for line in errors)
    assert len(errors) == 3
    copied = [path.read_text(encoding="utf-8") for path in (pytester.path / "merged").rglob("*.json")]
    assert not any("hunter2" in text for text in copied)
    assert len(summary(pytester, "merged")["records"]) == 4


@pytest.mark.parametrize(("field", "value", "message"), [
    ("unfinished", "not a list", "field unfinished: Input should be a valid list"),
    ("crashed", [{"worker": "gw0"}], "field crashed.0.id: Field required"),
    ("counts", {"expected": "many"}, "field counts.expected: Input should be a valid integer"),
])
def test_a_malformed_summary_is_one_line_and_exit_2(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str],
                                                   field: str, value: Any, message: str) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "shard", "-k", "wifi_off")
    _edit(pytester.path / "shard" / "summary.json", lambda data: data.update({field: value}))
    assert main(["merge", "shard", "--out", "merged"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error and "shard/summary.json" in error


def test_merge_refuses_inputs_of_other_options_and_drops_records_of_unknown_scenarios(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "first", "-k", "wifi_off")
    run(pytester, "--report-dir", "other", "-k", "half", "--threshold", "0.5")
    assert main(["merge", "first", "other", "--out", "merged"]) == 2
    assert "options.threshold: None and 0.5" in capsys.readouterr().err

    def foreign(data: dict[str, Any]) -> None:
        data["records"].append({**data["records"][0], "id": "elsewhere.yaml::test_scenario[base]",
                                "path": "elsewhere.yaml"})

    _edit(pytester.path / "first" / "summary.json", foreign)
    assert main(["merge", "first", "--out", "merged"]) == 0
    assert "first: 1 record(s) dropped" in capsys.readouterr().err
    assert [record["path"] for record in summary(pytester, "merged")["records"]] == ["scenarios/settings/wifi_off.yaml"]


def test_resume_refuses_another_runs_directory_with_one_line(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "report").assert_outcomes(passed=2, failed=2)
    result = run(pytester, "--agent", "unhelpful", "--resume", "report")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "agents: ['reference'] then, ['unhelpful'] now" in result.stderr.str()
    other_rules = run(pytester, "--rules", "reference", "--resume", "report")  # rules change verdicts
    assert "options.rules: 'ours' then, 'reference' now" in other_rules.stderr.str()

    def older(data: dict[str, Any]) -> None:  # a fingerprint of before --rules was in it means the default
        del data["run"]["fingerprint"]["options"]["rules"]

    _edit(pytester.path / "report" / "summary.json", older)
    (pytester.path / "report" / "records.jsonl").unlink()
    taken = run(pytester, "--resume", "report")
    assert taken.ret != pytest.ExitCode.USAGE_ERROR and "then," not in taken.stderr.str()
    (pytester.path / "scenarios/settings/half.yaml").write_text(
        (pytester.path / "scenarios/settings/half.yaml").read_text() + "description: edited\n")
    result = run(pytester, "--resume", "report")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "scenarios/settings/half.yaml changed since that run" in result.stderr.str()


def run_with_a_record_of_a_gone_scenario(pytester: pytest.Pytester) -> dict[str, Any]:
    """A run into report/ whose journal then gains a record of a scenario that does not exist: the record."""
    write_suite(pytester)
    run(pytester, "--report-dir", "report", "-x").assert_outcomes(passed=1, failed=1)
    journal = pytester.path / "report" / "records.jsonl"
    record = json.loads(journal.read_text().splitlines()[1])
    forged = {**record, "id": "scenarios/gone.yaml::test_scenario[base]", "path": "scenarios/gone.yaml"}
    journal.write_text(journal.read_text() + json.dumps(forged) + "\n")
    return forged


def test_resume_drops_and_counts_journal_lines_of_unknown_scenarios(pytester: pytest.Pytester) -> None:
    run_with_a_record_of_a_gone_scenario(pytester)
    result = run(pytester, "--resume", "report")
    assert "--resume dropped 1 record(s) of report that cannot belong to its run" in result.stdout.str()
    data = summary(pytester, "report")
    assert not data["partial"] and len(data["records"]) == 4
    assert "scenarios/gone.yaml" not in {record["path"] for record in data["records"]}


KILLED = {
    "SIGKILL while collecting": """
import os
import signal


def pytest_collection_modifyitems(items):
    os.kill(os.getpid(), signal.SIGKILL)
""",
    "SIGKILL before the first item ends": """
import os
import signal


def pytest_runtest_call(item):
    os.kill(os.getpid(), signal.SIGKILL)
""",
}


@pytest.mark.parametrize("case", sorted(KILLED))
def test_a_killed_run_never_leaves_the_last_report_as_its_own(pytester: pytest.Pytester,
                                                             capsys: pytest.CaptureFixture[str], case: str) -> None:
    write_suite(pytester)
    run(pytester).assert_outcomes(passed=2, failed=2)
    report = pytester.path / "toolsandbox-report"
    pytester.makeconftest(KILLED[case])
    assert pytester.runpytest_subprocess(*QUIET).ret == -signal.SIGKILL
    assert not (report / "summary.json").exists() and not (report / "index.html").exists()
    if "collecting" in case:  # it cannot tell whether it would have replaced the report: set aside, not lost
        assert (report / ".summary.json.previous").is_file()
    code = main(["merge", "toolsandbox-report", "--out", "merged"])
    assert code == 2 or summary(pytester, "merged")["partial"] is True
    if (report / "records.jsonl").exists():  # this run's journal: its header, none of the last run's records
        assert not [line for line in (report / "records.jsonl").read_text().splitlines() if '"id"' in line]
    capsys.readouterr()


def test_a_session_without_scenarios_puts_the_last_report_back(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester).assert_outcomes(passed=2, failed=2)
    before = (pytester.path / "toolsandbox-report" / "summary.json").read_text()
    pytester.makepyfile(test_plain="def test_nothing():\n    pass\n")
    run(pytester, "test_plain.py").assert_outcomes(passed=1)
    assert (pytester.path / "toolsandbox-report" / "summary.json").read_text() == before
    assert run(pytester, "--help").ret == pytest.ExitCode.OK  # configured, never a session
    assert (pytester.path / "toolsandbox-report" / "summary.json").read_text() == before
    assert not (pytester.path / "toolsandbox-report" / ".summary.json.previous").exists()


# ------------------------------------------------------------------------------------------------
# 5. Reports are bounded by --max-message-chars; scenario files by their size.

LONG_REPLY = """
import pytest
from pytest_toolsandbox.roles.base import Turn


class Talker:
    name = "talker"

    def respond(self, messages, tools):
        return Turn(text="Yes, your wifi is on. " + "blah " * 20000 + "\\ud800")


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    return Talker()
"""


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def test_every_text_of_a_record_is_capped_and_a_lone_surrogate_is_no_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/says.yaml": """
categories: [single_user_turn]
user: {goal: Know whether wifi is on., first_message: "Is my wifi on?"}
tools: [get_wifi_status]
milestones:
  answered: {agent_says: Your wifi is switched off., facts: [off]}
reference:
  - agent: Your wifi is switched off.
"""})
    pytester.makeconftest(LONG_REPLY)
    result = run(pytester, "--max-message-chars", "200")
    result.assert_outcomes(failed=1)  # a failure, not an item error
    (record,) = summary(pytester)["records"]
    closest = record["verdict"]["milestones"][0]["closest"]
    assert closest.startswith("Yes, your wifi is on.") and "--max-message-chars" in closest
    assert max(map(len, _strings(record))) < 300
    journal = (pytester.path / "toolsandbox-report" / "records.jsonl").read_text()
    assert max(map(len, journal.splitlines())) < 20000


def test_a_large_scenario_file_is_refused_by_its_size(tmp_path: Path) -> None:
    from pytest_toolsandbox.scenario.errors import ScenarioError
    from pytest_toolsandbox.scenario.loader import MAX_SCENARIO_BYTES, load_scenario

    path = tmp_path / "big.yaml"
    path.write_text("description: |\n" + "  filler text\n" * (MAX_SCENARIO_BYTES // 10), encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    assert str(raised.value) == (f"{path}: the file is 1.4 MiB; a scenario file may hold at most 1 MiB (scenarios "
                                 "are small data: split it, or move bulk data out of it)")


# ------------------------------------------------------------------------------------------------
# 9. Markdown cannot be broken out of.


def test_a_file_name_with_backticks_stays_inside_its_code_span(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    from pytest_toolsandbox.report.text.markdown import markdown_summary

    path = "scenarios/a`<img src=x onerror=alert(1)>``.yaml"
    record = {"id": f"{path}::test_scenario[base]", "path": path, "variant": "base", "outcome": "failed",
              "score": 0.5, "diagnosis": [], "agent_spec": "reference", "page": f"trajectories/{path}.html",
              "change": None}
    data = {"aggregates": {}, "records": [record], "baseline": None, "partial": False,
            "counts": {"expected": 1, "finished": 1, "passed": 0, "failed": 1, "error": 0}, "run": {"agents": []}}
    for directory in (None, tmp_path):
        text = markdown_summary(data, tmp_path, directory, {"GITHUB_SERVER_URL": "https://github.com",
                                                            "GITHUB_REPOSITORY": "o/r", "GITHUB_SHA": "abc"})
        html = MarkdownIt("commonmark").render(text)
        assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_a_scenario_outside_the_rootdir_keeps_its_node_id_and_report(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"outside/wifi.yaml": WIFI_OFF})
    (pytester.path / "project").mkdir()
    (pytester.path / "project" / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    scenario = (pytester.path / "outside" / "wifi.yaml").as_posix()
    result = run(pytester, "-c", "project/pytest.ini", "-v", scenario, "--report-dir", "report")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*outside/wifi.yaml::test_scenario[[]base[]] PASSED*"])
    (record,) = summary(pytester, "report")["records"]
    assert record["id"] == f"{scenario}::test_scenario[base]" and record["path"] == scenario
    assert (pytester.path / "report" / record["trajectory"]).is_file()


def test_a_foreign_record_in_both_the_summary_and_the_journal_is_dropped_once(pytester: pytest.Pytester) -> None:
    forged = run_with_a_record_of_a_gone_scenario(pytester)
    summary_file = pytester.path / "report" / "summary.json"
    data = json.loads(summary_file.read_text())
    data["records"].append(forged)
    summary_file.write_text(json.dumps(data))
    result = run(pytester, "--resume", "report")
    assert "--resume dropped 1 record(s) of report that cannot belong to its run" in result.stdout.str()
