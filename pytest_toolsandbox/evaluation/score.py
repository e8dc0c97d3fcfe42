"""The public entry: score a trajectory against its scenario.

score = milestone similarity × [minefield similarity == 0], where milestone similarity is the
arithmetic mean of the best mapping's milestone similarities (1 without milestones) and minefield
similarity the same for minefields (0 without minefields). The verdict (evaluation/verdict.py) says
whether every milestone was reached; it decides pass or fail, the score stays the reported measure.
In insufficient-information scenarios the verdict also asks for an explanation to the user
(evaluation/explanation.py), a scenario's `final_answer` facts must hold on the agent's last message to
the user (evaluation/final_answer.py), and a
call to a tool that does not exist counts as an extra minefield hit (the reference aborted the
episode instead; see docs/scoring.md). Under the reference's rules (evaluation/rules.py) such a call,
or any call its agent could not have made, scores 0 with the message cap as turn count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_toolsandbox.evaluation.calls import AgentCall, agent_calls
from pytest_toolsandbox.evaluation.constraints import EventSpec, compile_events
from pytest_toolsandbox.evaluation.diagnosis import diagnose
from pytest_toolsandbox.evaluation.events import EventMatcher
from pytest_toolsandbox.evaluation.explanation import unexplained
from pytest_toolsandbox.evaluation.final_answer import judge_final_answer
from pytest_toolsandbox.evaluation.ground_truth import evaluate_ground_truth
from pytest_toolsandbox.evaluation.memo import ContentCache
from pytest_toolsandbox.evaluation.result import Evaluation, EventOutcome
from pytest_toolsandbox.evaluation.rules import REFERENCE, crash_reason
from pytest_toolsandbox.evaluation.similarity import ConstraintScorer
from pytest_toolsandbox.evaluation.state import EpisodeState
from pytest_toolsandbox.evaluation.turns import turn_count
from pytest_toolsandbox.evaluation.verdict import judge
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from pytest_toolsandbox.tools.registry import ToolSpec, all_tools
from pytest_toolsandbox.world.trajectory import Trajectory

UNKNOWN_TOOL_MINEFIELD = "(unknown tool call)"


def unknown_tool_minefield(calls: Sequence[AgentCall]) -> EventOutcome | None:
    """The implicit minefield of insufficient-information scenarios: calling a tool that does not exist.

    Only a hit is reported, so a trajectory without such a call keeps the reference's minefield
    similarity (an always-zero extra entry would halve the mean of the declared minefields).
    """
    hit = next((call for call in calls if call.error_code == "IFN"), None)
    return EventOutcome(name=UNKNOWN_TOOL_MINEFIELD, index=hit.index, similarity=1.0) if hit else None


def _mean(outcomes: Sequence[EventOutcome], empty: float) -> float:
    return sum(o.similarity for o in outcomes) / len(outcomes) if outcomes else empty


_SPECS: ContentCache[tuple[list[EventSpec], list[EventSpec]]] = ContentCache()


def _compile(scenario: Scenario) -> tuple[list[EventSpec], list[EventSpec]]:
    """The scenario's milestones and minefields, compiled; an error names the scenario file."""
    clock = scenario_clock(scenario)
    try:
        return (compile_events(scenario.milestones, clock, "milestones"),
                compile_events(scenario.minefields, clock, "minefields"))
    except ValueError as error:
        raise ValueError(f"{scenario.path or scenario.name}: {error}") from None


def evaluate(scenario: Scenario, trajectory: Trajectory, registry: Mapping[str, ToolSpec] | None = None,
             rules: str = "ours") -> Evaluation:
    """Score `trajectory` against `scenario`, with mapping, turn count, diagnosis and ground truth.

    `registry` defaults to every built-in tool; it is needed to replay the reference dialogue (ground
    truth) and to know which tools are actions. `rules`: ours, or the reference's (evaluation/rules.py).
    """
    registry = registry if registry is not None else all_tools()
    key = scenario.model_dump_json()  # finds everything that depends on the scenario alone
    milestone_specs, minefield_specs = _SPECS.get(key, lambda: _compile(scenario))
    state = EpisodeState(trajectory)
    scorer = ConstraintScorer(state)
    milestone_matcher = EventMatcher(milestone_specs, state, scorer)
    milestones = milestone_matcher.with_order(milestone_matcher.outcomes())
    minefields = EventMatcher(minefield_specs, state, scorer).outcomes()
    calls = agent_calls(trajectory)
    if "insufficient_information" in scenario.categories and (hit := unknown_tool_minefield(calls)):
        minefields.append(hit)
    verdict = judge(milestone_matcher, milestones, minefields)
    if (reason := unexplained(scenario, trajectory)) is not None:  # insufficient information: an explanation
        verdict = verdict.model_copy(update={"passed": False, "unexplained": reason})
    if (answer := judge_final_answer(scenario, trajectory, verdict.milestones)) is not None:  # verdict only
        verdict = verdict.model_copy(update={"passed": verdict.passed and answer.held, "final_answer": answer})
    milestone_similarity = _mean(milestones, 1.0)
    minefield_similarity = _mean(minefields, 0.0)
    score, turns = (milestone_similarity if minefield_similarity == 0.0 else 0.0), turn_count(trajectory.messages)
    crash = crash_reason([entry["name"] for entry in trajectory.tools], trajectory.messages)
    if rules == REFERENCE and crash is not None:  # the reference's runner records what it does for a crash
        milestone_similarity = minefield_similarity = score = 0.0
        turns = scenario.max_messages
        verdict = verdict.model_copy(update={"passed": False, "crash": f"message {crash[0]}: {crash[1]}"})
    return Evaluation(
        score=score,
        milestone_similarity=milestone_similarity,
        minefield_similarity=minefield_similarity,
        milestones=milestones,
        minefields=minefields,
        turn_count=turns,
        diagnosis=diagnose(scenario, trajectory, state, calls, (milestone_specs, milestones), minefields,
                           {name for name, spec in registry.items() if spec.action}, key),
        ground_truth=evaluate_ground_truth(scenario, calls, registry, key),
        verdict=verdict,
    )
