"""`merge` reading its inputs and writing the merged report, in-process on report directories a run's own
collector wrote (tests/merge_inputs.py): the merged summary's fields, the files written, the errors users
read (the file, the field, the fix), partial and complete merges. test_report_merge.py merges real pytest
runs; this file reaches the same code where mutation testing sees it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.report.pages.trajectory_html import PageContext
from pytest_toolsandbox.report.results import merge
from pytest_toolsandbox.report.results.merge import (
    MergeError,
    MergeResult,
    Source,
    check_compatible,
    inside,
    read_source,
    read_trajectory,
    write_merged,
)
from tests.merge_inputs import (
    HALF,
    REFUSE,
    SUITE,
    WIFI_OFF,
    WIFI_STATUS,
    Item,
    edit_summary,
    nodeid,
    read_json,
    write_run,
    write_scenarios,
)

BOTH = ("reference", "unhelpful")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The directory the runs ran in, with the suite's scenario files."""
    write_scenarios(tmp_path)
    return tmp_path


def merged(root: Path, *names: str, prefer_latest: bool = False) -> MergeResult:
    sources = [read_source(root / name, position) for position, name in enumerate(names)]
    check_compatible(sources)
    return write_merged(sources, root / "merged", prefer_latest, root)


def stable(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key not in ("duration", "worker")}


