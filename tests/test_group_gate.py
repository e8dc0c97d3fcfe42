"""The baseline gate across tasks: per group, a sign test of pass rates and a Wilcoxon signed-rank test of
similarity with a minimum effect, so that noise on every item passes and a real drop of one category fails;
and what the gate cannot detect with the pairs and trials at hand, said instead of passing silently."""

from __future__ import annotations

import random

import pytest

from pytest_toolsandbox.report.ci.gate import per_task_floor, per_task_note, run_gate
from pytest_toolsandbox.report.ci.group_gate import Measure, pairs_needed, sign_test, signed_rank_test, smallest_p

SAME_AGENT = {"reference": "reference"}


def scored(tasks: dict[str, tuple[list[float], str]], agent: str = "reference") -> list[dict[str, object]]:
    """Scored records: task name → (similarity per trial, category); a trial passes at similarity 1."""
    return [{"id": f"scenarios/{name}.yaml::test_scenario[base-t{trial}]", "path": f"scenarios/{name}.yaml",
             "variant": "base", "agent": agent, "agent_spec": agent, "trial": trial, "categories": [category],
             "outcome": "passed" if score >= 1 else "failed", "score": score, "passed": score >= 1}
            for name, (scores, category) in tasks.items() for trial, score in enumerate(scores, 1)]


def jittered(base: float, seed: int, trials: int = 4, spread: float = 0.05) -> list[float]:
    generator = random.Random(seed)
    return [base + generator.uniform(-spread, spread) for _ in range(trials)]


def test_similarity_jittered_on_every_item_passes_and_a_drop_of_a_tenth_in_one_category_fails() -> None:
    """40 tasks in two categories, 4 trials each; the run jitters every item's similarity within ±0.05,
    or also lowers one category of 32 tasks by 0.1."""
    categories = {f"t{k}": "state_dependency" if k < 32 else "canonicalization" for k in range(40)}
    level = {task: 0.3 + 0.01 * k for k, task in enumerate(categories)}
    baseline = scored({task: (jittered(level[task], k), categories[task]) for k, task in enumerate(categories)})
    for seed in range(20):  # whatever the noise draws
        noisy = scored({task: (jittered(level[task], 1000 * seed + k), categories[task])
                        for k, task in enumerate(categories)})
        assert run_gate(baseline, noisy, SAME_AGENT).regressed_groups == []
    dropped = scored({task: (jittered(level[task] - (0.1 if categories[task] == "state_dependency" else 0), 77 + k),
                             categories[task]) for k, task in enumerate(categories)})
    result = run_gate(baseline, dropped, SAME_AGENT)
    assert [g.group for g in result.regressed_groups] == ["all", "state_dependency"]
    dropped_category = result.regressed_groups[1]
    assert dropped_category.paired == 32 and dropped_category.similarity is not None
    assert dropped_category.similarity.delta == pytest.approx(-0.1, abs=0.02)
    assert dropped_category.similarity.p_drop < 1e-5 and dropped_category.verdicts()["pass_rate"] == "unchanged"


def test_a_significant_drop_below_the_minimum_effect_does_not_fail() -> None:
    tasks = {f"t{k}": ([0.5], "state_dependency") for k in range(30)}
    lower = {f"t{k}": ([0.48], "state_dependency") for k in range(30)}
    result = run_gate(scored(tasks), scored(lower), SAME_AGENT, min_effect=0.05)
    assert result.regressed_groups == [] and result.groups[0].verdicts()["similarity"] == "small"
    assert [g.group for g in run_gate(scored(tasks), scored(lower), SAME_AGENT, min_effect=0.02).regressed_groups] \
        == ["all", "state_dependency"]


def test_groups_with_too_few_pairs_and_undetectable_trials_say_so() -> None:
    tasks = {**{f"t{k}": ([1.0], "state_dependency") for k in range(6)}, "x": ([1.0], "canonicalization")}
    result = run_gate(scored(tasks), scored({name: ([0.0], c) for name, (_, c) in tasks.items()}), SAME_AGENT)
    assert [g.group for g in result.regressed_groups] == ["all", "state_dependency"]
    assert result.notes == [
        "per task: 1 baseline trial(s) against 1 run trial(s) cannot tell a drop from noise (smallest p 0.500 ≥ alpha "
        "0.05): every task that passed in the baseline and fails now fails the run; run --trials N on both sides for "
        "per-task noise verdicts",
        "category canonicalization: 1 paired task(s), too few to detect a drop at alpha 0.05 (needs 5); not gated "
        "across tasks"]
    assert pairs_needed(0.05) == 5 and smallest_p(5) < 0.05 <= smallest_p(4)
    assert per_task_floor(4, 4) == pytest.approx(1 / 70) and per_task_note(4, 4, 0.05) is None
    assert "cannot flag a single task (smallest p 0.200" in (per_task_note(1, 4, 0.05) or "")


def test_sign_test_counts_only_the_tasks_that_moved() -> None:
    assert sign_test([0.0, 0.0]) == (1.0, 1.0)
    down, up = sign_test([-0.25] * 5 + [0.0] * 20)
    assert down == pytest.approx(1 / 32) and up == 1.0
    down, up = sign_test([-0.25] * 15 + [0.25] * 15)
    assert down == up == pytest.approx(0.5722, abs=1e-4)


def test_an_agent_the_baseline_does_not_gate_gets_no_group_verdict() -> None:
    tasks = {f"t{k}": ([1.0], "state_dependency") for k in range(10)}
    worse = scored({name: ([0.0], c) for name, (_, c) in tasks.items()}, agent="other")
    assert run_gate(scored(tasks), worse, {}).groups == []
    assert len(run_gate(scored(tasks), worse, {"other": "reference"}).regressed_groups) == 2


@pytest.mark.parametrize(("measure", "verdict"), [
    (Measure(before=0.5, after=0.25, p_drop=0.01, p_rise=1.0), "regressed"),  # a drop of exactly min_effect
    (Measure(before=0.5, after=0.49, p_drop=0.01, p_rise=1.0), "small"),
    (Measure(before=0.5, after=0.25, p_drop=0.05, p_rise=1.0), "unchanged"),  # p = alpha is not below it
    (Measure(before=0.25, after=0.5, p_drop=1.0, p_rise=0.01), "improved"),  # a rise of exactly min_effect
    (Measure(before=0.5, after=0.51, p_drop=1.0, p_rise=0.01), "small"),
    (Measure(before=0.25, after=0.5, p_drop=1.0, p_rise=0.05), "unchanged"),
])
def test_a_measure_needs_p_below_alpha_and_at_least_the_minimum_effect(measure: Measure, verdict: str) -> None:
    assert measure.verdict(alpha=0.05, min_effect=0.25) == verdict


def test_no_change_gives_p_one_either_way_and_a_millionth_is_a_change() -> None:
    assert sign_test([0.0, 0.0]) == signed_rank_test([0.0, 5e-7, -5e-7]) == (1.0, 1.0)
    lower, higher = signed_rank_test([-1e-6] * 5)
    assert (lower, higher) == (pytest.approx(1 / 32), 1.0)
