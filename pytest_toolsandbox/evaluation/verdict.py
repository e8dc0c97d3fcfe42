"""The verdict: an item passes when every milestone is reached and no minefield fired.

A milestone is reached at a message when each of its constraints reaches its acceptance level there
(`Constraint.level`): state, call and `contains` constraints with similarity 1.0, a text with a
`floor` with ROUGE-L at or above it, a text whose milestone states facts when they all hold on the
message. Guardrails and order apply as in the similarity mapping. Whether every milestone can be
reached in one order-respecting mapping is the similarity matcher's question asked of "reached"
tables (1 where reached, plus a small similarity bonus for ties; events.py): the optimum's whole
part is the number of milestones reached, so the same exact search answers it. When the
similarity mapping already reaches every milestone (the usual case for a good agent), no search runs.

For a milestone that is not reached, the explanation takes the other milestones where the verdict put
them. Where its constraints hold together, it names the guarded tables that changed and since when, or
the reached milestone it would have to precede or follow; where they never hold together, the first
constraint that holds nowhere, on the closest message (the one the similarity mapping chose).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import networkx as nx
import numpy as np

from pytest_toolsandbox.evaluation.constraints import INITIAL, Constraint
from pytest_toolsandbox.evaluation.events import GUARDRAILS, EventMatcher
from pytest_toolsandbox.evaluation.facts import explain_missing, missing_fact
from pytest_toolsandbox.evaluation.matcher import align
from pytest_toolsandbox.evaluation.order import order_graph
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
    done = {position for position, level in enumerate(reached) if level >= 1.0}
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
                missing, closest, fact = _explain(matcher, acceptance, position, mapped, positions, done)
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


def _explain(matcher: EventMatcher, acceptance: Acceptance, position: int, mapped: Sequence[int],
             anchors: Sequence[int], reached: Collection[int]) -> Explained:
    """What fails for the milestone at `position`, with the other milestones where the verdict put them
    (`anchors`; those it reached are `reached`). Where its constraints hold together, a guardrail or the
    order is to blame (`_explain_met`); where each holds but never on one message, where each does; else
    the first constraint that holds nowhere, read where the similarity mapping put the milestone
    (`mapped`; a text on the closest message from its sender)."""

    def positions_of(names: Iterable[str]) -> list[int]:
        return [anchors[matcher.ids[name]] for name in names]

    met = np.flatnonzero(_own_axis(matcher.reached_table(position, acceptance),
                                   positions_of(matcher.specs[position].refs)) >= 1.0)
    if met.size:
        return _explain_met(matcher, position, met.tolist(), anchors, reached), None, None
    spec, state = matcher.specs[position], matcher.state

    def holds(constraint: Constraint) -> np.ndarray:
        return _own_axis(acceptance(constraint), positions_of(constraint.depends_on))

    held = {constraint: holds(constraint) for constraint in spec.constraints}
    never = [constraint for constraint, where in held.items() if not where.any()]
    if not never:
        apart = ", ".join(f"{constraint.label} at message {state.message_index(int(np.argmax(where)))}"
                          for constraint, where in held.items())
        return f"its constraints hold apart ({apart}), never on one message", None, None
    constraint = never[0]
    at = (mapped[position], *positions_of(constraint.depends_on))
    if constraint.is_text:
        sender, recipient = constraint.rows[0]["sender"], constraint.rows[0]["recipient"]  # "agent", "user"
        if not acceptance.sent_by(constraint).any():
            return f"the {sender} sent no message to the {recipient}", None, None
        return _explain_text(matcher, constraint, _closest(matcher, acceptance, constraint, at))
    value = float(matcher.scorer.values(constraint)[at])
    return (f"{constraint.label} not met at the closest message {state.message_index(at[0])} "
            f"(similarity {value:.3g})"), None, None


def _own_axis(table: np.ndarray, references: Sequence[int]) -> np.ndarray:
    """`table` along its own axis, with each reference axis taken at the position given."""
    index: tuple[slice | int, ...] = (slice(None), *references)
    return table[index]


def _explain_met(matcher: EventMatcher, position: int, met: Sequence[int], anchors: Sequence[int],
                 reached: Collection[int]) -> str:
    """Why a milestone whose constraints hold at the positions `met` is not reached: a guardrail broken at
    each of them (named at the first: which tables changed since which milestone), else the order, named
    by a milestone the verdict reached (`reached`) on the wrong side of it, before or after it directly or
    through others; else a milestone reached after it that needs it elsewhere (a guardrail or `since`)."""
    spec, state = matcher.specs[position], matcher.state
    against = [(name, 0 if name == INITIAL else anchors[matcher.ids[name]]) for name in spec.guard_against]
    breaches = [next(filter(None, (_changed(matcher, position, since, at, name) for name, since in against)), None)
                for at in met]
    if None not in breaches:
        return f"guardrails: {breaches[0]}"
    at = met[breaches.index(None)]
    order = order_graph(matcher.specs)
    before, after = (sorted(matcher.ids[name] for name in linked(order, spec.name))
                     for linked in (nx.ancestors, nx.descendants))
    wrong_side = [f"before {_placed(matcher, other, anchors)}, which it must follow"
                  for other in before if other in reached and anchors[other] > at]
    wrong_side += [f"after {_placed(matcher, other, anchors)}, which must follow it"
                   for other in after if other in reached and anchors[other] < at]
    return f"holds at message {state.message_index(at)}, " + next(
        iter(wrong_side), "where a milestone reached after it would no longer hold")


def _placed(matcher: EventMatcher, position: int, anchors: Sequence[int]) -> str:
    """A milestone and the message the verdict put it on, for a failure message: `checked (message 4)`."""
    return f"{matcher.specs[position].name} (message {matcher.state.message_index(anchors[position])})"


def _changed(matcher: EventMatcher, position: int, since: int, at: int, name: str) -> str | None:
    """The guarded tables of the milestone that differ between positions `since` (where the verdict put
    `name`, the milestone it is guarded against) and `at`, said for a failure message; None if none."""
    state = matcher.state
    tables = [str(table) for table in matcher.specs[position].guarded
              if (keys := state.guard_keys((table,)))[since] != keys[at]]
    start = "the start" if name == INITIAL else f"{name} (message {state.message_index(since)})"
    return f"{', '.join(tables)} changed between {start} and message {state.message_index(at)}, where it holds" \
        if tables else None


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