def files(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*") if path.is_file())


def error_of(call: Any, *args: Any) -> str:
    with pytest.raises(MergeError) as error:
        call(*args)
    return str(error.value)


# ------------------------------------------------------------------------------------------------
# Shards of one run make the run


def test_two_shards_merge_into_the_summary_and_files_the_whole_run_writes(root: Path) -> None:
    write_run(root, "single", [Item(WIFI_OFF), Item(WIFI_STATUS), Item(HALF), Item(REFUSE)])
    write_run(root, "shard1", [Item(WIFI_OFF), Item(HALF)], started="2026-01-01T10:00:00+00:00",
              finished="2026-01-01T10:04:00+00:00", duration=1.2345, exit_status=0, workers=2, shard="1/2")
    write_run(root, "shard2", [Item(WIFI_STATUS), Item(REFUSE)], started="2026-01-01T09:59:00+00:00",
              finished="2026-01-01T10:03:00+00:00", duration=2.0001, exit_status=1, workers=3, shard="2/2")

    result = merged(root, "shard1", "shard2")

    single = read_json(root / "single" / "summary.json")
    summary = read_json(root / "merged" / "summary.json")
    assert result.summary == summary
    assert [stable(record) for record in summary["records"]] == [stable(record) for record in single["records"]]
    assert [(record["worker"], record["duration"]) for record in summary["records"]] == [("gw0", 1.25)] * 4
    assert (summary["aggregates"], summary["usage"], summary["counts"]) == (
        single["aggregates"], single["usage"], single["counts"])
    assert (summary["partial"], summary["unfinished"], summary["crashed"], summary["stop_reason"]) == (
        False, [], [], None)
    assert files(root / "merged") == files(root / "single")
    for path in (root / "single" / "trajectories").rglob("*.json"):
        assert (root / "merged" / path.relative_to(root / "single")).read_bytes() == path.read_bytes()
    pages = sorted((root / "merged" / "trajectories").rglob("*.html"))
    assert [page.read_text(encoding="utf-8") for page in pages] == [
        (root / "single" / page.relative_to(root / "merged")).read_text(encoding="utf-8") for page in pages]
    half_page = root / "merged" / "trajectories/scenarios/settings/half/base.html"
    assert "<b>User goal:</b> Turn wifi and cellular off." in half_page.read_text(encoding="utf-8")  # read under root
    assert result.scenarios_missing == [] and result.input_errors == [] and not result.write_errors

    run = summary["run"]
    shard1, shard2 = (read_json(root / name / "summary.json")["run"] for name in ("shard1", "shard2"))
    assert {key: run[key] for key in ("started", "finished", "duration", "exit_status", "workers", "agents",
                                      "users")} == {
        "started": "2026-01-01T09:59:00+00:00", "finished": "2026-01-01T10:04:00+00:00", "duration": 3.235,
        "exit_status": 1, "workers": 3, "agents": ["reference"], "users": ["scripted"]}
    assert run["options"] == {**shard1["options"], "shard": None}
    assert run["fingerprint"] == single["run"]["fingerprint"]
    assert run["merged_from"] == [
        {"directory": str(root / "shard1"), "started": shard1["started"], "finished": shard1["finished"],
         "partial": False, "records": 2},
        {"directory": str(root / "shard2"), "started": shard2["started"], "finished": shard2["finished"],
         "partial": False, "records": 2}]
    header, *lines = map(json.loads, (root / "merged" / "records.jsonl").read_text(encoding="utf-8").splitlines())
    assert header == {"journal": 1, "fingerprint": single["run"]["fingerprint"], "merged": True}
    assert lines == summary["records"]


def test_the_merged_run_takes_the_first_input_s_options_and_what_an_input_does_not_say_is_zero(root: Path) -> None:
    write_run(root, "one", [Item(WIFI_OFF)])
    write_run(root, "two", [Item(HALF)], exit_status=0, workers=0)
    edit_summary(root / "one", lambda data: data.update(run={"fingerprint": data["run"]["fingerprint"]}))
    edit_summary(root / "two", lambda data: (data["run"].update(duration=0, exit_status=0, workers=0),
                                             data["records"][0].update(duration=0)))

    summary = merged(root, "one", "two").summary
    assert summary is not None
    run = summary["run"]
    assert [record["duration"] for record in summary["records"]] == [0.0, 1.25]  # half (two's), then wifi_off

    assert {key: run[key] for key in ("started", "finished", "duration", "exit_status", "workers")} == {
        "started": "2026-01-01T10:00:00+00:00", "finished": "2026-01-01T10:05:00+00:00", "duration": 0.0,
        "exit_status": 0, "workers": 0}
    assert run["options"] == {"trials": 1, "shard": None}  # the first input's (it has none left)
    assert [source["started"] for source in run["merged_from"]] == [None, "2026-01-01T10:00:00+00:00"]
    alone = merge.merged_run([read_source(root / "one")])
    assert (alone["started"], alone["finished"], alone["duration"]) == (None, None, 0.0)


def test_trials_are_the_most_any_task_holds_up_to_what_the_inputs_ran(root: Path) -> None:
    trials = [Item(WIFI_OFF, trial=1), Item(WIFI_OFF, trial=2), Item(HALF, trial=1)]
    write_run(root, "one", trials, trials=3)
    write_run(root, "two", [Item(HALF, trial=2)], trials=3)

    summary = merged(root, "one", "two").summary
    assert summary is not None

    assert (summary["run"]["options"]["trials"], summary["run"]["fingerprint"]["trials"]) == (2, 2)
    assert list(summary["aggregates"]["reference"]["all"]["pass_k"]) == ["1", "2"]
    assert [record["id"] for record in summary["records"]] == sorted(
        nodeid(item, trials=3) for item in [*trials, Item(HALF, trial=2)])
    write_run(root, "nothing", [], selected=[Item(HALF)], trials=3)
    assert merge.merged_fingerprint([read_source(root / "nothing")])["trials"] == 1  # no task holds more
    write_run(root, "few", [Item(WIFI_OFF, trial=1), Item(WIFI_OFF, trial=2)], trials=2)
    write_run(root, "more", [Item(HALF, trial=1), Item(HALF, trial=2)], trials=3)
    sources = [read_source(root / "few"), read_source(root / "more", 1)]
    assert merge.merged_fingerprint(sources)["trials"] == 2  # the most records of a task, not the 3 claimed


def test_single_agent_runs_get_the_ids_and_files_of_the_run_of_both(root: Path) -> None:
    items = [Item(WIFI_OFF, agent) for agent in BOTH] + [Item(REFUSE, agent) for agent in BOTH]
    write_run(root, "both", items, agents=BOTH)
    write_run(root, "reference", [Item(WIFI_OFF), Item(REFUSE)])
    write_run(root, "unhelpful", [Item(WIFI_OFF, "unhelpful")], selected=[Item(REFUSE, "unhelpful")],
              agents=("unhelpful",), stop_reason="--max-spend $1 reached")

    summary = merged(root, "reference", "unhelpful").summary
    assert summary is not None

    both = read_json(root / "both" / "summary.json")
    assert [record["id"] for record in summary["records"]] == [
        nodeid(item, BOTH) for item in [Item(REFUSE, "reference"), Item(WIFI_OFF, "reference"),
                                        Item(WIFI_OFF, "unhelpful")]]
    assert (summary["unfinished"], summary["partial"]) == ([nodeid(Item(REFUSE, "unhelpful"), BOTH)], True)
    assert summary["stop_reason"] == f"{root / 'unhelpful'}: --max-spend $1 reached"
    assert summary["counts"]["expected"] == 4
    assert (summary["run"]["agents"], summary["run"]["fingerprint"]["agents"]) == (list(BOTH), list(BOTH))
    assert files(root / "merged") == [name for name in files(root / "both") if "refuse/unhelpful" not in name]
    for name in files(root / "merged"):
        if name.endswith(".json") and name.startswith("trajectories/"):
            assert (root / "merged" / name).read_bytes() == (root / "both" / name).read_bytes()
    assert {record["id"]: stable(record) for record in summary["records"]} == {
        record["id"]: stable(record) for record in both["records"] if record["id"] in
        {record["id"] for record in summary["records"]}}


def test_users_of_the_inputs_and_their_variants_are_united_in_order(root: Path) -> None:
    write_run(root, "one", [Item(WIFI_OFF)])
    write_run(root, "two", [Item(HALF)])
    for name, users, variants in (("one", ["scripted"], ["base", "x"]), ("two", [None, "llm"], ["y", "base"])):
        edit_summary(root / name, lambda data, u=users, v=variants: data["run"]["fingerprint"].update(
            users=u, variants=v))

    sources = [read_source(root / "one"), read_source(root / "two", 1)]
    fingerprint = merge.merged_fingerprint(sources)

    assert (fingerprint["users"], fingerprint["variants"]) == (["None", "llm", "scripted"], ["base", "x", "y"])
    assert merge.merged_run(sources)["users"] == ["None", "llm", "scripted"]
    assert list(fingerprint["scenarios"]) == ["scenarios/settings/half.yaml", "scenarios/settings/wifi_off.yaml"]
    assert fingerprint["options"] == sources[0].fingerprint["options"]


# ------------------------------------------------------------------------------------------------
# Partial inputs keep the merge partial, unless another input finished what they left


def test_a_killed_run_is_read_from_its_journal_and_the_merge_is_partial(root: Path) -> None:
    write_run(root, "killed", [Item(WIFI_OFF)], selected=[Item(HALF)], killed=True,
              started="2026-01-01T07:00:00+00:00")

    source = read_source(root / "killed", 3)
    assert (source.killed, source.dropped, source.position, source.agents) == (True, 0, 3, ["reference"])
    assert source.summary["run"] == {"started": "2026-01-01T07:00:00+00:00"}
    assert (source.summary["partial"], source.summary.get("unfinished"), source.order) == (True, None, ("", 3))
    result = write_merged([source], root / "merged", False, root)

    assert result.merged.killed == [str(root / "killed")]
    summary = read_json(root / "merged" / "summary.json")
    assert (summary["partial"], summary["unfinished"], summary["counts"]["expected"]) == (True, [], 1)
    assert [record["id"] for record in summary["records"]] == [nodeid(Item(WIFI_OFF))]
    assert summary["run"]["merged_from"] == [{"directory": str(root / "killed"), "started": "2026-01-01T07:00:00+00:00",
                                              "finished": None, "partial": True, "records": 1}]
    assert summary["run"]["started"] == "2026-01-01T07:00:00+00:00" and summary["run"]["finished"] is None
    assert (root / "merged" / "trajectories/scenarios/settings/wifi_off/base.json").read_bytes() == (
        root / "killed" / "trajectories/scenarios/settings/wifi_off/base.json").read_bytes()


def test_a_killed_shard_another_input_completes_is_still_partial(root: Path) -> None:
    write_run(root, "killed", [Item(WIFI_OFF)], selected=[Item(HALF)], killed=True)
    write_run(root, "rest", [Item(HALF)])

    summary = merged(root, "killed", "rest").summary

    assert summary is not None and summary["partial"] is True and summary["unfinished"] == []
    assert summary["counts"]["finished"] == 2


def test_what_one_shard_left_unfinished_and_another_finished_is_complete(root: Path) -> None:
    write_run(root, "stopped", [Item(WIFI_OFF)], selected=[Item(HALF), Item(REFUSE)],
              stop_reason="--max-spend $1 reached")
    write_run(root, "rest", [Item(HALF)], selected=[Item(REFUSE)], stop_reason="--max-run-tokens 10 reached")
    write_run(root, "last", [Item(REFUSE)])

    summary = merged(root, "stopped", "rest").summary
    assert summary is not None
    assert (summary["partial"], summary["unfinished"], summary["counts"]["expected"]) == (
        True, [nodeid(Item(REFUSE))], 3)
    assert summary["stop_reason"] == (f"{root / 'stopped'}: --max-spend $1 reached; "
                                      f"{root / 'rest'}: --max-run-tokens 10 reached")

    complete = write_merged([read_source(root / name, n) for n, name in enumerate(["stopped", "rest", "last"])],
                            root / "complete", False, root).summary
    assert complete is not None
    assert (complete["partial"], complete["unfinished"], complete["stop_reason"]) == (False, [], None)
    assert complete["counts"]["expected"] == complete["counts"]["finished"] == 3


def test_an_older_partial_summary_counts_what_it_did_not_finish(root: Path) -> None:
    write_run(root, "old", [Item(WIFI_OFF)], selected=[Item(HALF), Item(REFUSE)],
              stop_reason="--max-spend $1 reached")
    edit_summary(root / "old", lambda data: data.pop("unfinished"))

    summary = merged(root, "old").summary

    assert summary is not None
    assert (summary["partial"], summary["unfinished"], summary["counts"]["expected"]) == (True, [], 3)
    assert summary["stop_reason"] == f"{root / 'old'}: --max-spend $1 reached"


def test_crashes_are_kept_unless_another_input_finished_the_item(root: Path) -> None:
    write_run(root, "crashed", [Item(WIFI_OFF)], selected=[Item(HALF), Item(REFUSE)])
    crashes = [{"id": nodeid(Item(REFUSE)), "worker": "gw1", "error": "the worker running it crashed"},
               {"id": nodeid(Item(HALF)), "worker": "gw0", "error": "the worker running it crashed"}]
    edit_summary(root / "crashed", lambda data: data.update(crashed=crashes, partial=True))
    write_run(root, "rest", [Item(HALF)])

    summary = merged(root, "rest", "crashed").summary

    assert summary is not None
    assert (summary["crashed"], summary["partial"]) == ([crashes[0]], True)


# ------------------------------------------------------------------------------------------------
# Conflicts, reruns, baselines


def test_a_conflict_writes_nothing_and_a_preferred_rerun_is_kept(root: Path) -> None:
    write_run(root, "first", [Item(WIFI_OFF), Item(HALF)], finished="2026-01-01T10:00:00+00:00")
    write_run(root, "rerun", [Item(HALF)], finished="2026-01-01T11:00:00+00:00")
    edit_summary(root / "rerun", lambda data: data["records"][0].update(outcome="passed", passed=True))

    refused = merged(root, "rerun", "first")
    assert (refused.summary, refused.write_errors, refused.scenarios_missing, refused.input_errors) == (
        None, None, [], [])
    assert refused.merged.conflicts == [f"{nodeid(Item(HALF))} (agent reference): {root / 'first'} and "
                                        f"{root / 'rerun'}"]
    assert not (root / "merged").exists()

    summary = merged(root, "rerun", "first", prefer_latest=True).summary
    assert summary is not None
    assert [(record["id"], record["outcome"]) for record in summary["records"]] == [
        (nodeid(Item(HALF)), "passed"), (nodeid(Item(WIFI_OFF)), "passed")]
    assert summary["counts"]["passed"] == 2


def test_the_baseline_is_kept_when_every_input_gated_against_the_same_one(root: Path) -> None:
    write_run(root, "one", [Item(WIFI_OFF)], baseline={"path": "baselines/ref.json"})
    write_run(root, "two", [Item(HALF)], baseline={"path": "baselines/ref.json"})
    write_run(root, "other", [Item(REFUSE)], baseline={"path": "baselines/other.json"})
    write_run(root, "none", [Item(REFUSE)])
    edit_summary(root / "two", lambda data: data["records"][0].update(change="regression"))

    summary = merged(root, "one", "two", "none").summary
    assert summary is not None
    assert summary["baseline"] == {"path": "baselines/ref.json", "regression": [nodeid(Item(HALF))],
                                   "improvement": [], "known_failure": []}
    sources = [read_source(root / name, n) for n, name in enumerate(["one", "other"])]
    assert write_merged(sources, root / "mixed", False, root).summary["baseline"] is None  # type: ignore[index]


# ------------------------------------------------------------------------------------------------
# Inputs that cannot be read: one line naming the file and the fix


def test_a_directory_without_a_summary_or_journal_is_named(root: Path) -> None:
    (root / "empty").mkdir()
    assert error_of(read_source, root / "empty") == (
        f"{root / 'empty'}: no summary.json nor records.jsonl; pass a report directory written by a pytest run "
        "(--report-dir)")


@pytest.mark.parametrize("name", ["summary.json", "records.jsonl"])
def test_an_input_file_that_is_a_directory_or_leads_out_is_refused(root: Path, name: str) -> None:
    write_run(root, "run", [Item(WIFI_OFF)], killed=name == "records.jsonl")
    path = root / "run" / name
    (root / "elsewhere").write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(root / "elsewhere")
    expected = (f"{path}: not a file inside {root / 'run'} (a symlink out of it, or a directory); pass a report "
                "directory written by a pytest run")
    assert error_of(read_source, root / "run") == expected
    path.unlink()
    path.symlink_to(root / "nowhere")  # a dangling link is refused, not taken for an absent file
    assert error_of(read_source, root / "run") == expected
    path.unlink()
    path.mkdir()
    assert error_of(read_source, root / "run") == expected


def test_a_symlink_that_stays_inside_the_input_is_read(root: Path) -> None:
    write_run(root, "run", [Item(WIFI_OFF)])
    (root / "run" / "summary.json").rename(root / "run" / "kept.json")
    (root / "run" / "summary.json").symlink_to("kept.json")
    assert [record["id"] for record in read_source(root / "run").summary["records"]] == [nodeid(Item(WIFI_OFF))]


def test_the_summary_is_preferred_to_the_journal(root: Path) -> None:
    write_run(root, "run", [Item(WIFI_OFF)], selected=[Item(HALF)])
    source = read_source(root / "run")
    assert (source.killed, source.summary["unfinished"], source.order) == (
        False, [nodeid(Item(HALF))], ("2026-01-01T10:05:00+00:00", 0))


@pytest.mark.parametrize(("change", "field", "message"), [
    (lambda data: data["run"].update(workers=-1), "run.workers", "Input should be greater than or equal to 0"),
    (lambda data: data.update(partial="yes"), "partial", "Input should be a valid boolean"),
    (lambda data: data["counts"].update(expected=1.5), "counts.expected", "Input should be a valid integer"),
    (lambda data: data.update(crashed=[{"worker": "gw0"}]), "crashed.0.id", "Field required"),
    (lambda data: data["records"][0].update(trajectory=7), "records[0].trajectory", "Input should be a valid string"),
    (lambda data: data["records"][0].update(duration=float("inf")), "records[0].duration.constrained-float",
     "Input should be a finite number"),
])
def test_a_field_of_the_wrong_type_is_named_with_its_file(root: Path, change: Any, field: str, message: str) -> None:
    write_run(root, "run", [Item(WIFI_OFF)])
    edit_summary(root / "run", change)
    assert error_of(read_source, root / "run") == (
        f"{root / 'run' / 'summary.json'}: field {field}: {message}; this file was not written by "
        "pytest-toolsandbox or was edited")


def test_a_summary_that_is_not_one_and_a_run_without_fingerprint_are_named(root: Path) -> None:
    write_run(root, "run", [Item(WIFI_OFF)])
    no_fingerprint = (f"{root / 'run' / 'summary.json'}: no run fingerprint (written by an older pytest-toolsandbox, "
                      "or not by it); its records cannot be told apart from another run's — start a new run")
    edit_summary(root / "run", lambda data: data["run"].pop("fingerprint"))
    assert error_of(read_source, root / "run") == no_fingerprint
    edit_summary(root / "run", lambda data: data.pop("run"))
    assert error_of(read_source, root / "run") == no_fingerprint
    (root / "run" / "summary.json").write_text("[]", encoding="utf-8")
    assert error_of(read_source, root / "run") == (
        f"{root / 'run' / 'summary.json'}: not a pytest-toolsandbox summary (no 'records' list); pass the "
        "summary.json written in the report directory")


def test_a_journal_is_checked_like_a_summary(root: Path) -> None:
    write_run(root, "killed", [Item(WIFI_OFF)], killed=True)
    journal = root / "killed" / "records.jsonl"
    header, line = journal.read_text(encoding="utf-8").splitlines()
    journal.write_text(header + "\n" + json.dumps({**json.loads(line), "worker": 3}) + "\n", encoding="utf-8")
    assert error_of(read_source, root / "killed") == (
        f"{journal}: field records[0].worker: Input should be a valid string; this file was not written by "
        "pytest-toolsandbox or was edited")
    journal.write_text(header + "\n" + json.dumps({**json.loads(line), "variant": 3}) + "\n", encoding="utf-8")
    assert error_of(read_source, root / "killed") == (
        f"{journal}: field records[0].variant: Input should be a valid string; this file was not written by "
        "pytest-toolsandbox or was edited — regenerate it with a pytest run")
    journal.write_text(json.dumps({**json.loads(header), "fingerprint": None}) + "\n" + line + "\n", encoding="utf-8")
    assert error_of(read_source, root / "killed").startswith(f"{journal}: no run fingerprint")
    journal.write_text(line + "\n", encoding="utf-8")  # no header line: no fingerprint either
    assert error_of(read_source, root / "killed").startswith(f"{journal}: no run fingerprint")


def test_records_that_cannot_belong_to_their_run_are_dropped_and_counted(root: Path) -> None:
    write_run(root, "run", [Item(WIFI_OFF), Item(HALF), Item(REFUSE)])
    edit_summary(root / "run", lambda data: (data["records"][0].update(agent="other", agent_spec="other"),
                                             data["records"][2].update(trial=2)))
    source = read_source(root / "run")
    assert source.dropped == 2
    assert [record["id"] for record in source.summary["records"]] == [nodeid(Item(REFUSE))]


# ------------------------------------------------------------------------------------------------
# Trajectory files are data: read only inside their input, validated, bounded


def test_paths_inside_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "out").symlink_to(tmp_path)
    (tmp_path / "a" / "in").symlink_to(tmp_path / "a")
    assert inside(tmp_path / "a", "x/y.json") == tmp_path / "a" / "x" / "y.json"
    assert inside(tmp_path / "a", "in/y.json") == tmp_path / "a" / "in" / "y.json"
    assert inside(tmp_path / "a", "x\\y.json") == tmp_path / "a" / "x" / "y.json"
    for relative in ("", "/etc/passwd", "../a/y.json", "x/../y.json", "x//y.json", "./y.json", "x/", "out/y.json",
                     "x\\..\\..\\y.json"):
        assert inside(tmp_path / "a", relative) is None, relative


