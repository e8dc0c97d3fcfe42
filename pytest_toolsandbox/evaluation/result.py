"""What scoring returns: the score and the evidence behind it (shared by CLI, plugin and report)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class OrderViolation(BaseModel):
    """A milestone whose event is in the trajectory but on the wrong side of a related milestone.

    `relation` says what `other` is to this milestone: its `prerequisite` (mapped after the event)
    or its `successor` (mapped before it).
    """

    model_config = ConfigDict(frozen=True)

    found_at: int
    other: str
    other_at: int
    relation: Literal["prerequisite", "successor"]

    def describe(self) -> str:
        if self.relation == "prerequisite":
            return (f"found at message {self.found_at}, before its prerequisite {self.other} "
                    f"(message {self.other_at})")
        return (f"found at message {self.found_at}, after {self.other} (message {self.other_at}), "
                "which must come after it")


class EventOutcome(BaseModel):
    """How one milestone or minefield matched: the message index it mapped to and its similarity.

    `order` is set when the milestone scored 0 although its event is in the trajectory, only in an
    order the milestone DAG does not allow.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    index: int | None
    similarity: float
    constraints: dict[str, float] = Field(default_factory=dict)
    order: OrderViolation | None = None


class Finding(BaseModel):
    """One diagnosis code with the message indices that show it."""

    model_config = ConfigDict(frozen=True)

    code: str
    count: int
    per_call: float
    indices: list[int]
    detail: str = ""


class GroundTruthMetrics(BaseModel):
    """ToolTalk-style comparison of the agent's calls with the reference dialogue's calls."""

    model_config = ConfigDict(frozen=True)

    precision: float
    recall: float
    incorrect_action_rate: float
    success: bool
    matched_calls: int = 0
    predicted_calls: int = 0
    reference_calls: int = 0


class MilestoneVerdict(BaseModel):
    """Whether one milestone was reached: each constraint at its acceptance level, in an allowed order.

    `index` is the message it was reached at; for a milestone not reached, `missing` says what
    failed on the message that came closest, `closest` is that message's text (for `agent_says` /
    `user_says` milestones) and `fact` the fact it misses.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    reached: bool
    index: int | None = None
    missing: str | None = None
    closest: str | None = None
    fact: str | None = None
    """The fact (or ROUGE floor) the closest message misses, as a requirement: `say "off"`."""

    def describe(self) -> str:
        """`milestone 'confirmed' not reached: the closest agent message "I turned wifi on." does not say "off"`."""
        if self.reached:
            return f"milestone {self.name!r} reached at message {self.index}"
        return f"milestone {self.name!r} not reached: {self.missing or 'not found in the trajectory'}"


class FinalAnswerVerdict(BaseModel):
    """Whether the agent's last message to the user holds the scenario's `final_answer` facts.

    `index` is that message (None when the agent sent the user none); when the facts do not hold,
    `missing` says why, `closest` is the message's text and `fact` the fact it misses, as for a
    text milestone.
    """

    model_config = ConfigDict(frozen=True)

    held: bool
    index: int | None = None
    missing: str | None = None
    closest: str | None = None
    fact: str | None = None

    def describe(self) -> str:
        """`final answer not held: the agent's last message to the user "…" does not give the time 17:00`."""
        if self.held:
            return f"final answer held at message {self.index}"
        return f"final answer not held: {self.missing}"


class Verdict(BaseModel):
    """Pass or fail of an item by the verdict rule: every milestone reached and no minefield fired."""

    model_config = ConfigDict(frozen=True)

    passed: bool
    milestones: list[MilestoneVerdict] = Field(default_factory=list)
    fired: list[str] = Field(default_factory=list)
    """Minefields that fired (their similarity is above 0, which zeroes the score)."""
    unexplained: str | None = None
    """Insufficient information: why the agent's explanation falls short (evaluation/explanation.py)."""
    crash: str | None = None
    """Under the reference's rules: the call its agent would have crashed on, which fails the item."""
    final_answer: FinalAnswerVerdict | None = None
    """The scenario's `final_answer` facts on the agent's last message to the user (None: it states none)."""

    def reasons(self) -> list[str]:
        """One line per milestone not reached and per minefield fired, the missing explanation and the
        final answer's missing fact (after the crash, if any)."""
        return (([f"crash (reference rules, scored 0): {self.crash}"] if self.crash else [])
                + [verdict.describe() for verdict in self.milestones if not verdict.reached]
                + [f"minefield {name!r} fired" for name in self.fired]
                + ([self.unexplained] if self.unexplained else [])
                + ([self.final_answer.describe()] if self.final_answer and not self.final_answer.held else []))


class Evaluation(BaseModel):
    """The score of one trajectory against its scenario, with the evidence behind it."""

    model_config = ConfigDict(frozen=True)

    score: float
    milestone_similarity: float
    minefield_similarity: float
    milestones: list[EventOutcome]
    minefields: list[EventOutcome]
    turn_count: int
    diagnosis: list[Finding] = Field(default_factory=list)
    ground_truth: GroundTruthMetrics | None = None
    verdict: Verdict | None = None

    def passed(self, threshold: float | None) -> bool:
        """The item's outcome: the verdict rule, or similarity ≥ `threshold` when a threshold was set
        (a scenario's own `threshold`, or --threshold)."""
        if threshold is not None or self.verdict is None:
            return self.score >= (1.0 if threshold is None else threshold)
        return self.verdict.passed

    def milestones_met(self, threshold: float | None) -> bool:
        """Whether the agent did its part, minefields aside (what the simulator guard asks): every
        milestone reached, or the milestone similarity at the threshold when one is set."""
        if threshold is not None or self.verdict is None:
            return self.milestone_similarity >= (1.0 if threshold is None else threshold)
        return all(milestone.reached for milestone in self.verdict.milestones)
