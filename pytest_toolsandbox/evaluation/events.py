"""Matching compiled milestones (or minefields) against a trajectory.

Builds the matcher's tables from constraint similarities — a milestone's similarity is the
geometric mean of its constraints, times its guardrails as 0/1 factors — runs the exact matcher and
reports, per event, the message it mapped to with the similarity of each constraint there. For
diagnosis it also finds where each event happens when order and guardrails are ignored, so an event
that is in the trajectory but could not be placed (wrong order) is never called "not reached".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pytest_toolsandbox.evaluation.constraints import INITIAL, Constraint, EventSpec
from pytest_toolsandbox.evaluation.factors import align_axes
from pytest_toolsandbox.evaluation.matcher import Guard, MatchProblem, Term, align
from pytest_toolsandbox.evaluation.order import find_order_violations
from pytest_toolsandbox.evaluation.result import EventOutcome
from pytest_toolsandbox.evaluation.similarity import ConstraintScorer
from pytest_toolsandbox.evaluation.state import EpisodeState

GUARDRAILS = "guardrails"

REACHED_TIE_WEIGHT = 0.5
"""Weight of the similarity bonus in the verdict's mapping, split over the events: the bonuses of
all events together stay below 1, the value of reaching one more event."""


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
        self._refs = [tuple(self.ids[name] for name in spec.refs) for spec in self.specs]
        self._tables: dict[int, np.ndarray] = {}

    def constraint_table(self, position: int) -> np.ndarray:
        """Geometric mean of one event's constraints over (own position, one axis per ref), no guardrails.

        Computed once per event (the mapping and the order diagnosis both need it). The product
        starts from the first constraint's values rather than from ones (1.0 × x is x exactly) and
        a single constraint skips the power 1 (x ** 1.0 is x exactly)."""
        if position not in self._tables:
            spec = self.specs[position]
            table = self._product(position, self.scorer.values)
            if len(spec.constraints) > 1:
                table = table ** (1.0 / len(spec.constraints))
            self._tables[position] = table
        return self._tables[position]

    def reached_table(self, position: int, accepted: Callable[[Constraint], np.ndarray]) -> np.ndarray:
        """1.0 where every constraint of the event reaches its acceptance level (`accepted` gives a
        constraint's 0/1 table, shaped like its similarities), else 0.0; no guardrails."""
        return self._product(position, accepted)

    def _product(self, position: int, values_of: Callable[[Constraint], np.ndarray]) -> np.ndarray:
        """The product of the event's constraint tables, over (own position, one axis per ref)."""
        spec = self.specs[position]
        axes = (position, *self._refs[position])
        table = None
        for constraint in spec.constraints:
            values = values_of(constraint)
            own = (position, *(self.ids[name] for name in constraint.depends_on))
            aligned = values if own == axes else align_axes(values, own, axes)
            table = aligned if table is None else table * aligned
        assert table is not None  # every event has at least one constraint (checked when compiled)
        return table  # full size on every axis: each axis is some constraint's own, at full size

    def unordered_best(self) -> list[tuple[float, int]]:
        """Per event: its best constraint similarity anywhere (order and guardrails ignored) and the
        earliest position reaching it."""
        best = []
        for position in range(len(self.specs)):
            table = self.constraint_table(position)
            per_position = table.reshape(self.state.size, -1).max(axis=1)
            at = int(np.argmax(per_position))
            best.append((float(per_position[at]), at))
        return best

    def problem(self, accepted: Callable[[Constraint], np.ndarray] | None = None) -> MatchProblem:
        """The matcher's problem over similarities, or with `accepted` over "reached" tables: 1 where
        the event is reached plus a tie-breaking bonus below 1/count for its similarity there, 0
        elsewhere. The optimum reaches as many events as possible and, among such mappings, prefers
        the one closest to the similarity mapping (so the events reported as not reached are the
        ones that really lack something, not an arbitrary pick among equal counts)."""
        terms, guards = [], []
        bonus = REACHED_TIE_WEIGHT / max(1, len(self.specs))
        for position, spec in enumerate(self.specs):
            refs = self._refs[position]
            axes = (position, *refs)
            table = self.constraint_table(position)
            if accepted is not None:
                table = self.reached_table(position, accepted) * (1.0 + bonus * table)
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

    def with_order(self, outcomes: list[EventOutcome]) -> list[EventOutcome]:
        """Milestone outcomes with order violations recorded (see evaluation/order.py)."""
        best = [(similarity, self.state.message_index(at)) for similarity, at in self.unordered_best()]
        return find_order_violations(self.specs, outcomes, best)

