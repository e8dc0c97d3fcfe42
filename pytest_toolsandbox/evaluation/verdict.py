"""The verdict: an item passes when every milestone is reached and no minefield fired.

A milestone is reached at a message when each of its constraints reaches its acceptance level there
(`Constraint.level`): state, call and `contains` constraints with similarity 1.0, a text with a
`floor` with ROUGE-L at or above it, a text whose milestone states facts when they all hold on the
message. Guardrails and order apply as in the similarity mapping. Whether every milestone can be
reached in one order-respecting mapping is the similarity matcher's question asked of "reached"
tables (1 where reached, plus a small similarity bonus for ties; events.py): the optimum's whole
part is the number of milestones reached, so the same exact search answers it. When the
similarity mapping already reaches every milestone (the usual case for a good agent), no search runs.

For a milestone that is not reached, the explanation looks at the message the similarity mapping
chose (the closest one) and names the first constraint, fact or guardrail that fails there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pytest_toolsandbox.evaluation.constraints import INITIAL, Constraint
from pytest_toolsandbox.evaluation.events import GUARDRAILS, EventMatcher
from pytest_toolsandbox.evaluation.facts import explain_missing, missing_fact
from pytest_toolsandbox.evaluation.matcher import align
from pytest_toolsandbox.evaluation.result import EventOutcome, MilestoneVerdict, Verdict

LEVEL_SLACK = 1e-9
"""Similarities are floats: "1.0" is reached by anything this close to it."""

_QUOTED = 160
"""Characters of the closest message quoted in a failure message."""


def quote(text: str) -> str:
    """The message quoted, scrubbed of secrets before it is cut (a cut key would escape the report's scrub)."""
    from pytest_toolsandbox.recording.secrets import scrub_text

    text = " ".join(scrub_text(text).split())
    return f'"{text if len(text) <= _QUOTED else text[:_QUOTED - 1] + "…"}"'


class Acceptance:
    """Per constraint, a 0/1 table (shaped like its similarities): 1.0 where it reaches its level."""

    def __init__(self, matcher: EventMatcher) -> None:
        self.matcher = matcher
        self.state = matcher.state
        self._cache: dict[Constraint, np.ndarray] = {}

    def __call__(self, constraint: Constraint) -> np.ndarray:
        if constraint not in self._cache:
            self._cache[constraint] = self._compute(constraint)
        return self._cache[constraint]

    def _compute(self, constraint: Constraint) -> np.ndarray:
        values = self.matcher.scorer.values(constraint)
        if not constraint.is_text:
            return (values >= 1.0 - LEVEL_SLACK).astype(float)
        held = self.sent_by(constraint)
        if constraint.facts:  # only the sender's messages are read: tool results hold no answer
            contents = self.state.log.columns["content"]
            for position, content in enumerate(contents):
                if held[position]:
                    held[position] = content is not None and missing_fact(
                        content, constraint.facts, constraint.context) is None
        held = held.reshape(held.shape + (1,) * (values.ndim - 1))
        if constraint.level > 0.0:
            held = held & (values >= constraint.level - LEVEL_SLACK)
        return np.broadcast_to(held, values.shape).astype(float)

    def sent_by(self, constraint: Constraint) -> np.ndarray:
        """Positions whose message goes from the constraint's sender to its recipient."""
        log, row = self.state.log, constraint.rows[0]
        pairs = zip(log.columns["sender"], log.columns["recipient"], strict=True)
        sent = [sender == row["sender"] and recipient == row["recipient"] for sender, recipient in pairs]
        return np.array(sent + [False] * (self.state.size - len(sent)), dtype=bool)


def judge(matcher: EventMatcher, outcomes: Sequence[EventOutcome], minefields: Sequence[EventOutcome]) -> Verdict:
    """The verdict of a trajectory, given the similarity mapping's milestone and minefield outcomes."""
    fired = [outcome.name for outcome in minefields if outcome.similarity > 0.0]
    if not matcher.specs:
        return Verdict(passed=not fired, fired=fired)
    acceptance = Acceptance(matcher)
    state = matcher.state
    mapped = tuple(state.size - 1 if o.index is None else o.index - state.first for o in outcomes)
    positions = mapped
    reached: Sequence[float] = [float(_reached_where_mapped(matcher, acceptance, position, outcome, mapped))
                                for position, outcome in enumerate(outcomes)]
    if min(reached) < 1.0:  # ≥ 1 where reached (1 plus a similarity bonus), else 0
        alignment = align(matcher.problem(acceptance))
        positions, reached = alignment.positions, alignment.similarities
    verdicts = []
    for position, spec in enumerate(matcher.specs):
        if reached[position] >= 1.0:
            verdicts.append(MilestoneVerdict(name=spec.name, reached=True,
                                             index=state.message_index(positions[position])))
        else:
            order = outcomes[position].order
            if order is not None and _reached_at(matcher, acceptance, position, order.found_at):
                missing, closest, fact = f"out of order: {order.describe()}", None, None
            else:
                missing, closest, fact = _explain(matcher, acceptance, position, mapped)
            verdicts.append(MilestoneVerdict(name=spec.name, reached=False, missing=missing, closest=closest,
                                             fact=fact))
    return Verdict(passed=not fired and all(v.reached for v in verdicts), milestones=verdicts, fired=fired)


def _reached_where_mapped(matcher: EventMatcher, acceptance: Acceptance, position: int, outcome: EventOutcome,
                          mapped: Sequence[int]) -> bool:
    """Whether the event is reached where the similarity mapping put it (its guardrails as scored there)."""
    if outcome.constraints.get(GUARDRAILS, 1.0) < 1.0:
        return False
    for constraint in matcher.specs[position].constraints:
        at = (mapped[position], *(mapped[matcher.ids[name]] for name in constraint.depends_on))
        if acceptance(constraint)[at] < 1.0:
            return False
    return True


def _reached_at(matcher: EventMatcher, acceptance: Acceptance, position: int, index: int) -> bool:
    """Whether the event is reached at message `index` for some positions of its references (so an
    order violation, not a missing fact, is why it was not placed)."""
    table = matcher.reached_table(position, acceptance)
    return bool(table[index - matcher.state.first].max() >= 1.0)


Explained = tuple[str, str | None, str | None]
"""What failed, the closest message's text (text milestones) and the fact (or floor) it misses."""


def _explain(matcher: EventMatcher, acceptance: Acceptance, position: int, mapped: Sequence[int]) -> Explained:
    """What fails for the milestone at `position` where the similarity mapping put it (`mapped`); a text
    is read on its closest message, and the guardrails are checked where the milestone's texts hold
    (a guardrail broken there zeroes the similarity, so the mapping may have left it anywhere)."""
    spec = matcher.specs[position]
    state = matcher.state
    own = met_at = mapped[position]
    for constraint in spec.constraints:
        at = (own, *(mapped[matcher.ids[name]] for name in constraint.depends_on))
        if constraint.is_text:
            sender, recipient = constraint.rows[0]["sender"], constraint.rows[0]["recipient"]  # "agent", "user"
            if not acceptance.sent_by(constraint).any():
                return f"the {sender} sent no message to the {recipient}", None, None
            at = _closest(matcher, acceptance, constraint, at)
            if acceptance(constraint)[at] < 1.0:
                return _explain_text(matcher, constraint, at)
            met_at = at[0]
        elif acceptance(constraint)[at] < 1.0:
            value = float(matcher.scorer.values(constraint)[at])
            where = state.message_index(own)
            return f"{constraint.label} not met at the closest message {where} (similarity {value:.3g})", None, None
    if spec.guard_against:
        keys = state.guard_keys(spec.guarded)
        against = [0 if name == INITIAL else mapped[matcher.ids[name]] for name in spec.guard_against]
        if any(keys[other] != keys[met_at] for other in against):
            tables = ", ".join(str(table) for table in spec.guarded)
            where = state.message_index(met_at)
            return f"guardrails: the world's {tables} changed where it was met (message {where})", None, None
    return "met only in an order the milestones do not allow", None, None


def _closest(matcher: EventMatcher, acceptance: Acceptance, constraint: Constraint,
             at: tuple[int, ...]) -> tuple[int, ...]:
    """Where a text constraint is read: `at` when its message is from the constraint's sender, else the
    best-scoring message from the sender from there on (or before, when none follows); the latest such
    message when none scores."""
    state = matcher.state
    sent = acceptance.sent_by(constraint)
    if sent[at[0]]:
        return at
    later = sent & (np.arange(state.size) >= at[0])
    candidates = later if later.any() else sent
    per_position = matcher.scorer.values(constraint).reshape(state.size, -1).max(axis=1) * candidates
    return (int(np.argmax(per_position)) if per_position.max() > 0 else int(np.flatnonzero(candidates)[-1]),
            *at[1:])


def _explain_text(matcher: EventMatcher, constraint: Constraint, at: tuple[int, ...]) -> Explained:
    """The failure of a text constraint on the message at `at` (its closest, which it does not reach)."""
    state = matcher.state
    who = constraint.rows[0]["sender"]
    content = state.log.columns["content"][at[0]] or ""
    closest = quote(content)
    lead = f"the closest {who} message {closest}"
    fact = missing_fact(content, constraint.facts, constraint.context)  # None when it states no facts
    if fact is not None:
        why = explain_missing(fact, content, (*constraint.facts, *constraint.context))
        return f"{lead} {why}", content, fact.describe()
    value = float(matcher.scorer.values(constraint)[at])
    target = constraint.rows[0]["content"]
    if constraint.level < 1.0:
        return (f"{lead} scores ROUGE-L {value:.3f}, under the floor {constraint.level:g}", content,
                f"reach ROUGE-L {constraint.level:g}")
    if constraint.measures["content"].binary:
        return f'{lead} does not match "{target}" ({constraint.label})', content, None
    return (f'{lead} is not the reference wording "{target}" (ROUGE-L {value:.3f}; the milestone states no '
            "facts, so only the exact wording is reached)"), content, None
