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
