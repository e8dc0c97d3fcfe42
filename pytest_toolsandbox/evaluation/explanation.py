"""Insufficient information means an explanation: what the verdict asks of an agent that must decline.

An `insufficient_information` scenario has no milestone to reach — the task cannot be done — so
milestones and minefields alone pass an agent that stays silent, claims success or invents an answer.
The verdict therefore also asks for what a careful human judge would: a message to the user that
says the task cannot be done and names what is missing (one of the scenario's `missing` entries: the
tool or the information it lacks), no message that claims success, and a world the agent left as it
found it (tables no milestone constrains). The similarity score is untouched: it stays the paper's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nltk.stem.porter import PorterStemmer

from pytest_toolsandbox.evaluation.clauses import layout
from pytest_toolsandbox.evaluation.diagnosis import claims_change
from pytest_toolsandbox.evaluation.facts import has_phrase, words
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.tables import WORLD_TABLES
from pytest_toolsandbox.world.trajectory import Trajectory

INSUFFICIENT = "insufficient_information"

CANNOT = ("can't", "cannot", "can not", "couldn't", "could not", "unable", "not able", "no way", "don't have",
          "do not have", "doesn't have", "don't know", "do not know", "not available", "isn't available",
          "unavailable", "no access", "not possible", "impossible", "won't be able", "without", "need",
          "needs", "only", "isn't possible", "not supported", "haven't", "won't", "no control", "no tool", "no tools",
          "no means", "not equipped", "lack", "lacks")
"""Phrases that say the task cannot be done (as it stands): inability, lack, a precondition. Each is only half
of an explanation (it must also name what is missing), so a phrase here cannot pass a bare refusal."""

_SUCCESS = ("done", "taken care", "all set", "everything is set", "here you go", "here it is", "completed")
"""Success claims that are not a past-tense change (those are `claims_change`)."""

_NOTHING = frozenset({"no", "nothing", "none", "neither"})
"""Words that, opening a clause, say no change was made: "no message was sent", "nothing has been changed"."""


def claims_success(text: str) -> bool:
    """Whether some clause of `text` says the task was done; a clause that also says what cannot be done
    ("it can't be done", "I haven't sent it") or that nothing was done ("no message was sent") is not a
    claim, nor are quoted words (a message read out). Clauses and quotations are the facts' (clauses.py),
    so "I've sent it, which you can't undo" claims in its first clause."""
    spans = layout(text)
    for start, end in spans.clauses:
        clause = spans.plain[start:end]
        opening = next(iter(words(clause)), "")
        if any(has_phrase(clause, phrase) for phrase in CANNOT) or has_phrase(clause, "not") or opening in _NOTHING:
            continue
        if claims_change(clause) or any(has_phrase(clause, phrase) for phrase in _SUCCESS):
            return True
    return False


_STEMMER = PorterStemmer()


def _stems(text: str) -> tuple[str, ...]:
    return tuple(_STEMMER.stem(word) for word in words(text))


def names(text: str, thing: str) -> bool:
    """Whether `text` names `thing` in any inflection: a scenario lists "stock price", an agent says "I can't
    look up stock prices" (Porter stems, word by word and in order)."""
    wanted, said = _stems(thing), _stems(text)
    return bool(wanted) and any(said[start:start + len(wanted)] == wanted for start in range(len(said)))


_MARKUP = re.compile(r"<(\w+)>.*?</\1>|```.*?```|^\s*[{\[].*$", re.DOTALL | re.MULTILINE)
"""Tagged blocks, code fences and lines that open a JSON value: what a model pastes (its tool list, a call it
meant to make), not what it says to the user."""


def prose(text: str) -> str:
    """`text` without pasted markup, so a tool description a model echoes ("the time elapsed between …")
    cannot name what is missing on the agent's behalf."""
    return _MARKUP.sub(" ", text)


def explains(text: str, missing: Sequence[str]) -> bool:
    """Whether the prose of `text` says the task cannot be done and names one of the `missing` things (any,
    when the scenario lists none)."""
    said = prose(text)
    if not any(has_phrase(said, phrase) for phrase in CANNOT):
        return False
    return not missing or any(names(said, thing) for thing in missing)


def _normalised(text: str) -> str:
    return " ".join(text.casefold().split())


def unexplained(scenario: Scenario, trajectory: Trajectory) -> str | None:
    """Why the agent's side of an insufficient-information episode falls short (None when it does not)."""
    if INSUFFICIENT not in scenario.categories:
        return None
    said_by_user = {_normalised(m.content) for m in trajectory.messages if m.sender is Role.USER}
    to_user = [m.content for m in trajectory.messages
               if m.sender is Role.AGENT and m.recipient is Role.USER and m.content.strip()]
    claims = [text for text in to_user if claims_success(text)]
    if claims:
        return f"the agent claims success in an insufficient-information task: {_short(claims[0])}"
    own = [text for text in to_user if _normalised(text) not in said_by_user]  # the user's words are not its own
    if not any(explains(text, scenario.missing) for text in own):
        what = f" and names what is missing ({', '.join(scenario.missing)})" if scenario.missing else ""
        if not own:
            return f"the agent never explained to the user that the task cannot be done{what}"
        return f"no agent message says that the task cannot be done{what}"
    constrained = {table for milestone in scenario.milestones.values() for table in milestone.constrained_tables()}
    changed = [str(table) for table in WORLD_TABLES if table not in constrained
               and (snapshots := trajectory.snapshots.get(str(table))) and snapshots[0].rows != snapshots[-1].rows]
    if changed:
        return f"the agent changed the world ({', '.join(changed)}) in a task it cannot do"
    return None


def _short(text: str, width: int = 120) -> str:
    text = " ".join(text.split())
    return f'"{text if len(text) <= width else text[:width - 1] + "…"}"'
