"""Pydantic models of a scenario file (YAML, one scenario per file; the path is its identity)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pytest_toolsandbox.basics.vocabulary import CATEGORIES, VARIANT_CATEGORIES
from pytest_toolsandbox.scenario.final_answer import FinalAnswer
from pytest_toolsandbox.scenario.milestones import Milestone, WorldTable
from pytest_toolsandbox.scenario.reference import ReferenceStep, parse_step
from pytest_toolsandbox.world.clock import DEFAULT_NOW, DEFAULT_TIMEZONE

DEFAULT_MAX_MESSAGES = 30
"""A scenario's message cap unless it sets one (the reference's too)."""

if TYPE_CHECKING:  # a Literal of a tuple computed from the vocabulary is no static type: to mypy, strings
    Category = str
    Variant = str
else:  # pydantic validates against the vocabulary's values
    Category = Literal[CATEGORIES]
    Variant = Literal[tuple(VARIANT_CATEGORIES)]


class WorldPatch(BaseModel):
    """Changes on top of the default world: settings values, tables to empty, rows to add."""

    model_config = ConfigDict(extra="forbid")

    settings: dict[str, Any] = Field(default_factory=dict)
    clear: list[WorldTable] = Field(default_factory=list)
    contacts: list[dict[str, Any]] = Field(default_factory=list)
    messaging: list[dict[str, Any]] = Field(default_factory=list)
    reminders: list[dict[str, Any]] = Field(default_factory=list)


class Demonstration(BaseModel):
    """An example conversation shown only to the simulated user: someone else's goal and how that person
    talked. `turns` are `{user: text}`, `{agent: text}` or `{user_calls: "end_conversation()"}`."""

    model_config = ConfigDict(extra="forbid")

    goal: str
    turns: list[dict[Literal["user", "agent", "user_calls"], str]] = Field(min_length=1)

    @field_validator("turns")
    @classmethod
    def _one_key(cls, value: list[dict[str, str]]) -> list[dict[str, str]]:
        for position, turn in enumerate(value):
            if len(turn) != 1:
                raise ValueError(f"turns[{position}]: write one of {{user: text}}, {{agent: text}}, "
                                 "{user_calls: end_conversation()}")
        return value


class UserSpec(BaseModel):
    """The simulated user: what they want, what they know, and their scripted lines."""

    model_config = ConfigDict(extra="forbid")

    goal: str
    knowledge: str = ""
    first_message: str
    demonstrations: list[Demonstration] = Field(default_factory=list)


class Scenario(BaseModel):
    """One scenario. `reference` is a correct dialogue after the first user message."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    categories: list[Category] = Field(min_length=1)
    now: str = DEFAULT_NOW
    timezone: str = DEFAULT_TIMEZONE
    world: WorldPatch = Field(default_factory=WorldPatch)
    user: UserSpec
    tools: list[str] = Field(min_length=1)
    deny: list[str] = Field(default_factory=list)
    # What the agent lacks in an insufficient_information scenario — the tool or the information — as
    # short phrases; the verdict asks for an explanation that names one (evaluation/explanation.py).
    missing: list[str] = Field(default_factory=list)
    milestones: dict[str, Milestone] = Field(default_factory=dict)
    minefields: dict[str, Milestone] = Field(default_factory=dict)
    # Facts the agent's last message to the user must hold: the verdict only, never a milestone, never
    # in the similarity (scenario/final_answer.py).
    final_answer: FinalAnswer | None = None
    reference: list[ReferenceStep] = Field(default_factory=list)
    # `written` by an author, or `synthesised` from the milestones (the reference benchmark's imported
    # scenarios, which come without dialogues): validate reports which.
    reference_source: Literal["written", "synthesised"] = "written"
    # The variants whose offered tools make the scenario solvable (None: all). The others still run:
    # the agent is measured there too, and the reference dialogue is not expected to pass.
    solvable_in: list[Variant] | None = Field(default=None, min_length=1)
    # The reference benchmark's own augmentations, written by import-toolsandbox so that each variant
    # offers its set: the tools its 3- and 10-distraction variants add (instead of our ranking), and the
    # names its name-scrambled variant gives the offered tools (instead of `<domain>_<k>`).
    distraction_tools: dict[Literal[3, 10], list[str]] = Field(default_factory=dict)
    scrambled_names: dict[str, str] = Field(default_factory=dict)
    threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    max_messages: int = Field(default=DEFAULT_MAX_MESSAGES, ge=1, le=1000)  # scoring cost grows with its square
    # A sibling scenario with the same goal in other words (path relative to this file), so that an
    # agent's sensitivity to wording can be measured pair by pair.
    paraphrase_of: str | None = None
    path: str = ""

    @field_validator("reference", mode="before")
    @classmethod
    def _parse_steps(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [step if isinstance(step, ReferenceStep) else parse_step(step) for step in value]

    @field_validator("missing")
    @classmethod
    def _phrases(cls, value: list[str]) -> list[str]:
        if any(not phrase.strip() for phrase in value):
            raise ValueError("an empty phrase names nothing; list what the agent lacks, e.g. [coordinates, location]")
        return value

    @field_validator("now")
    @classmethod
    def _iso_now(cls, value: str) -> str:
        from datetime import datetime

        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("use an ISO local time such as 2026-03-12T09:30:00") from None
        if not 1900 <= moment.year <= 2200:  # relative dates ("in 3 days") must stay representable
            raise ValueError(f"{value!r} is out of range; use a time between the years 1900 and 2200")
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("use an IANA time zone such as America/Los_Angeles") from None
        return value

    @model_validator(mode="after")
    def _references_resolve(self) -> Scenario:
        """`after`, `since` and `fill_from` name siblings; the message starts with the exact field
        (`milestones.sent.after[1]`) so the loader can report it as the field in error."""
        for name, event in self.minefields.items():
            for field in ("facts", "accept", "reject", "waive"):
                if field in event.model_fields_set:
                    raise ValueError(f"minefields.{name}.{field}: facts and example answers belong to milestones; "
                                     "a minefield fires on any similarity above 0")
        for kind, events in (("milestones", self.milestones), ("minefields", self.minefields)):
            for name, event in events.items():
                named = [(f"after[{position}]", other) for position, other in enumerate(event.after)]
                if event.since not in (None, "initial"):
                    named.append(("since", event.since))
                for position, source in enumerate(event.fills()):
                    field = f"fill_from[{position}]" if isinstance(event.fill_from, list) else "fill_from"
                    named.append((f"{field}.milestone", source.milestone))
                for field, other in named:
                    if other not in events:
                        raise ValueError(f"{kind}.{name}.{field}: unknown {kind[:-1]} {other!r}; "
                                         f"known: {sorted(events)}")
        return self

    @property
    def explicit_threshold(self) -> float | None:
        """The file's own `threshold` (then similarity ≥ threshold decides pass or fail), or None
        when the file sets none (then the verdict decides: every milestone reached, no minefield)."""
        return self.threshold if "threshold" in self.model_fields_set else None

    @property
    def user_lines(self) -> list[str]:
        """The scripted user's replies after the first message, in order."""
        return [step.user for step in self.reference if step.user is not None]
