"""Milestones tested by mutation: every generated answer judged by the real verdict, as a whole item.

For each `agent_says` milestone, the reference text step that reaches it is replaced by each mutant
(suite/mutants.py) and the reference dialogue is replayed in the base variant and judged, exactly as
an agent's answer would be. A scenario's `final_answer` is tested the same way on the reference's
closing message (suite/final_answer_mutants.py); its mutants are filed under `final_answer`. A wrong
mutant is *killed* when the item fails; a right one *holds* when the item passes. The scenario's
mutation score is the share of mutants judged the way they should be; a mutant the milestone (or
`final_answer`) names under `waive:` (with its reason) does not count against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pytest_toolsandbox.evaluation.result import Evaluation
from pytest_toolsandbox.importer.waivers import imported_waiver
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.suite.examples import judge_in_place, text_steps
from pytest_toolsandbox.suite.final_answer_mutants import final_answer_mutants
from pytest_toolsandbox.suite.mutants import Mutant, contact_names, contact_phones, mutants
from pytest_toolsandbox.suite.steps import owners, script
from pytest_toolsandbox.tools.registry import ToolSpec
from pytest_toolsandbox.world.messages import Role
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
        return f"{owner(self.milestone)}: {kind} answer [{self.mutant.id}] {outcome}: {self.mutant.text!r}"


FINAL_ANSWER = "final_answer"
"""The name the mutants of a scenario's `final_answer` are judged under, where a milestone's name stands."""


def owner(name: str) -> str:
    """The owner of mutants as a report names it: `milestone 'answered'` or `final_answer`."""
    return FINAL_ANSWER if name == FINAL_ANSWER else f"milestone {name!r}"


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
                played = judge_in_place(scenario, registry, step, mutant.text, start)
                passed = played.passed(scenario.explicit_threshold)
                result.judged.append(Judged(name, mutant, passed, milestone.waive.get(mutant.id)
                                            or _imported(scenario, name, mutant, passed)))
        ids = {mutant.id for mutant in generated}
        result.stale.extend((name, waived) for waived in milestone.waive if waived not in ids)
    if scenario.final_answer is not None:
        step = closing_step(scenario, base[0])
        answers: list[Mutant] = []
        if step is not None:  # else the reference fails its final answer, which validate reports
            there = [scenario.milestones[name] for name, at in steps.items() if at == step]
            answers = final_answer_mutants(scenario.final_answer, scenario.reference[step].agent or "", contacts,
                                           phones, there)
            for mutant in answers:
                played = judge_in_place(scenario, registry, step, mutant.text, start)
                passed = played.passed(scenario.explicit_threshold)
                result.judged.append(Judged(FINAL_ANSWER, mutant, passed, scenario.final_answer.waive.get(mutant.id)
                                            or _imported(scenario, FINAL_ANSWER, mutant, passed)))
        ids = {mutant.id for mutant in answers}
        result.stale.extend((FINAL_ANSWER, waived) for waived in scenario.final_answer.waive if waived not in ids)
    return result


def _imported(scenario: Scenario, name: str, mutant: Mutant, passed: bool) -> str | None:
    """The importer's waiver of a mutant judged otherwise than its kind says (an imported file carries
    none of its own; importer/waivers.py); a mutant judged as it should be needs none."""
    return imported_waiver(scenario, name, mutant) if passed is mutant.wrong else None


def closing_step(scenario: Scenario, trajectory: Trajectory) -> int | None:
    """The reference text step that says the agent's last message to the user (None: it says none)."""
    owned = owners(trajectory.messages, script(scenario.reference))
    closing = next((message for message in reversed(trajectory.messages)
                    if message.sender is Role.AGENT and message.recipient is Role.USER), None)
    piece = owned.get(closing.index) if closing is not None else None
    return piece.step if piece is not None and piece.call is None else None
