"""Milestone and minefield declarations as they appear in scenario files.

A milestone is a conjunction of constraints on one moment of the trajectory; scoring takes the
geometric mean of the constraint similarities. The common kinds are one line each:

    cellular_on:   {world: {settings: {cellular: true}}}
    found_contact: {tool_call: {search_contacts: {name: Fredrik Thordendal}}}
    message_sent:  {after: [cellular_on], added: {messaging: [{recipient_phone_number: "+1…", content: …}]}}
    confirmed:     {after: [message_sent], agent_says: Your message has been sent.}

Less common ones: `attempted_call` (the agent's call message itself, whether or not the call
succeeded — for minefields where trying is the harm), `removed` / `updated` (rows removed or changed
since `since`), `since: initial`
(compare with the initial state), `match` (per-column similarity overrides, e.g. `{content: contains}`
or `{latitude: {close: 0.001}}`), `tolerance` (numeric tolerance of tool-call arguments), `fill_from`
(values taken from the tool trace of an earlier milestone's message; a list takes values from
several), and guardrail control (`guardrails`, `no_guardrails`). `agent_says` and `user_says` may be
lists: every entry must hold on the same message (e.g. ROUGE-L wording and a `contains` number).
`facts` (with `accept` / `reject` example answers) state what makes the text right: they decide
whether the milestone is reached, while ROUGE-L only feeds the similarity score (evaluation/facts.py).
`waive` names generated mutants (suite/mutants.py) the milestone is allowed to judge otherwise, each
with its reason.

Defaults (docs/scoring.md has the full semantics): `since` is the first milestone in `after`, or the
initial state when `after` is empty. Guardrails are added automatically: every world table that
neither this milestone nor its predecessors/references constrain must be unchanged since each of
them. A milestone named in `since` or `fill_from` is implicitly a predecessor.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pytest_toolsandbox.evaluation.facts import Fact, parse_fact
from pytest_toolsandbox.scenario.formats import check_format
from pytest_toolsandbox.world.tables import Table

WorldTable = Literal["settings", "contacts", "messaging", "reminders"]
ColumnMatch = Literal["exact", "rouge", "contains", "any"]


class CloseMatch(BaseModel):
    """Numeric closeness: |actual − target| ≤ close."""

    model_config = ConfigDict(extra="forbid")
    close: float = Field(ge=0)


class TextMatch(BaseModel):
    """A message the agent (or user) must send; `match` picks the text similarity.

    `floor` makes ROUGE-L decide the verdict of this text (reached when its similarity ≥ floor)
    instead of the milestone's `facts`; the similarity score is the same either way.
    """

    model_config = ConfigDict(extra="forbid")
    text: str
    match: ColumnMatch = "rouge"
    floor: float | None = Field(default=None, gt=0, le=1)


class FillFrom(BaseModel):
    """Take values from the tool trace of an earlier milestone's message.

    `values` maps a target name (a tool-call argument, or a `{placeholder}` in `agent_says`) to a
    path into that trace: `result`, `result.<key>`, `arguments.<name>`.
    """

    model_config = ConfigDict(extra="forbid")
    milestone: str
    values: dict[str, str] = Field(min_length=1)
    formats: list[str] = Field(default_factory=lambda: ["{}"], min_length=1)

    @field_validator("values")
    @classmethod
    def _paths(cls, value: dict[str, str]) -> dict[str, str]:
        for name, path in value.items():
            head, _, rest = path.partition(".")
            if head not in ("result", "arguments") or (head == "arguments" and not rest):
                raise ValueError(f"fill_from value {name!r}: path {path!r} must be result, result.<key>… "
                                 "or arguments.<name>")
        return value

    @field_validator("formats")
    @classmethod
    def _plain_formats(cls, value: list[str]) -> list[str]:
        for text in value:
            check_format(text, None)
        return value


Rows = list[dict[str, Any]]
Said = str | TextMatch
CallTarget = dict[str, dict[str, Any]] | list[dict[str, dict[str, Any]]]


def _yaml_on_off_keys(value: Any) -> Any:
    """YAML 1.1 reads an unquoted `on:`/`off:` key as a boolean; `{on: true}` means argument "on"."""
    def fix(arguments: Any) -> Any:
        if not isinstance(arguments, dict):
            return arguments
        return {({True: "on", False: "off"}[key] if isinstance(key, bool) else key): item
                for key, item in arguments.items()}

    def fix_alternative(alternative: Any) -> Any:
        if not isinstance(alternative, dict):
            return alternative
        return {tool: fix(arguments) for tool, arguments in alternative.items()}

    return [fix_alternative(a) for a in value] if isinstance(value, list) else fix_alternative(value)


def _one_tool_per_alternative(value: Any) -> Any:
    if value == []:
        raise ValueError("lists no alternative, so it could never match")
    alternatives = value if isinstance(value, list) else [value] if value is not None else []
    for alternative in alternatives:
        if len(alternative) != 1:
            raise ValueError("each alternative names exactly one tool: {tool_name: {argument: value}}")
    return value


def parse_facts(value: Any) -> Any:
    """`facts` as written (a non-empty list of fact entries), parsed; shared by text milestones and
    `final_answer`, so both accept exactly the same entries with the same errors."""
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise ValueError("facts is a non-empty list, e.g. [off, {none: [on, \"couldn't\"]}]")
    return [parse_fact(entry) for entry in value]


def waiver_reasons(value: dict[str, str]) -> dict[str, str]:
    """A `waive` map (mutant id → reason) in which every reason says something."""
    for mutant, reason in value.items():
        if not reason.strip():
            raise ValueError(f"waiver of {mutant!r} gives no reason; say why a careful judge would not "
                             "judge this answer the way the mutant's kind says")
    return value


def _as_list(value: Any) -> list[Any]:
    return [] if value is None else list(value) if isinstance(value, list) else [value]


class Milestone(BaseModel):
    """One event the trajectory must (milestone) or must not (minefield) contain."""

    model_config = ConfigDict(extra="forbid")

    after: list[str] = Field(default_factory=list)
    world: dict[WorldTable, dict[str, Any] | Rows] | None = None
    added: dict[WorldTable, Rows] | None = None
    removed: dict[WorldTable, Rows] | None = None
    updated: dict[WorldTable, Rows] | None = None
    tool_call: CallTarget | None = None
    attempted_call: CallTarget | None = None
    tolerance: dict[str, float] = Field(default_factory=dict)
    agent_says: Said | list[Said] | None = None
    user_says: Said | list[Said] | None = None
    since: str | None = None
    match: dict[str, ColumnMatch | CloseMatch] = Field(default_factory=dict)
    fill_from: FillFrom | list[FillFrom] | None = None
    guardrails: list[WorldTable] | None = None
    no_guardrails: list[WorldTable] = Field(default_factory=list)
    facts: list[Fact] | None = None
    accept: list[str] = Field(default_factory=list)
    reject: list[str] = Field(default_factory=list)
    # Mutants (suite/mutants.py) this milestone is not expected to judge right: mutant id → why.
    waive: dict[str, str] = Field(default_factory=dict)

    _on_off = field_validator("tool_call", "attempted_call", mode="before")(_yaml_on_off_keys)
    _one_tool = field_validator("tool_call", "attempted_call")(_one_tool_per_alternative)

    _facts = field_validator("facts", mode="before")(parse_facts)
    _waivers = field_validator("waive")(waiver_reasons)

    @field_validator("agent_says", "user_says", "fill_from")
    @classmethod
    def _non_empty_list(cls, value: Any) -> Any:
        if value == []:
            raise ValueError("an empty list says nothing; leave the field out")
        return value

    @model_validator(mode="after")
    def _has_a_constraint(self) -> Milestone:
        if not self.constraint_kinds():
            raise ValueError("a milestone needs at least one of: " + ", ".join(CONSTRAINT_KINDS))
        if self.since is not None and not (self.added or self.removed or self.updated):
            raise ValueError("'since' only applies to added, removed or updated rows")
        if self.fill_from is not None and not (self.tool_call or self.attempted_call or self.agent_says
                                               or self.user_says):
            raise ValueError("'fill_from' fills a tool_call, attempted_call, agent_says or user_says target")
        if self.fill_from is not None:  # texts are formatted with the filled values when scoring
            names = {name for fill in self.fills() for name in fill.values}
            for said in (*self.said("agent_says"), *self.said("user_says")):
                check_format(said if isinstance(said, str) else said.text, names)
        if (self.facts is not None or self.accept or self.reject or self.waive) and not (self.agent_says
                                                                                        or self.user_says):
            raise ValueError("'facts', 'accept', 'reject' and 'waive' apply to the agent_says or user_says text")
        if self.tolerance and self.tool_call is None and self.attempted_call is None:
            raise ValueError("'tolerance' applies to tool_call and attempted_call arguments")
        return self

    def constraint_kinds(self) -> list[str]:
        return [kind for kind in CONSTRAINT_KINDS if getattr(self, kind) is not None]

    def tool_call_alternatives(self) -> list[tuple[str, dict[str, Any]]]:
        return [next(iter(alternative.items())) for alternative in _as_list(self.tool_call)]

    def attempted_call_alternatives(self) -> list[tuple[str, dict[str, Any]]]:
        return [next(iter(alternative.items())) for alternative in _as_list(self.attempted_call)]

    def said(self, kind: Literal["agent_says", "user_says"]) -> list[Said]:
        """The texts of `agent_says` / `user_says` as a list (one entry for the one-line form)."""
        return _as_list(getattr(self, kind))

    def fills(self) -> list[FillFrom]:
        """The `fill_from` sources as a list (one entry for the single-source form)."""
        return _as_list(self.fill_from)

    def constrained_tables(self) -> set[Table]:
        """World tables this milestone says something about (exempt from its guardrails)."""
        tables: set[Table] = set()
        for kind in ("world", "added", "removed", "updated"):
            tables.update(Table(name) for name in (getattr(self, kind) or {}))
        return tables


CONSTRAINT_KINDS = ("world", "added", "removed", "updated", "tool_call", "attempted_call", "agent_says", "user_says")
