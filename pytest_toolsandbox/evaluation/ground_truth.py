"""ToolTalk-style metrics: the agent's calls against the calls of the scenario's reference dialogue.

The ground truth is every call of the reference dialogue that succeeds when the reference is
played (a call the reference makes only to show a failure, like sending with cellular off, is not
required). A prediction matches a ground-truth call of the same tool when it succeeded and
- for an action tool (side effects): its arguments agree with the reference's (free text by ROUGE-L),
- for any other tool: it returned the same result (how it asked does not matter, what it learnt does).
Each ground-truth call is matched at most once (maximum bipartite matching, order ignored).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from pytest_toolsandbox.evaluation.calls import AgentCall, agent_calls, arguments_agree
from pytest_toolsandbox.evaluation.memo import ContentCache
from pytest_toolsandbox.evaluation.result import GroundTruthMetrics
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.tools.registry import ToolSpec


@dataclass(frozen=True)
class ReferenceCall:
    """One successful call of the reference dialogue: what was called, with what, and what came back."""

    tool: str
    arguments: dict[str, Any]
    result: Any
    result_json: str = field(init=False, compare=False, repr=False)
    """The result as calls are compared by it (canonical JSON), written once per reference call."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "result_json", _result_json(self.result))


_REFERENCE_CACHE: ContentCache[tuple[tuple[ToolSpec, ...], tuple[ReferenceCall, ...]]] = ContentCache()
"""The reference calls by scenario content and registry, each kept with the tools it was played with."""


def reference_calls(scenario: Scenario, registry: Mapping[str, ToolSpec],
                    key: str | None = None) -> tuple[ReferenceCall, ...]:
    """The successful calls of the reference dialogue, played once per scenario content (`key`:
    the scenario's JSON when the caller has it already) and registry. The registry is keyed by its tools'
    identities, which stay unique while the entry keeps those tools alive."""

    def play() -> tuple[tuple[ToolSpec, ...], tuple[ReferenceCall, ...]]:
        from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
        from pytest_toolsandbox.running.episode import run_episode

        played = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario), registry=registry)
        return tuple(registry.values()), tuple(
            ReferenceCall(call.tool, json.loads(call.raw_arguments or "{}"), call.trace.result)
            for call in agent_calls(played) if call.succeeded and call.tool is not None and call.trace is not None)

    tools = tuple((name, id(spec)) for name, spec in registry.items())
    return _REFERENCE_CACHE.get((key if key is not None else scenario.model_dump_json(), tools), play)[1]


def _result_json(result: Any) -> str:
    return json.dumps(result, sort_keys=True, default=str)


def calls_match(prediction: AgentCall, truth: ReferenceCall, registry: Mapping[str, ToolSpec],
                results: dict[int, str]) -> bool:
    """Whether a prediction counts as the reference call `truth`; `results` caches each
    prediction's result JSON (by message index) across the truths it is compared with."""
    if not prediction.succeeded or prediction.tool != truth.tool or prediction.trace is None:
        return False
    if registry[truth.tool].action:
        return arguments_agree(truth.arguments, prediction.arguments)
    if prediction.index not in results:
        results[prediction.index] = _result_json(prediction.trace.result)
    return results[prediction.index] == truth.result_json


def _matched(edges: Sequence[tuple[int, int]], predictions: int) -> set[int]:
    """The predictions of a maximum matching. When no call has two candidates the matching is
    every edge (the usual case: each call is its own reference call), otherwise Hopcroft-Karp."""
    if len({i for i, _ in edges}) == len(edges) == len({j for _, j in edges}):
        return {i for i, _ in edges}
    graph = nx.Graph()
    graph.add_nodes_from(("p", i) for i in range(predictions))  # the truths' side comes with the edges
    graph.add_edges_from((("p", i), ("t", j)) for i, j in edges)
    matching = nx.bipartite.hopcroft_karp_matching(graph, top_nodes=[("p", i) for i in range(predictions)])
    return {i for kind, i in matching if kind == "p"}


def ground_truth_metrics(predictions: Sequence[AgentCall], truths: Sequence[ReferenceCall],
                         registry: Mapping[str, ToolSpec]) -> GroundTruthMetrics:
    results: dict[int, str] = {}
    edges = [(i, j) for i, prediction in enumerate(predictions)
             for j, truth in enumerate(truths) if calls_match(prediction, truth, registry, results)]
    matched = _matched(edges, len(predictions))
    actions = [i for i, call in enumerate(predictions)
               if call.tool is not None and call.tool in registry and registry[call.tool].action]
    bad = [i for i in actions if i not in matched and predictions[i].succeeded]
    recall = len(matched) / len(truths) if truths else 1.0
    return GroundTruthMetrics(
        precision=len(matched) / len(predictions) if predictions else 1.0,
        recall=recall,
        incorrect_action_rate=len(bad) / len(actions) if actions else 0.0,
        success=recall == 1.0 and not bad,
        matched_calls=len(matched),
        predicted_calls=len(predictions),
        reference_calls=len(truths),
    )


def evaluate_ground_truth(scenario: Scenario, predictions: Sequence[AgentCall],
                          registry: Mapping[str, ToolSpec], key: str | None = None) -> GroundTruthMetrics | None:
    """Metrics against the reference dialogue, or None when the scenario has no reference."""
    if not scenario.reference:
        return None
    return ground_truth_metrics(predictions, reference_calls(scenario, registry, key), registry)

