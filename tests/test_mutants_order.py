"""Which related milestone an out-of-order event is blamed on (`evaluation/order.py`): only milestones
strictly on the wrong side count, the ones that matched something are preferred as evidence, then the
nearest, prerequisites and successors measured alike (found unpinned by mutation testing,
benchmarks/README.md "Mutation testing")."""

from __future__ import annotations

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.constraints import EventSpec
from pytest_toolsandbox.evaluation.order import find_order_violations
from pytest_toolsandbox.evaluation.result import EventOutcome, OrderViolation
from tests.test_scoring_support import call, play, say, scenario


def spec(name: str, *after: str) -> EventSpec:
    return EventSpec(name, (), after, (), ())


def blamed(specs: list[EventSpec], mapped: dict[str, tuple[int | None, float]], found_at: int,
           missed: str = "b") -> OrderViolation | None:
    """The violation recorded on `missed` (scored 0, its event found at `found_at`), the others mapped as given."""
    outcomes = [EventOutcome(name=s.name, index=mapped[s.name][0], similarity=mapped[s.name][1])
                if s.name != missed else EventOutcome(name=missed, index=None, similarity=0.0) for s in specs]
    best = [(1.0, found_at) if s.name == missed else (0.0, 0) for s in specs]
    updated = find_order_violations(specs, outcomes, best)
    assert [o.name for o in updated] == [s.name for s in specs]
    assert all(o.order is None for o in updated if o.name != missed)
    return next(o.order for o in updated if o.name == missed)


def blamed_on(specs: list[EventSpec], mapped: dict[str, tuple[int | None, float]], found_at: int) -> str:
    violation = blamed(specs, mapped, found_at)
    assert violation is not None
    return violation.other


CHAIN = [spec("a"), spec("b", "a"), spec("c", "b")]


def test_a_prerequisite_mapped_later_is_blamed() -> None:
    assert blamed(CHAIN, {"a": (7, 1.0), "c": (None, 0.0)}, 5) == OrderViolation(
        found_at=5, other="a", other_at=7, relation="prerequisite")


def test_a_successor_mapped_earlier_is_blamed() -> None:
    assert blamed(CHAIN, {"a": (None, 0.0), "c": (3, 1.0)}, 5) == OrderViolation(
        found_at=5, other="c", other_at=3, relation="successor")


def test_a_related_milestone_at_the_same_message_or_unmapped_is_no_violation() -> None:
    assert blamed(CHAIN, {"a": (5, 1.0), "c": (5, 1.0)}, 5) is None
    assert blamed(CHAIN, {"a": (None, 0.0), "c": (None, 0.0)}, 5) is None
    assert blamed(CHAIN, {"a": (3, 1.0), "c": (7, 1.0)}, 5) is None  # both on the right side


def test_a_milestone_that_matched_something_is_preferred_to_a_nearer_one_that_did_not() -> None:
    prerequisites = [spec("far"), spec("near"), spec("b", "far", "near")]
    assert blamed_on(prerequisites, {"far": (9, 0.5), "near": (6, 0.0)}, 5) == "far"
    assert blamed_on(prerequisites, {"far": (9, 0.0), "near": (6, 0.0)}, 5) == "near"
    successors = [spec("b"), spec("far", "b"), spec("near", "b")]
    assert blamed_on(successors, {"far": (1, 0.5), "near": (4, 0.0)}, 5) == "far"
    assert blamed_on(successors, {"far": (1, 0.0), "near": (4, 0.0)}, 5) == "near"


def test_the_nearest_is_blamed_whichever_side_it_is_on() -> None:
    successors = [spec("b"), spec("far", "b"), spec("near", "b")]
    assert blamed(successors, {"far": (1, 1.0), "near": (3, 1.0)}, 5) == OrderViolation(
        found_at=5, other="near", other_at=3, relation="successor")
    assert blamed(CHAIN, {"a": (6, 1.0), "c": (3, 1.0)}, 5) == OrderViolation(
        found_at=5, other="a", other_at=6, relation="prerequisite")
    assert blamed(CHAIN, {"a": (8, 1.0), "c": (4, 1.0)}, 5) == OrderViolation(
        found_at=5, other="c", other_at=4, relation="successor")


def test_a_milestone_that_scored_something_where_it_was_mapped_is_not_out_of_order() -> None:
    """The exact answer came before the change it must follow; a close answer after it scored: `told`
    is mapped there (similarity below 1), not reported out of order."""
    s = scenario("""
categories: [single_tool_call, multiple_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status]
reference:
  - agent: Okay.
  - user: Go on.
  - set_wifi_status(on=false)
  - agent: Wifi is off now.
milestones:
  wifi_done: {world: {settings: {wifi: false}}}
  told: {after: [wifi_done], agent_says: Wifi is off now.}
""")
    turns = [say("Wifi is off now."), call("set_wifi_status", on=False), say("Wifi is nearly off now.")]
    told = next(o for o in evaluate(s, play(s, turns)).milestones if o.name == "told")
    assert 0.0 < told.similarity < 1.0 and told.order is None