def trajectory_record_path(summary: dict[str, Any], index: int = 0) -> str:
    return str(summary["records"][index]["trajectory"])


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda path: path.unlink(), "cannot read the trajectory: No such file or directory"),
    (lambda path: path.write_bytes(b"\xff{}"), "not a trajectory: 'utf-8' codec can't decode byte 0xff in "
                                               "position 0: invalid start byte"),
    (lambda path: path.write_text('{"format": 1}', encoding="utf-8"), "not a trajectory: field scenario: "
                                                                      "Field required"),
    (lambda path: path.write_text("[]", encoding="utf-8"), "not a trajectory: field (top level): Input should "
                                                           "be an object"),
    (lambda path: path.write_text(path.read_text(encoding="utf-8").replace('"index":0', '"index":null', 1),
                                  encoding="utf-8"), "not a trajectory: field messages.0.index: Input should be "
                                                     "a valid integer"),
])
def test_a_trajectory_that_cannot_be_copied_leaves_its_record_without_one(root: Path, damage: Any,
                                                                          reason: str) -> None:
    write_run(root, "run", [Item(WIFI_OFF), Item(HALF)])
    relative = "trajectories/scenarios/settings/half/base.json"
    damage(root / "run" / relative)

    result = merged(root, "run")

    assert result.input_errors == [f"{root / 'run' / relative}: {reason}"]
    assert result.summary is not None
    records = {record["path"]: record for record in result.summary["records"]}
    assert (records[WIFI_OFF]["trajectory"], records[WIFI_OFF]["page"]) == (
        "trajectories/scenarios/settings/wifi_off/base.json", "trajectories/scenarios/settings/wifi_off/base.html")
    assert (records[HALF]["trajectory"], records[HALF]["page"]) == (None, None)
    assert files(root / "merged" / "trajectories") == ["scenarios/settings/wifi_off/base.html",
                                                      "scenarios/settings/wifi_off/base.json"]


