"""Text milestones tested like code: their facts, and the example answers that prove them.

A text milestone (`agent_says` / `user_says`) must say what makes its text right — `facts`, a
`contains` / `exact` target, or an explicit ROUGE `floor` — else only the reference's exact wording
would reach it. And it must carry examples: `accept` (natural paraphrases a careful judge counts as
correct) and `reject` (fluent answers close in wording that are wrong). Each example replaces, in the
reference dialogue, the message that reaches the milestone; the dialogue is played in the base
variant and judged as a whole item: every accepted example must pass, every rejected one must fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.result import Evaluation
from pytest_toolsandbox.scenario.milestones import Milestone, TextMatch
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.reference import ReferenceStep
from pytest_toolsandbox.suite.play import play_reference
from pytest_toolsandbox.suite.steps import owners, script
from pytest_toolsandbox.tools.registry import ToolSpec
from pytest_toolsandbox.world.trajectory import Trajectory
from pytest_toolsandbox.world.world import World


@dataclass(frozen=True)
class ExampleProblem:
    """One text milestone that is under-specified, or one example judged the wrong way."""

    milestone: str
    message: str


def _texts(milestone: Milestone) -> list[str | TextMatch]:
    return [*milestone.said("agent_says"), *milestone.said("user_says")]


def states_what_is_right(milestone: Milestone) -> bool:
    """Facts, a `contains` / `exact` target or a ROUGE floor: something other than the exact wording."""
    return milestone.facts is not None or any(
        isinstance(said, TextMatch) and (said.floor is not None or said.match in ("contains", "exact"))
        for said in _texts(milestone)) or milestone.match.get("content") in ("contains", "exact")


def declaration_problems(scenario: Scenario) -> list[ExampleProblem]:
    """Text milestones without facts (or floor), and text milestones without accept / reject examples."""
    problems = []
    for name, milestone in scenario.milestones.items():
        if not _texts(milestone):
            continue
        if not states_what_is_right(milestone):
            problems.append(ExampleProblem(name, (
                f"text milestone {name!r} states neither facts nor a floor, so only the reference's exact wording "
                "reaches it; add `facts:` (e.g. [off, {none: [on, \"couldn't\"]}]) with `accept:` / `reject:` "
                "examples, or give the text an explicit ROUGE floor: `{text: ..., floor: 0.8}`")))
        missing = [kind for kind in ("accept", "reject") if not getattr(milestone, kind)]
        if missing and states_what_is_right(milestone):
            problems.append(ExampleProblem(name, (
                f"text milestone {name!r} has no {' and no '.join(missing)} examples; add `accept:` (correct "
                "paraphrases, which must pass) and `reject:` (fluent wrong answers, which must fail)")))
    return problems


def _replaced(reference: Sequence[ReferenceStep], step: int, text: str) -> list[ReferenceStep]:
    original = reference[step]
    replacement = ReferenceStep(agent=text) if original.agent is not None else ReferenceStep(user=text)
    return [replacement if position == step else other for position, other in enumerate(reference)]


def _why(evaluation: Evaluation, milestone: str) -> str:
    """What kept an accepted example from passing: its milestone's missing fact first."""
    verdict = evaluation.verdict
    if verdict is None:
        return f"similarity {evaluation.score:.4g}"
    reasons = [v.missing or "not reached" for v in verdict.milestones if v.name == milestone and not v.reached]
    return "; ".join(reasons or verdict.reasons()) or f"similarity {evaluation.score:.4g}"


def text_steps(scenario: Scenario, base: tuple[Trajectory, Evaluation]) -> dict[str, int | None]:
    """Per milestone, the reference text step whose message reaches it (None: a call reaches it, or nothing)."""
    trajectory, evaluation = base
    owned = owners(trajectory.messages, script(scenario.reference))
    steps: dict[str, int | None] = {}
    for outcome in evaluation.milestones:
        piece = owned.get(outcome.index) if outcome.index is not None else None
        steps[outcome.name] = piece.step if piece is not None and piece.call is None else None
    return steps


def judge_in_place(scenario: Scenario, registry: Mapping[str, ToolSpec], step: int, text: str,
                   start: World | None = None) -> Evaluation:
    """The reference dialogue with text step `step` saying `text` instead, played and judged (base variant)."""
    played = play_reference(scenario, registry, "base", _replaced(scenario.reference, step, text), start)
    return evaluate(scenario, played, registry)


def example_problems(scenario: Scenario, registry: Mapping[str, ToolSpec], base: tuple[Trajectory, Evaluation],
                     start: World | None = None) -> list[ExampleProblem]:
    """Play every example in place of the reference message that reaches its milestone (base variant)."""
    steps = text_steps(scenario, base)
    problems = []
    for name, milestone in scenario.milestones.items():
        examples = [(True, text) for text in milestone.accept] + [(False, text) for text in milestone.reject]
        if not examples:
            continue
        step = steps.get(name)
        if step is None:
            problems.append(ExampleProblem(name, f"milestone {name!r}: no reference text step reaches it, so its "
                                           "examples cannot replace one; check the reference dialogue"))
            continue
        for should_pass, text in examples:
            judged = judge_in_place(scenario, registry, step, text, start)
            passed = judged.passed(scenario.explicit_threshold)
            if passed and not should_pass:
                problems.append(ExampleProblem(name, f"milestone {name!r}: rejected example {text!r} passes "
                                               f"(similarity {judged.score:.4g}); add a fact it breaks, e.g. "
                                               "{none: [the wrong word]}"))
            elif should_pass and not passed:
                problems.append(ExampleProblem(name, f"milestone {name!r}: accepted example {text!r} fails: "
                                               f"{_why(judged, name)}"))
    return problems
