"""The final answer of an imported base (`final_answer`): what the agent's last message must state or not say.

Two gaps of the reference's verdict sit at the end of a dialogue, where no text milestone is:

* *the answer the user asked for*: a question ("How much is 2048 USD in CNY", "What is the timestamp
  for Thanksgiving") whose reference ends with a bare "Done.", although a milestone names the tool
  whose result is the answer. The final answer must state that result, in a person's form (a
  timestamp as its date, a number as itself); the witness closes by saying it instead of "Done.";
* *an action confirmed*: where the milestones prove an action in the world (a reminder added, a
  contact changed, a message sent, a setting switched), the last message must not deny it ("I
  couldn't …") nor misreport it (another time, another contact's number, the setting the other way);
  its details need not be given (`required: false`), so a bare "Done." stays acceptable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.evaluation.units import unit_named
from pytest_toolsandbox.importer.answer_sources import (
    DENIALS,
    RELATIONSHIPS,
    Entry,
    Sources,
    action_rows,
    action_settings,
    alternative_states,
    is_number,
    is_question,
    plural,
    setting_phrases,
    state_phrases,
)
from pytest_toolsandbox.scenario.models import Scenario


@dataclass(frozen=True)
class Required:
    """The value the user asked for that the reference never states: its facts, the sentence the
    witness closes with instead of a bare "Done.", and where it came from (for the import summary)."""

    facts: list[Entry]
    closing: str
    found: str


def in_human_form(value: Any, returns: str, sources: Sources) -> tuple[list[Entry], str] | None:
    """A tool result as a person would give it, as facts and as a sentence saying it: a timestamp (the
    tool's documentation says it returns one) as its local date, and its time if given; a number as
    itself, to the cent, a rounding to whole units accepted. None for other results."""
    if is_number(value) and "timestamp" in returns.lower():
        moment = sources.clock.local(float(value))
        return ([{"date": moment.date().isoformat()}, {"time": moment.strftime("%H:%M"), "required": False}],
                f"That is {moment.strftime('%B')} {moment.day}, {moment.year}, at {moment.strftime('%H:%M')}.")
    if is_number(value):
        return [{"number": round(float(value), 2), "tolerance": 0.5}], f"That is {float(value):,.2f}."
    return None


def _target_currency(scenario: Scenario, tool: str) -> str | None:
    """The currency a conversion's result is in: the `to_…currency…` argument a milestone gives the call,
    when our units know it; None for a result that is no conversion."""
    for milestone in scenario.milestones.values():
        for called, arguments in milestone.tool_call_alternatives():
            for name, value in arguments.items():
                if called == tool and name.startswith("to") and "currency" in name and isinstance(value, str):
                    try:
                        unit_named(value)
                    except ValueError:
                        return None
                    return value
    return None


def answer_beyond_reference(scenario: Scenario, sources: Sources, returns: dict[str, str]) -> Required | None:
    """The value the user asked for where the reference states none: the user asks, no text milestone
    answers, and a `tool_call` milestone's tool returns a value (the last such result is the answer).
    `returns` maps each tool to what its documentation says it returns."""
    if not is_question(scenario.user.first_message):
        return None
    if any(milestone.said("agent_says") for milestone in scenario.milestones.values()):
        return None
    called = {tool for milestone in scenario.milestones.values() for tool, _ in milestone.tool_call_alternatives()}
    for tool, result in reversed(sources.results):
        human = in_human_form(result, returns.get(tool, ""), sources) if tool in called else None
        if human is not None:
            entries, closing = human
            allowed = sorted(set(sources.user_numbers()))
            if allowed and "number" in entries[0]:
                entries[0]["allow"] = allowed  # the user's own amount may stand beside the answer
            if "number" in entries[0] and (currency := _target_currency(scenario, tool)):
                entries[0]["unit"] = currency  # 14,827.52 euros is not 14,827.52 yuan
                closing = f"{closing.removesuffix('.')} {currency}."
            return Required(entries, closing, f"{tool} → {result!r}")
    return None


def possible_phone(value: str) -> bool:
    """Whether a number can be dialled as written (the reference's "+1234560987" is one digit short): an
    answer restating it would be read as no phone number, so it makes no detail to check."""
    import phonenumbers

    try:
        return phonenumbers.is_possible_number(phonenumbers.parse(value, None))
    except phonenumbers.NumberParseException:
        return False


def confirmation_details(scenario: Scenario, sources: Sources) -> list[Entry]:
    """For a base whose milestones prove an action in the world: the action's details as facts the
    answer need not state but must state rightly (a reminder's date and time, a contact's or a
    recipient's phone, no other contact's name where the action concerns contacts or messages, the
    setting not the other way), and the denials it must not say. Empty when nothing is proven."""
    names = list(scenario.milestones)
    rows = action_rows(scenario, names)
    settings = action_settings(scenario, names)
    if not rows and not settings:
        return []
    facts: list[Entry] = []
    for moment in (sources.clock.local(stamp) for stamp in sources.times):
        facts += [{"date": moment.date().isoformat(), "required": False},
                  {"time": moment.strftime("%H:%M"), "required": False}]
    facts += [{"phone": value, "required": False} for row in rows for column, value in row.items()
              if "phone_number" in column and isinstance(value, str) and possible_phone(value)]
    facts = list({repr(fact): fact for fact in facts}.values())
    if any("phone_number" in column or "person_id" in column for row in rows for column in row):
        others = sources.other_contacts(rows)
        if others:
            facts.append({"none": others})
    for column, state in settings.items():
        facts.append({"none": state_phrases(column, not state, short=len(settings) == 1)})
    if settings:
        facts.append({"none": alternative_states()})
    if settings and (others := _other_settings(scenario, settings, sources)):
        facts.append({"none": others})
    if others := _other_relationships(rows, sources):
        facts.append({"none": others})
    if others := _other_reminders(scenario, names):
        facts.append({"none": others, "quotes": True})  # a reminder is named by quoting it
    return [*facts, {"none": list(DENIALS)}]


def _other_settings(scenario: Scenario, changed: dict[str, bool], sources: Sources) -> list[str]:
    """The names of the on/off settings the action leaves alone and the user does not speak of: a
    confirmation that names one ("I've turned cellular service off" for wifi) misreports the action. A
    setting's bare first word is left out where it is not the whole name ("low", "location")."""
    others = [column for column, value in scenario.world.settings.items()
              if isinstance(value, bool) and column not in changed]
    phrases = [phrase for column in others for phrase in setting_phrases(column)
               if " " in phrase or "_" not in column]
    return [phrase for phrase in phrases if not sources.user_said(phrase)]


def _other_relationships(rows: list[dict[str, Any]], sources: Sources) -> list[str]:
    """The relationship words a confirmation of a changed relationship must not give: all but the one the
    action sets (and those the user speaks of), singular and plural."""
    targets = {str(row["relationship"]).lower() for row in rows if row.get("relationship")}
    if not targets:
        return []
    return [form for word in RELATIONSHIPS if word not in targets and not sources.user_said(word)
            for form in (word, plural(word))]


def _other_reminders(scenario: Scenario, names: list[str]) -> list[str]:
    """The contents of the reminders an action removes or changes by mistake: every other reminder of the
    starting world. "I removed 'Look for Company SF tickets'" names the wrong one."""
    touched = {str(value) for name in names for kind in ("removed", "updated")
               for row in (getattr(scenario.milestones[name], kind) or {}).get("reminders", [])
               for value in row.values()}
    if not touched:
        return []
    return [str(row["content"]) for row in scenario.world.reminders
            if row.get("content") and not touched & {str(value) for value in row.values()}]