def test_a_record_naming_a_trajectory_outside_its_input_copies_nothing(root: Path) -> None:
    write_run(root, "run", [Item(WIFI_OFF), Item(HALF), Item(REFUSE)])
    (root / "run" / "trajectories" / "link.json").symlink_to(root / "run" / "summary.json")
    (root / "run" / "trajectories" / "up").symlink_to(root)
    edit_summary(root / "run", lambda data: (data["records"][0].update(trajectory="trajectories/up/x.json"),
                                             data["records"][1].update(trajectory="summary.json"),
                                             data["records"][2].update(trajectory="trajectories/link.json")))

    result = merged(root, "run")

    ids = [record["id"] for record in read_json(root / "run" / "summary.json")["records"]]
    assert result.input_errors == [
        f"{root / 'run' / 'trajectories/up/x.json'}: leads out of {root / 'run'} (`..` or a symlink); not copied",
        f"{root / 'run' / 'trajectories/link.json'}: not a trajectory: field scenario: Field required"]
    assert result.summary is not None and [record["trajectory"] for record in result.summary["records"]] == [
        None, None, None]
    assert [record["id"] for record in result.summary["records"]] == ids
    assert not (root / "merged" / "trajectories").exists()


def test_a_trajectory_is_read_up_to_its_bound(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_run(root, "run", [Item(WIFI_OFF)])
    relative = trajectory_record_path(read_json(root / "run" / "summary.json"))
    path = root / "run" / relative
    text = path.read_text(encoding="utf-8")
    monkeypatch.setattr(merge, "MAX_TRAJECTORY_BYTES", 2 << 20)
    path.write_text(text + " " * ((2 << 20) - len(text.encode())), encoding="utf-8")  # exactly the bound
    assert read_trajectory(root / "run", relative) == path.read_text(encoding="utf-8")
    path.write_text(text + " " * ((2 << 20) + 1 - len(text.encode())), encoding="utf-8")
    assert error_of(read_trajectory, root / "run", relative) == (
        f"{path}: larger than 2 MiB; not a trajectory this plugin writes")


def test_pages_go_without_a_goal_when_the_scenario_file_is_not_under_the_root(root: Path) -> None:
    write_run(root, "run", [Item(WIFI_OFF), Item(HALF), Item(WIFI_STATUS)])
    (root / "scenarios/settings/half.yaml").unlink()
    (root / "scenarios/messaging/wifi_status.yaml").write_text("user: [", encoding="utf-8")

    result = merged(root, "run")

    assert result.scenarios_missing == ["scenarios/messaging/wifi_status.yaml", "scenarios/settings/half.yaml"]
    pages = root / "merged" / "trajectories" / "scenarios"
    assert "<b>User goal:</b> Turn wifi off." in (pages / "settings/wifi_off/base.html").read_text(encoding="utf-8")
    for name in ("settings/half", "messaging/wifi_status"):
        assert "User goal:" not in (pages / name / "base.html").read_text(encoding="utf-8")


def test_a_scenario_path_leading_out_of_the_root_is_never_read(root: Path, tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("outside")
    write_scenarios(outside)
    contexts = merge._Contexts(root / "scenarios")  # the files sit one level up: out of this root
    (root / "scenarios" / "link.yaml").symlink_to(outside / "scenarios/settings/half.yaml")
    assert contexts("link.yaml") is None
    assert contexts("../scenarios/settings/half.yaml") is None
    assert contexts("settings/half.yaml") is not None
    known = SUITE[WIFI_OFF].replace("first_message:", "knowledge: Your phone is a Pixel., first_message:")
    (root / "scenarios" / "known.yaml").write_text(known, encoding="utf-8")
    assert contexts("known.yaml") == PageContext(
        "Turn wifi off.", "Your phone is a Pixel.",
        ("user: Please turn off my wifi.", "set_wifi_status(on=false)", "agent: Wifi is off now."))
    assert contexts.missing == ["../scenarios/settings/half.yaml", "link.yaml"]


def test_a_source_lists_its_agents_and_its_order() -> None:
    source = Source(Path("d"), {"run": {"finished": None}, "records": []}, 4, {"agents": None})
    assert (source.agents, source.order) == ([], ("", 4))
    assert Source(Path("d"), {"records": []}, 1).order == ("", 1)
    assert Source(Path("d"), {"run": {"finished": "t"}, "records": []}, 2, {"agents": ["a", "b"]}).agents == ["a", "b"]



def test_files_the_merge_cannot_write_are_reported(root: Path) -> None:
    write_run(root, "run", [Item(WIFI_OFF)])
    (root / "merged").mkdir()
    (root / "merged" / "trajectories").write_text("in the way", encoding="utf-8")

    result = merged(root, "run")

    assert result.write_errors is not None
    assert sorted(result.write_errors.failures) == [
        str(root / "merged" / "trajectories/scenarios/settings/wifi_off/base.json")]
    assert result.summary is not None and result.summary["records"][0]["trajectory"] is None
    assert read_json(root / "merged" / "summary.json") == result.summary
