"""Telling "out of order" from "never happened" for milestones that scored 0.

When the best mapping leaves a milestone at similarity 0, its event may still be in the trajectory,
only on the wrong side of a milestone the DAG orders it with (the agent removed the contact before
searching for it). Every missed milestone is checked against where its constraints hold when order
and guardrails are ignored: if that message lies before a prerequisite's mapped message, or after a
successor's, the outcome records the violation (diagnosis code ORDER) instead of "not reached".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import networkx as nx

from pytest_toolsandbox.evaluation.constraints import EventSpec
from pytest_toolsandbox.evaluation.result import EventOutcome, OrderViolation


def order_graph(specs: Sequence[EventSpec]) -> nx.DiGraph:
    """The milestones by name, with an edge from each to those that must follow it (`after`, references)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(spec.name for spec in specs)
    graph.add_edges_from((other, spec.name) for spec in specs for other in (*spec.after, *spec.refs))
    return graph


def _violation(name: str, found_at: int, graph: nx.DiGraph,
               outcomes: dict[str, EventOutcome]) -> OrderViolation | None:
    """The related milestone that keeps the event at `found_at` out of the mapping, nearest first;
    milestones that matched something are preferred as evidence."""
    candidates: list[tuple[bool, int, str, int, Literal["prerequisite", "successor"]]] = []
    for other in nx.ancestors(graph, name):
        at = outcomes[other].index
        if at is not None and at > found_at:
            candidates.append((outcomes[other].similarity <= 0.0, at - found_at, other, at, "prerequisite"))
    for other in nx.descendants(graph, name):
        at = outcomes[other].index
        if at is not None and at < found_at:
            candidates.append((outcomes[other].similarity <= 0.0, found_at - at, other, at, "successor"))
    if not candidates:
        return None
    _, _, other, at, relation = min(candidates)
    return OrderViolation(found_at=found_at, other=other, other_at=at, relation=relation)


def find_order_violations(specs: Sequence[EventSpec], outcomes: Sequence[EventOutcome],
                          best: Sequence[tuple[float, int]]) -> list[EventOutcome]:
    """`outcomes` with `order` set on each missed milestone whose event is out of order.

    `best` holds, per event, its best constraint similarity ignoring order and guardrails and the
    earliest message index reaching it.
    """
    graph: nx.DiGraph | None = None  # built only when some milestone needs checking (rarely)
    by_name = {outcome.name: outcome for outcome in outcomes}
    updated = []
    for outcome, (similarity, found_at) in zip(outcomes, best, strict=True):
        violation = None
        if outcome.similarity <= 0.0 and similarity > 0.0:
            graph = graph if graph is not None else order_graph(specs)
            violation = _violation(outcome.name, found_at, graph, by_name)
        updated.append(outcome.model_copy(update={"order": violation}) if violation else outcome)
    return updated
