"""Mutants an imported base's facts are not expected to judge the mutant's way, and why: the importer's rules.

`validate` writes wrong and right answers from every text milestone (suite/mutants.py); a scenario's
author waives the few a careful judge would judge otherwise, with a reason, under `waive:`. An imported
file is generated, so it carries no waivers: they are rules of the importer, kept here and keyed by
the kind of mutant and what the facts derived for it say (importer/answer_facts.py), never by base.
`validate` consults them for files whose reference is synthesised.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pytest_toolsandbox.evaluation.facts import AnyOf, Coordinates, Fact, NoneOf, Number, Phrase
from pytest_toolsandbox.importer.answer_facts import CONFIRMS
from pytest_toolsandbox.scenario.milestones import Milestone, TextMatch
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.suite.mutants import Mutant

_IDENTIFIER = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
_FORMS = ("international format", "national format", "E.164 format", "thousands separator", "decimal places",
          "spelled out", "24-hour clock", "12-hour clock", "day before month", "numeric date")
"""Right answers that write a value in another form."""


def _value(mutant: Mutant) -> str:
    """The value a mutant changes: `kind: value → other` gives `value`."""
    return mutant.id.split(": ", 1)[-1].split(" → ")[0].split(" ↔ ")[0]


def _confirms(milestone: Milestone) -> bool:
    return any(isinstance(fact, AnyOf) and tuple(fact.any) == CONFIRMS for fact in milestone.facts or [])


def _optional_only(facts: list[Fact]) -> bool:
    return all(isinstance(fact, NoneOf) or getattr(fact, "required", True) is False for fact in facts)


def _done_claim(scenario: Scenario, milestone: Milestone, mutant: Mutant) -> str | None:
    confirmation = _confirms(milestone) or (milestone.facts is not None and _optional_only(milestone.facts))
    if mutant.id == "done claim" and confirmation:
        return ("the milestones before this confirmation prove the action in the world, so a bare success claim "
                "confirms it (issue: a bare \"Done.\" stays acceptable); a denial or a wrong detail still fails")
    return None


def _contains_target(scenario: Scenario, milestone: Milestone, mutant: Mutant) -> str | None:
    targets = [said.text for said in milestone.said("agent_says") if isinstance(said, TextMatch)
               and said.match == "contains"]
    if not mutant.wrong and mutant.id.split(":")[0] in _FORMS and any(_value(mutant) in text for text in targets):
        return ("the reference's own milestone asks for this exact text (a `contains` target), and the import "
                "keeps the reference's constructs; the value's other forms are accepted where it sets no such target")
    return None


def _code_not_amount(scenario: Scenario, milestone: Milestone, mutant: Mutant) -> str | None:
    codes = [fact.phrase for fact in milestone.facts or [] if isinstance(fact, Phrase) and fact.phrase.isdigit()]
    if mutant.id.startswith("thousands separator") and _value(mutant) in codes:
        return "a postal code is a code, not an amount: nobody writes it with a thousands separator"
    return None


def _identifier(scenario: Scenario, milestone: Milestone, mutant: Mutant) -> str | None:
    reference = next((step.agent for step in scenario.reference if step.agent and _value(mutant) in step.agent), "")
    inside = any(_value(mutant) in found.group() for found in _IDENTIFIER.finditer(reference))
    if mutant.id.startswith("unchecked value") and inside:
        return ("a digit of a record id the user gave, repeated in a confirmation: the state milestone proves which "
                "record changed, and a confirmation need not quote the id (facts do not check what may be left out)")
    return None


def _user_value_swapped(scenario: Scenario, milestone: Milestone, mutant: Mutant) -> str | None:
    given = [fact for fact in milestone.facts or [] if isinstance(fact, Coordinates) and not fact.required]
    swapped = re.fullmatch(r"swapped values: (\S+) ↔ (\S+)", mutant.id)
    if swapped and given and any(abs(float(value) - abs(axis)) < 1e-9 for value in swapped.groups()
                                 if re.fullmatch(r"-?\d+(?:\.\d+)?", value) for fact in given
                                 for axis in fact.coordinates):
        return ("the swap moves the coordinates the user asked about, which the answer need not restate (they are "
                "the question, not the answer); the address is checked where it stands")
    return None


def _no_phone_left(scenario: Scenario, milestone: Milestone, mutant: Mutant) -> str | None:
    changed = re.fullmatch(r"transposed digits: (\+\d+) → (\+0\d*)", mutant.id)
    optional = [fact for fact in milestone.facts or [] if getattr(fact, "phone", None) is not None
                and getattr(fact, "required", True) is False]
    if changed and optional:
        return ("the transposition turns the user's own number into '+0…', which no phone format reads as a number; "
                "the answer need not restate the user's number, so nothing it states is wrong")
    return None


def _within_tolerance(scenario: Scenario, milestone: Milestone, mutant: Mutant) -> str | None:
    """A digit changed within the tolerance a number fact grants: the rounding a person may apply."""
    changed = re.fullmatch(r"(?:unchecked value, )?(?:transposed digits|neighbouring digit): (\S+) → (\S+)", mutant.id)
    if changed is None or not all(re.fullmatch(r"-?[\d,]+(?:\.\d+)?", value) for value in changed.groups()):
        return None
    before, after = (float(value.replace(",", "")) for value in changed.groups())
    numbers = [fact for other in scenario.milestones.values() for fact in other.facts or [] if isinstance(fact, Number)]
    final = scenario.final_answer.facts if scenario.final_answer else []
    numbers += [fact for fact in final if isinstance(fact, Number)]
    if any(abs(before - fact.number) <= fact.tolerance and abs(after - fact.number) <= fact.tolerance + 1e-9
           for fact in numbers):
        return ("the changed value is still within the tolerance the derived fact grants (half a unit of the "
                "reference's last place, or the spread between the reference's value and the tool's): a rounding a "
                "careful judge accepts")
    return None


def _confirmed_later(scenario: Scenario, milestone: Milestone, mutant: Mutant) -> str | None:
    later = [other for other in scenario.milestones.values()
             if _confirms(other) and other is not milestone and _after(scenario, other, milestone)]
    if mutant.id in ("silence", "negation") and _confirms(milestone) and later:
        return ("a later confirmation in the reference's dialogue confirms this action too: the world milestones prove "
                "both, and a confirmation is judged by what it states and that it denies nothing")
    return None


def _after(scenario: Scenario, later: Milestone, earlier: Milestone) -> bool:
    pending, seen = list(later.after), set()
    while pending:
        name = pending.pop()
        if name in seen or name not in scenario.milestones:
            continue
        seen.add(name)
        if scenario.milestones[name] is earlier:
            return True
        pending += scenario.milestones[name].after
    return False


RULES: tuple[Callable[[Scenario, Milestone, Mutant], str | None], ...] = (
    _done_claim, _contains_target, _code_not_amount, _identifier, _user_value_swapped, _no_phone_left,
    _within_tolerance, _confirmed_later)


def imported_waiver(scenario: Scenario, milestone: str, mutant: Mutant) -> str | None:
    """Why a careful judge would judge `mutant` of an imported base's `milestone` (or of its final answer,
    `final_answer`) otherwise; None when no rule applies."""
    if scenario.reference_source != "synthesised":
        return None
    if milestone == FINAL_ANSWER and scenario.final_answer is not None:
        found = Milestone.model_construct(facts=scenario.final_answer.facts)  # judged by the same rules
    elif milestone in scenario.milestones:
        found = scenario.milestones[milestone]
    else:
        return None
    return next((reason for rule in RULES if (reason := rule(scenario, found, mutant)) is not None), None)


FINAL_ANSWER = "final_answer"
"""The name validate gives the final answer's mutants (suite/mutation.py)."""
