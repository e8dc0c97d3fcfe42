"""Matching compiled milestones (or minefields) against a trajectory.

Builds the matcher's tables from constraint similarities — a milestone's similarity is the
geometric mean of its constraints, times its guardrails as 0/1 factors — runs the exact matcher and
reports, per event, the message it mapped to with the similarity of each constraint there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pytest_toolsandbox.evaluation.constraints import INITIAL, EventSpec
from pytest_toolsandbox.evaluation.factors import align_axes
from pytest_toolsandbox.evaluation.matcher import Guard, MatchProblem, Term, align
from pytest_toolsandbox.evaluation.result import EventOutcome
from pytest_toolsandbox.evaluation.similarity import ConstraintScorer
from pytest_toolsandbox.evaluation.state import EpisodeState

GUARDRAILS = "guardrails"


def _edges(specs: Sequence[EventSpec]) -> tuple[tuple[int, int], ...]:
    """DAG edges by position (compile_events has checked they form no cycle)."""
    ids = {spec.name: position for position, spec in enumerate(specs)}
    return tuple(sorted({(ids[other], ids[spec.name]) for spec in specs for other in (*spec.after, *spec.refs)}))


class EventMatcher:
    """Similarity tables and the best mapping for one list of events on one trajectory."""

    def __init__(self, specs: Sequence[EventSpec], state: EpisodeState, scorer: ConstraintScorer) -> None:
        self.specs = list(specs)
        self.state = state
        self.scorer = scorer
        self.ids = {spec.name: position for position, spec in enumerate(self.specs)}

    def problem(self) -> MatchProblem:
        terms, guards = [], []
        for position, spec in enumerate(self.specs):
            refs = tuple(self.ids[name] for name in spec.refs)
            axes = (position, *refs)
            table = np.ones((self.state.size,) * len(axes))
            for constraint in spec.constraints:
                values = self.scorer.values(constraint)
                own = (position, *(self.ids[name] for name in constraint.depends_on))
                table = table * align_axes(values, own, axes)
            table = table ** (1.0 / len(spec.constraints))
            keys = self.state.guard_keys(spec.guarded)
            if INITIAL in spec.guard_against:
                table = table * align_axes((keys == keys[0]).astype(float), (position,), axes)
            deps = tuple(self.ids[name] for name in spec.guard_against if name != INITIAL)
            terms.append(Term(table, refs))
            guards.append(Guard(keys, deps))
        return MatchProblem(self.state.size, tuple(terms), tuple(guards), _edges(self.specs))

    def outcomes(self) -> list[EventOutcome]:
        if not self.specs:
            return []
        alignment = align(self.problem())
        positions = alignment.positions
        outcomes = []
        for position, spec in enumerate(self.specs):
            own = positions[position]
            parts: dict[str, float] = {}
            for constraint in spec.constraints:
                values = self.scorer.values(constraint)
                at = (own, *(positions[self.ids[name]] for name in constraint.depends_on))
                parts[constraint.label] = float(values[at])
            if spec.guard_against:
                keys = self.state.guard_keys(spec.guarded)
                against = [0 if name == INITIAL else positions[self.ids[name]] for name in spec.guard_against]
                parts[GUARDRAILS] = float(all(keys[other] == keys[own] for other in against))
            outcomes.append(EventOutcome(name=spec.name, index=self.state.message_index(own),
                                         similarity=alignment.similarities[position], constraints=parts))
        return outcomes

