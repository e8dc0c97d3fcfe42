"""`final_answer`: facts the agent's last message to the user must hold, for the verdict only.

A text milestone's ROUGE-L target feeds the similarity score, so a scenario that must keep a given
similarity (an imported reference scenario, docs/toolsandbox.md) cannot gain milestones. Some
verdict checks still belong to the agent's final answer and have no milestone to live on: an action
the world proves must not be denied or misreported in the closing message ("I couldn't", the wrong
time), and an answer the user asked for must be given even where the reference dialogue ends
without it. `final_answer` holds those checks: fact entries exactly as a text milestone's `facts`
(evaluation/facts.py), judged on the agent's last message to the user (evaluation/final_answer.py).
It never becomes a milestone, so it never touches the similarity.

    final_answer:
      facts: [{time: "17:00", required: false}, {none: ["couldn't", failed, unable]}]
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pytest_toolsandbox.evaluation.facts import Fact
from pytest_toolsandbox.scenario.milestones import parse_facts, waiver_reasons


class FinalAnswer(BaseModel):
    """What the agent's last message to the user must say (and must not), beside the milestones."""

    model_config = ConfigDict(extra="forbid")

    facts: list[Fact]
    # Mutants of the final answer (suite/mutants.py) it is not expected to judge right: mutant id → why.
    waive: dict[str, str] = Field(default_factory=dict)

    _facts = field_validator("facts", mode="before")(parse_facts)
    _waivers = field_validator("waive")(waiver_reasons)
