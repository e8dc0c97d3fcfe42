"""What the gate writes into summary.json (`baseline.gate`) and its per-task lines, computed in-process
from records whose means and p-values can be checked by hand (the pytest-session tests in
test_report_gate.py show the same end to end)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_toolsandbox.report.ci.gate import forgiven, one_sided_fisher, per_task_note, run_gate

CATEGORIES = {f"t{k}": "state_dependency" if k < 6 else "canonicalization" for k in range(9)}
TRIALS = range(1, 5)


def record(agent: str, task: str, trial: int, passed: bool) -> dict[str, Any]:
    return {"id": f"{agent}/{task}::{trial}", "agent": agent, "agent_spec": agent, "path": f"s/{task}.yaml",
            "variant": "base", "trial": trial, "categories": [CATEGORIES[task]],
            "outcome": "passed" if passed else "failed", "passed": passed, "score": 1.0 if passed else 0.25}


def runs() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Agent m: t0 drops from 4/4 to 0/4, t1 to 3/4, t8 (a known failure at 3/4) to 0/4; agent w drops on
    every task; agent i passes every task it failed before."""
    before = [record("m", t, n, not (t == "t8" and n == 1)) for t in CATEGORIES for n in TRIALS]
    before += [record(agent, t, n, agent == "w") for agent in ("w", "i") for t in CATEGORIES for n in TRIALS]
    after = [record("m", t, n, t not in ("t0", "t8") and not (t == "t1" and n == 2))
             for t in CATEGORIES for n in TRIALS]
    after += [record(agent, t, n, agent == "i") for agent in ("w", "i") for t in CATEGORIES for n in TRIALS]
    return before, after


def test_the_gate_as_summary_json_records_it() -> None:
    before, after = runs()

    gate = run_gate(before, after, {"m": "m", "w": "w", "i": "i"}, alpha=0.05, min_effect=0.05).as_json()

    assert gate["tests"] == {"groups": "per group across paired tasks: exact sign test of pass rates, Wilcoxon "
                                       "signed-rank test of mean similarity (one-sided)",
                             "tasks": "with trials, one-sided Fisher exact test per task"}
    assert (gate["alpha"], gate["min_effect"]) == (0.05, 0.05)
    assert [(g["agent"], g["group"], g["paired_tasks"], g["detectable"], g["pass_rate"]["verdict"],
             g["similarity"]["verdict"]) for g in gate["groups"]] == [
        ("i", "all", 9, True, "improved", "improved"),
        ("i", "state_dependency", 6, True, "improved", "improved"),
        ("i", "canonicalization", 3, False, "unchanged", "unchanged"),  # 0.5³ = 0.125: no three tasks are enough
        ("m", "all", 9, True, "unchanged", "unchanged"),
        ("m", "state_dependency", 6, True, "unchanged", "unchanged"),
        ("m", "canonicalization", 3, False, "unchanged", "unchanged"),
        ("w", "all", 9, True, "regressed", "regressed"),
        ("w", "state_dependency", 6, True, "regressed", "regressed"),
        ("w", "canonicalization", 3, False, "unchanged", "unchanged")]
    m_all = gate["groups"][3]
    assert m_all["pass_rate"] == pytest.approx({"before": (8 + 3 / 4) / 9, "after": (6 + 3 / 4) / 9,
                                                "delta": -2 / 9, "p_drop": 0.5 ** 3, "p_rise": 1.0,
                                                "verdict": "unchanged"})
    assert m_all["similarity"] == pytest.approx({"before": (8 + 13 / 16) / 9, "after": (6 + 13 / 16 + 2 / 4) / 9,
                                                 "delta": -(2 - 2 / 4) / 9, "p_drop": 0.5 ** 3,
                                                 "p_rise": 1.0, "verdict": "unchanged"})
    assert gate["regressed_groups"] == ["w all", "w state_dependency"]
    assert gate["improved_groups"] == ["i all", "i state_dependency"]
    assert [task["task"] for task in gate["regressed_tasks"]] == [
        "s/t0.yaml::base", *(f"s/{t}.yaml::base" for t in CATEGORIES)]
    assert gate["regressed_tasks"][0] == {"agent": "m", "task": "s/t0.yaml::base", "baseline": [4, 4],
                                          "now": [0, 4], "p": pytest.approx(1 / 70), "verdict": "regressed"}
    assert gate["noisy_tasks"] == [{"agent": "m", "task": "s/t1.yaml::base", "baseline": [4, 4], "now": [3, 4],
                                    "p": pytest.approx(0.5), "verdict": "noisy"}]
    assert gate["notes"] == [f"{agent} · category canonicalization: 3 paired task(s), too few to detect a drop at "
                             "alpha 0.05 (needs 5); not gated across tasks" for agent in ("i", "m", "w")]


def test_one_agent_notes_name_the_group_alone_and_lines_give_counts_and_p() -> None:
    before, after = runs()

    gate = run_gate(before, after, {"m": "m"}, alpha=0.05, min_effect=0.05)

    assert gate.notes == ["category canonicalization: 3 paired task(s), too few to detect a drop at alpha 0.05 "
                          "(needs 5); not gated across tasks"]
    assert [verdict.line() for verdict in gate.tasks] == ["s/t0.yaml::base: 4/4 → 0/4 passed (p = 0.014)",
                                                          "s/t1.yaml::base: 4/4 → 3/4 passed (p = 0.500)"]
    assert (gate.regressed_groups, gate.improved_groups) == ([], [])
    assert forgiven(gate.tasks, after) == {"m/t1::2"}  # the noisy task's failed trial, not its passes


