"""What scoring returns: the score and the evidence behind it (shared by CLI, plugin and report)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class EventOutcome(BaseModel):
    """How one milestone or minefield matched: the message index it mapped to and its similarity."""

    model_config = ConfigDict(frozen=True)

    name: str
    index: int | None
    similarity: float
    constraints: dict[str, float] = Field(default_factory=dict)


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
