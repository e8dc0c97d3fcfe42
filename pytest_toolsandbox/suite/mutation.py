"""Milestones tested by mutation: every generated answer judged by the real verdict, as a whole item.

For each `agent_says` milestone, the reference text step that reaches it is replaced by each mutant
(suite/mutants.py) and the reference dialogue is replayed in the base variant and judged, exactly as
an agent's answer would be. A wrong mutant is *killed* when the item fails; a right one *holds*
when the item passes. The scenario's mutation score is the share of mutants judged the way they
should be; a mutant the milestone names under `waive:` (with its reason) does not count against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pytest_toolsandbox.evaluation.result import Evaluation
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.suite.examples import judge_in_place, text_steps
from pytest_toolsandbox.suite.mutants import Mutant, contact_names, contact_phones, mutants
from pytest_toolsandbox.tools.registry import ToolSpec
from pytest_toolsandbox.world.tables import Table
from pytest_toolsandbox.world.trajectory import Trajectory
from pytest_toolsandbox.world.world import World


@dataclass(frozen=True)
class Judged:
    """One mutant of one milestone and how the verdict judged it."""

    milestone: str
    mutant: Mutant
    passed: bool
    waived: str | None = None  # the reason, when the scenario file waives this mutant

    @property
    def as_expected(self) -> bool:
        return self.passed is not self.mutant.wrong

    def describe(self) -> str:
        outcome = "passes" if self.passed else "fails"
        kind = "wrong" if self.mutant.wrong else "right"
        return f"milestone {self.milestone!r}: {kind} answer [{self.mutant.id}] {outcome}: {self.mutant.text!r}"


@dataclass
class MutationResult:
    """The mutants of one scenario file, judged; `stale` are waivers that name no generated mutant."""

    judged: list[Judged] = field(default_factory=list)
    stale: list[tuple[str, str]] = field(default_factory=list)

    @property
    def counted(self) -> list[Judged]:
        return [judged for judged in self.judged if judged.waived is None]

    @property
    def score(self) -> float:
        """The share of unwaived mutants judged as they should be (1.0 when there are none)."""
        counted = self.counted
        return sum(judged.as_expected for judged in counted) / len(counted) if counted else 1.0

    @property
    def survivors(self) -> list[Judged]:
        return [judged for judged in self.counted if not judged.as_expected]

    def summary(self) -> dict[str, int]:
        wrong = [judged for judged in self.judged if judged.mutant.wrong]
        right = [judged for judged in self.judged if not judged.mutant.wrong]
        return {"generated": len(self.judged),
                "wrong": len(wrong), "killed": sum(not j.passed for j in wrong if j.waived is None),
                "right": len(right), "held": sum(j.passed for j in right if j.waived is None),
                "waived": sum(judged.waived is not None for judged in self.judged)}


def mutation_test(scenario: Scenario, registry: Mapping[str, ToolSpec], base: tuple[Trajectory, Evaluation],
                  start: World) -> MutationResult:
    """Judge every mutant of every `agent_says` milestone whose reference text step reaches it."""
    result = MutationResult()
    steps = text_steps(scenario, base)
    rows = start.table(Table.CONTACTS).to_dicts()
    contacts, phones = contact_names(rows), contact_phones(rows)
    for name, milestone in scenario.milestones.items():
        step = steps.get(name)
        generated: list[Mutant] = []
        if milestone.said("agent_says") and step is not None and scenario.reference[step].agent is not None:
            generated = mutants(milestone, scenario.reference[step].agent or "", contacts, phones)
            for mutant in generated:
                judged = judge_in_place(scenario, registry, step, mutant.text, start)
                result.judged.append(Judged(name, mutant, judged.passed(scenario.explicit_threshold),
                                            milestone.waive.get(mutant.id)))
        ids = {mutant.id for mutant in generated}
        result.stale.extend((name, waived) for waived in milestone.waive if waived not in ids)
    return result
