"""Which baseline results gate which agent, and what each item's change is, without a pytest session:
the rules of report/ci/baseline.py one by one (the session tests in test_plugin_baseline.py show them end
to end)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.report.ci.baseline import Baseline, baseline_from_records, classify, load_baseline, pass_counts
from pytest_toolsandbox.report.ci.baseline_file import dump_baseline


def record(agent: str, path: str, passed: bool, outcome: str | None = None, score: float | None = 1.0,
           variant: str = "base", trial: int = 1, spec: str | None = None) -> dict[str, Any]:
    return {"agent": agent, "agent_spec": spec, "path": path, "variant": variant, "trial": trial,
            "categories": ["c"], "outcome": outcome or ("passed" if passed else "failed"), "passed": passed,
            "score": score}


RECORDS = [
    record("model", "s/a.yaml", True), record("model", "s/a.yaml", True, trial=2),
    record("model", "s/b.yaml", True), record("model", "s/b.yaml", False, trial=2),
    record("model", "s/c.yaml", False, outcome="error", score=None),
    record("model", "s/d.yaml", True, outcome="passed", score=None),
    record("model", "s/e.yaml", False, outcome="xfailed"),
    record("model", "s/e.yaml", True, outcome="xpassed", trial=2),
    record("Mine", "s/a.yaml", False, outcome="skipped", score=0.0),
    record("Mine", "s/a.yaml", False, variant="all_tools", spec="mine-spec"),
]


def test_pass_counts_count_scored_trials_per_agent_and_task() -> None:
    assert pass_counts(RECORDS) == {
        "model": {"s/a.yaml::base": (2, 2), "s/b.yaml::base": (1, 2), "s/e.yaml::base": (1, 2)},
        "mine-spec": {"s/a.yaml::all_tools": (0, 1)}}


def test_a_task_passed_in_the_baseline_only_when_every_scored_trial_passed() -> None:
    baseline = baseline_from_records("b.json", RECORDS)

    assert baseline == Baseline(path="b.json", passed={
        "model": {"s/a.yaml::base": True, "s/b.yaml::base": False, "s/e.yaml::base": False},
        "mine-spec": {"s/a.yaml::all_tools": False}})
    assert baseline.recorded_for == ("model", "mine-spec")


def test_a_baseline_file_loads_as_the_records_it_was_written_from(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(dump_baseline(RECORDS, "b.json", "reference"))

    assert load_baseline(path) == baseline_from_records(str(path), RECORDS, "reference")
    assert load_baseline(path).rules == "reference"


ONE = Baseline(path="b.json", passed={"model": {"s/a.yaml::base": True, "s/b.yaml::base": False}}, rules="reference")
TWO = Baseline(path="b.json", passed={"model": {"s/a.yaml::base": True}, "other": {"s/a.yaml::base": False}})


@pytest.mark.parametrize(("baseline", "agents", "any_spec", "gates"), [
    (ONE, ["new-spec"], True, {"new-spec": "model"}),  # the command line's one-agent baseline gates any one agent
    (ONE, ["new-spec"], False, {}),  # the ini's gates only its own agent
    (ONE, ["model"], False, {"model": "model"}),
    (ONE, ["model", "new-spec"], True, {"model": "model"}),  # of two agents, only its own
    (TWO, ["new-spec"], True, {}),  # a baseline of several agents stands in for none
    (TWO, ["other", "model", "x"], True, {"other": "other", "model": "model"}),
])
def test_which_agents_a_baseline_gates(baseline: Baseline, agents: list[str], any_spec: bool,
                                       gates: dict[str, str]) -> None:
    gating = baseline.for_agents(agents, any_spec=any_spec)

    assert (gating.gates, gating.specs, gating.path, gating.passed) == (gates, tuple(agents), "b.json", baseline.passed)
    assert gating.gated([*agents, "unknown"]) == gates


def test_an_agent_of_no_spec_is_gated_by_results_under_its_own_name_only() -> None:
    gating = TWO.for_agents(["new-spec"])

    assert gating.source("new-spec") is None  # a spec of the run: only what `gates` says
    assert gating.source("other") == "other"  # a conftest's agent named like a baseline agent
    assert gating.source("Stranger") is None
    assert gating.status("other", "s/a.yaml", "base") is False
    assert gating.status("other", "s/z.yaml", "base") is None  # not in the baseline: a new task
    assert gating.status("Stranger", "s/a.yaml", "base") is None


def test_status_reads_the_gating_agents_task() -> None:
    gating = ONE.for_agents(["new-spec"])

    assert gating.status("new-spec", "s/a.yaml", "base") is True
    assert gating.status("new-spec", "s/b.yaml", "base") is False
    assert gating.status("new-spec", "s/a.yaml", "all_tools") is None


def test_the_shipped_copy_rebuilds_the_same_baseline_and_the_summary_says_who_was_gated() -> None:
    gating = ONE.for_agents(["new-spec", "x"], any_spec=False)
    shipped = gating.as_shipped()

    assert Baseline(path=shipped["path"], passed=shipped["passed"], gates=shipped["gates"],
                    specs=tuple(shipped["specs"]), rules=shipped["rules"]) == gating
    assert shipped == {"path": "b.json", "passed": ONE.passed, "gates": {}, "specs": ["new-spec", "x"],
                       "rules": "reference"}
    assert ONE.for_agents(["new-spec"]).as_json(["new-spec", "model"], "reference") == {
        "path": "b.json", "recorded_for": ["model"], "gates": {"new-spec": "model", "model": "model"},
        "ungated": [], "differs": []}
    assert gating.as_json(["new-spec", "x"], "ours") == {"path": "b.json", "recorded_for": ["model"], "gates": {},
                                                         "ungated": ["new-spec", "x"],
                                                         "differs": ["rules: 'reference' then, 'ours' now"]}


@pytest.mark.parametrize(("baseline_passed", "outcome", "change"), [
    (True, "passed", "unchanged"), (True, "xpassed", "unchanged"), (True, "failed", "regression"),
    (True, "xfailed", "regression"), (False, "passed", "improvement"), (False, "xpassed", "improvement"),
    (False, "failed", "known_failure"), (False, "xfailed", "known_failure"), (None, "failed", "new"),
    (None, "passed", "new"), (True, "error", None), (None, "skipped", None), (False, "error", None),
])
def test_each_outcome_against_the_baseline_is_one_change(baseline_passed: bool | None, outcome: str,
                                                          change: str | None) -> None:
    assert classify(baseline_passed, outcome) == change
