"""How `merge` combines report directories, rule by rule, in-process on summaries built here (the
session tests in test_report_merge.py merge real runs): one result per (agent, item), conflicts and
`--prefer latest`, what stays unfinished, crashes, stop reasons, killed runs, and incompatible inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.report.results.merge import MergeError, Source, check_compatible, merge_sources

A, B = "s/a.yaml::test_scenario[base-t1]", "s/b.yaml::test_scenario[base-t1]"


def item(nodeid: str, outcome: str = "passed", agent: str = "ref", **extra: Any) -> dict[str, Any]:
    return {"id": nodeid, "agent": agent, "agent_spec": agent, "outcome": outcome,
            "trajectory": f"trajectories/{nodeid[:6]}.json", "duration": 1.0, **extra}


def source(name: str, records: list[dict[str, Any]], position: int = 0, finished: str = "",
           agents: tuple[str, ...] = ("ref",), killed: bool = False, options: dict[str, Any] | None = None,
           scenarios: dict[str, str] | None = None, **summary: Any) -> Source:
    return Source(Path(name), {"run": {"finished": finished}, "records": records, **summary}, position,
                  {"agents": list(agents), "options": options or {"trials": 1},
                   "scenarios": scenarios or {"s/a.yaml": "1"}}, killed)


def test_the_same_result_twice_is_one_entry_and_volatile_fields_do_not_conflict() -> None:
    first = source("one", [item(A)], finished="2026-01-01T10:00")
    again = source("two", [item(A, duration=9.0, worker="gw1"), item(B, trajectory="../outside.json")], 1,
                   finished="2026-01-01T09:00")

    merged = merge_sources([first, again], prefer_latest=False)

    assert list(merged.entries) == [("ref", A), ("ref", B)]
    assert merged.entries[("ref", A)].source is again  # the run that finished first is read first
    assert (merged.entries[("ref", A)].trajectory, merged.entries[("ref", B)].trajectory) == (
        "trajectories/s/a.ya.json", None)
    assert (merged.conflicts, merged.replaced, merged.unfinished, merged.killed) == ([], [], set(), [])


@pytest.mark.parametrize("prefer_latest", [False, True])
def test_two_different_results_conflict_unless_the_latest_is_preferred(prefer_latest: bool) -> None:
    first = source("one", [item(A)], finished="2026-01-01T09:00")
    rerun = source("two", [item(A, outcome="failed")], 1, finished="2026-01-01T10:00")

    merged = merge_sources([rerun, first], prefer_latest)

    line = f"{A} (agent ref): one and two"
    assert (merged.replaced, merged.conflicts) == (([line], []) if prefer_latest else ([], [line]))
    assert merged.entries[("ref", A)].record["outcome"] == ("failed" if prefer_latest else "passed")


def test_an_item_another_input_finished_is_not_unfinished_nor_crashed() -> None:
    stopped = source("shard1", [item(A)], unfinished=[B], crashed=[{"id": B, "error": "x"}, {"id": "gone"}],
                     stop_reason="--max-spend $1 reached", partial=True)
    rest = source("shard2", [item(B)], 1, unfinished=[], killed=True)

    merged = merge_sources([stopped, rest], prefer_latest=False)

    assert merged.unfinished == set()
    assert merged.crashed == [{"id": "gone"}]
    assert merged.stop_reasons == ["shard1: --max-spend $1 reached"]
    assert merged.killed == ["shard2"]
    alone = merge_sources([stopped], prefer_latest=False)
    assert (alone.unfinished, alone.crashed) == ({B}, [{"id": B, "error": "x"}, {"id": "gone"}])


def test_a_partial_summary_without_a_list_counts_what_it_did_not_finish() -> None:
    old = source("old", [item(A)], partial=True, counts={"expected": 5, "finished": 2})
    over = source("over", [item(B)], 1, partial=True, counts={"expected": 1, "finished": 3})
    whole = source("whole", [], 2, partial=False, counts={"expected": 9, "finished": 0})

    assert merge_sources([old, over, whole], prefer_latest=False).unknown_missing == 3


def test_runs_of_one_agent_each_get_the_agent_in_their_ids() -> None:
    ref = source("ref", [item(A)], unfinished=[B])
    other = source("other", [item(A, agent="other")], 1, agents=("other",))

    merged = merge_sources([ref, other], prefer_latest=False)

    assert list(merged.entries) == [("ref", A.replace("[", "[ref-")), ("other", A.replace("[", "[other-"))]
    assert merged.unfinished == {B.replace("[", "[ref-")}
    both = source("both", [item(A), item(A, agent="other")], agents=("ref", "other"))
    assert list(merge_sources([both], prefer_latest=False).entries) == [("ref", A), ("other", A)]


def test_inputs_with_other_options_or_scenario_contents_cannot_be_one_report() -> None:
    one = source("one", [], options={"trials": 1, "augment": ["base"]})
    check_compatible([one, source("same", [], options={"augment": ["base"], "trials": 1})])

    with pytest.raises(MergeError) as error:
        check_compatible([one, source("two", [], options={"trials": 2, "augment": ["all"], "user": "llm"})])
    assert str(error.value) == ("one and two ran with different options (options.augment: ['base'] and ['all'], "
                                "and 2 more); their results cannot be one report")
    with pytest.raises(MergeError) as error:
        check_compatible([one, source("two", [], options={"trials": 2, "augment": ["base"]})])
    assert str(error.value) == ("one and two ran with different options (options.trials: 1 and 2); their results "
                                "cannot be one report")
    with pytest.raises(MergeError) as error:
        check_compatible([one, source("same", [], options=one.fingerprint["options"],
                                      scenarios={"s/b.yaml": "2", "s/a.yaml": "9"})])
    assert str(error.value) == ("s/a.yaml differs between one and same (the scenario file changed between the "
                                "runs); their results cannot be one report")


@pytest.mark.parametrize("prefer_latest", [False, True])
def test_a_conflict_or_a_repeat_does_not_stop_the_rest_of_its_input(prefer_latest: bool) -> None:
    first = source("one", [item(A)], finished="2026-01-01T09:00")
    conflicting = source("two", [item(A, outcome="failed"), item(B)], 1, finished="2026-01-01T10:00")
    repeating = source("three", [item(A), item(B.replace("b.yaml", "c.yaml"))], 2, finished="2026-01-01T11:00")

    merged = merge_sources([first, conflicting, repeating], prefer_latest)

    assert [nodeid for _, nodeid in merged.entries] == [A, B, B.replace("b.yaml", "c.yaml")]


def test_a_partial_summary_with_counts_missing_counts_nothing_it_cannot_know() -> None:
    def missing(**counts: Any) -> int:
        summary = {"counts": counts} if counts else {}
        return merge_sources([source("old", [], partial=True, **summary)], prefer_latest=False).unknown_missing

    assert (missing(), missing(expected=4), missing(finished=3), missing(expected=4, finished=1)) == (0, 4, 0, 3)


def test_agent_names_go_into_ids_when_the_inputs_hold_several_agents() -> None:
    # an input that names an agent with no records still makes the merged run one of several agents
    named_only = source("named", [], 1, agents=("other",))
    assert list(merge_sources([source("ref", [item(A)]), named_only], prefer_latest=False).entries) == [
        ("ref", A.replace("[", "[ref-"))]
    # an input of two agents (one with records so far) keeps its ids: they name no agent to begin with
    two = source("two", [item(A)], agents=("ref", "other"))
    assert ("ref", A) in merge_sources([two, source("x", [item(B, agent="x")], 1, agents=("x",))],
                                       prefer_latest=False).entries
    # records of two agents in an input of one named agent: ids kept as well
    mixed = source("mixed", [item(A), item(A, agent="y")], agents=("ref",))
    assert list(merge_sources([mixed, source("x", [item(B, agent="x")], 1, agents=("x",))],
                              prefer_latest=False).entries)[:2] == [("ref", A), ("y", A)]


def test_two_differing_options_name_the_first_and_one_more() -> None:
    one = source("one", [], options={"trials": 1, "augment": ["base"]})
    with pytest.raises(MergeError) as error:
        check_compatible([one, source("two", [], options={"trials": 2, "augment": ["all"]})])
    assert str(error.value) == ("one and two ran with different options (options.augment: ['base'] and ['all'], "
                                "and 1 more); their results cannot be one report")
