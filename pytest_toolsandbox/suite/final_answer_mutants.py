"""Answers made for a scenario's `final_answer`: wrong closing messages that must fail, right ones that must pass.

The text milestones' generators (suite/mutants.py) change values where the reference answer states
them. A reference's closing message often states none — an imported reference ends with "Done." —
so the values it leaves out are first written after it ("Done. Details: 5:00 PM."): that text is
itself a right answer ("stated in full"), and the generators change its values in place (the
neighbouring hour or day, another contact, the value with an alternative, other forms of the same
value). Then the final answer's own cases: an inability ("Sorry, I couldn't do that.") and silence
fail; a bare "Done!" fails where a fact asks for something to be said, and must pass where every
fact only forbids (`none`) or checks details the answer need not give (`required: false`): such a
claim misreports nothing (unless a text milestone the closing message reaches asks for more).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from pytest_toolsandbox.evaluation.facts import (
    AnyOf,
    Coordinates,
    Date,
    Duration,
    Fact,
    Name,
    NoneOf,
    Number,
    Phone,
    Phrase,
    Time,
    YesNo,
    parsed_phone,
    words,
    yes_or_no,
)
from pytest_toolsandbox.evaluation.units import written
from pytest_toolsandbox.scenario.final_answer import FinalAnswer
from pytest_toolsandbox.scenario.milestones import Milestone
from pytest_toolsandbox.suite.examples import states_what_is_right
from pytest_toolsandbox.suite.mutants import DONE_CLAIM, Mutant, fact_spans, mutants

INABILITY = "Sorry, I couldn't do that."
"""A closing message that says the task was not done: never a right final answer."""


def _label(fact: Number) -> str:
    labels = [fact.label] if isinstance(fact.label, str) else list(fact.label or [])
    return f"{labels[0]} " if labels else ""


def _phone(value: str) -> str:
    import phonenumbers

    return phonenumbers.format_number(parsed_phone(value), phonenumbers.PhoneNumberFormat.INTERNATIONAL)


def statement(fact: Fact) -> str | None:
    """The fact's value as an answer would write it (None: the fact states no value, e.g. `none`)."""
    if isinstance(fact, Number):
        unit = f" {written(fact.unit)}" if fact.unit else ""
        return f"{_label(fact)}{fact.number:g}{unit}"
    if isinstance(fact, Time):
        clock = datetime.time.fromisoformat(fact.time)
        return f"{(clock.hour - 1) % 12 + 1}:{clock.minute:02d} {'PM' if clock.hour >= 12 else 'AM'}"
    if isinstance(fact, Date):
        return f"{fact.date:%B} {fact.date.day}"
    if isinstance(fact, Phone):
        return _phone(fact.phone)
    if isinstance(fact, Name):
        return fact.name
    if isinstance(fact, Duration):
        return fact.duration
    if isinstance(fact, Coordinates):
        return f"{fact.coordinates[0]:g}, {fact.coordinates[1]:g}"
    if isinstance(fact, Phrase):
        return fact.phrase
    if isinstance(fact, AnyOf):
        return fact.any[0]
    return None


def _unstated(fact: Fact, text: str) -> bool:
    """Whether `text` leaves out the value the fact is about (where the generators would find it)."""
    if isinstance(fact, YesNo):
        return yes_or_no(text) is None
    spans = fact_spans(fact, text)
    return bool(spans) and any(span is None for span in spans)


def stated_in_full(answer: FinalAnswer, reference: str) -> str:
    """The reference's closing message with the values it leaves out written after it (itself when it
    states them all): "Done." → "Done. Details: 5:00 PM, Kenji Watanabe."."""
    missing = [fact for fact in answer.facts if _unstated(fact, reference)]
    answered = next((fact for fact in missing if isinstance(fact, YesNo)), None)
    values = [value for fact in missing if (value := statement(fact)) is not None]
    text = reference.strip()
    if answered is not None:
        text = f"{'Yes' if answered.yes else 'No'}. {text}".strip()
    if values:
        text = f"{text} Details: {', '.join(values)}.".strip()
    return text


def bare_claim_allowed(facts: Sequence[Fact]) -> bool:
    """Whether a bare "Done!" holds these facts: each only forbids words or checks details it need not give."""
    return all(isinstance(fact, NoneOf) or getattr(fact, "required", True) is False for fact in facts)


def _claim_may_stand(answer: FinalAnswer, milestones: Sequence[Milestone]) -> bool:
    """Whether a bare "Done!" in place of the closing message must pass: the final answer allows it, and so
    does every text milestone the closing message reaches (facts that allow it, no text target of its own)."""
    return bare_claim_allowed(answer.facts) and all(
        milestone.facts is not None and bare_claim_allowed(milestone.facts) and states_what_is_right(milestone)
        and all(isinstance(said, str) or (said.floor is None and said.match == "rouge")
                for said in milestone.said("agent_says"))
        for milestone in milestones)


def final_answer_mutants(answer: FinalAnswer, reference: str, contacts: Sequence[str], phones: Sequence[str] = (),
                         milestones: Sequence[Milestone] = ()) -> list[Mutant]:
    """Every mutant of a scenario's final answer, whose reference closing message is `reference` and
    reaches the text `milestones`."""
    full = stated_in_full(answer, reference)
    found = [Mutant("stated in full", full, False)] if full != reference.strip() else []
    generated: list[Mutant | None] = list(mutants(answer, full, contacts, phones))
    if full != reference.strip():  # deny what the reference says, not the details written after it
        denials = {mutant.id: mutant for mutant in mutants(answer, reference, contacts, phones)}
        generated = [denials.get("negation") if mutant and mutant.id == "negation" else mutant for mutant in generated]
    for mutant in filter(None, generated):
        if mutant.id == "negation" and not words(mutant.text.removeprefix("It is not true that")):
            continue  # "Done." denied is no sentence; the inability below says it
        if mutant.id == "done claim":
            mutant = Mutant(mutant.id, DONE_CLAIM, not _claim_may_stand(answer, milestones))
        found.append(mutant)
    if INABILITY not in {mutant.text for mutant in found}:
        found.append(Mutant("inability", INABILITY, True))
    return found