def trials(agent: str, task: str, passes: list[bool], category: str = "state_dependency") -> list[dict[str, Any]]:
    return [{"id": f"{agent}/{task}::{n}", "agent": agent, "agent_spec": agent, "path": f"s/{task}.yaml",
             "variant": "base", "trial": n, "categories": [category], "outcome": "passed" if ok else "failed",
             "passed": ok, "score": 1.0 if ok else 0.0} for n, ok in enumerate(passes, start=1)]


def test_per_task_verdicts_need_trials_and_follow_alpha_strictly() -> None:
    once = run_gate(trials("m", "a", [True]), trials("m", "a", [False]), {"m": "m"})
    twice = run_gate(trials("m", "a", [True] * 2), trials("m", "a", [False] * 2), {"m": "m"})
    assert (once.tasks, [(t.verdict, t.p_value) for t in twice.tasks]) == ([], [("noisy", pytest.approx(1 / 6))])

    before, after = trials("m", "a", [True] * 4), trials("m", "a", [True, False, False, False])
    assert [t.verdict for t in run_gate(before, after, {"m": "m"}, alpha=0.1).tasks] == ["regressed"]  # p = 5/70
    assert [t.verdict for t in run_gate(before, after, {"m": "m"}).tasks] == ["noisy"]
    p = one_sided_fisher((4, 4), (0, 4))
    at_p = run_gate(before, trials("m", "a", [False] * 4), {"m": "m"}, alpha=p)
    assert [(t.verdict, t.p_value) for t in at_p.tasks] == [("noisy", p)]  # p = alpha is not below alpha


def test_tasks_skipped_and_agents_without_results_do_not_end_the_judging() -> None:
    before = [*trials("m", "a", [True] * 4), *trials("m", "b", [True] * 4), *trials("z", "a", [True] * 4)]
    after = [*trials("m", "0new", [False] * 4), *trials("m", "a", [True] * 4), *trials("m", "b", [False] * 4),
             *trials("z", "a", [False] * 4)]

    gate = run_gate(before, after, {"absent": "absent", "m": "m", "gone": "nothing", "late": "m", "z": "z"})

    assert [(t.agent, t.task) for t in gate.tasks] == [("m", "s/b.yaml::base"), ("z", "s/a.yaml::base")]
    assert sorted({group.agent for group in gate.groups}) == ["m", "z"]


def test_a_group_without_paired_tasks_has_no_measures() -> None:
    gate = run_gate(trials("m", "a", [True]), trials("m", "b", [False]), {"m": "m"})

    assert [(g["group"], g["paired_tasks"], g["pass_rate"], g["similarity"]) for g in gate.as_json()["groups"]] == [
        ("all", 0, None, None), ("state_dependency", 0, None, None)]


def test_the_notes_say_which_agent_group_and_trials_cannot_be_judged() -> None:
    one = run_gate(trials("m", "a", [True]), trials("m", "a", [False]), {"m": "m"})
    assert one.notes == [
        "per task: 1 baseline trial(s) against 1 run trial(s) cannot tell a drop from noise (smallest p 0.500 ≥ "
        "alpha 0.05): every task that passed in the baseline and fails now fails the run; run --trials N on both "
        "sides for per-task noise verdicts",
        "all tasks: 1 paired task(s), too few to detect a drop at alpha 0.05 (needs 5); not gated across tasks",
        "category state_dependency: 1 paired task(s), too few to detect a drop at alpha 0.05 (needs 5); not gated "
        "across tasks"]
    empty_baseline = run_gate([], [*trials("m", "a", [True]), *trials("m", "b", [False])], {"m": "m"})
    assert empty_baseline.notes[0].startswith("per task: 1 baseline trial(s) against 1 run trial(s) cannot tell")
    errors = [{**record, "outcome": "error", "score": 0.0} for record in trials("m", "a", [False] * 3)]
    unscored = [{**record, "score": None} for record in trials("m", "a", [True] * 3)]
    unjudged = run_gate(trials("m", "a", [True]), [*errors, *unscored, *trials("m", "a", [True])], {"m": "m"})
    assert unjudged.notes[0].startswith("per task: 1 baseline trial(s) against 1 run trial(s)")  # 1 scored trial
    two = run_gate([*trials("m", "a", [True]), *trials("w", "a", [True])],
                   [*trials("m", "a", [True]), *trials("w", "a", [True])], {"m": "m", "w": "w"})
    assert [note.split(":")[0] for note in two.notes[1:]] == [
        "m · all tasks", "m · category state_dependency", "w · all tasks", "w · category state_dependency"]


@pytest.mark.parametrize(("baseline_trials", "run_trials", "alpha", "note"), [
    (1, 4, 0.05, "per task: 1 baseline trial(s) against 4 run trial(s) cannot flag a single task (smallest p 0.200 ≥ "
                 "alpha 0.05): tasks that lost passes are judged across tasks only; record the baseline with more "
                 "--trials"),
    (4, 4, 1 / 70, "per task: 4 baseline trial(s) against 4 run trial(s) cannot flag a single task (smallest p "
                   "0.014 ≥ alpha 0.0142857): tasks that lost passes are judged across tasks only; record the "
                   "baseline with more --trials"),
    (4, 4, 0.05, None),
])
def test_when_the_trials_cannot_flag_a_task_the_gate_says_so(baseline_trials: int, run_trials: int, alpha: float,
                                                             note: str | None) -> None:
    assert per_task_note(baseline_trials, run_trials, alpha) == note
