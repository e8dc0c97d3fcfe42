"""Error-pattern diagnosis of one trajectory (ToolScan's codes plus three ToolSandbox-specific ones).

Every finding names the message indices that show it, so a reader can jump to the evidence:

- IFE / IFN / IAN / IAT  the execution environment rejected a call as malformed (invalid JSON, unknown
  tool, unknown or missing argument, wrong type); evidence: the call message.
- IAV  a well-formed call to a tool the scenario expects, whose arguments agree with none of the
  expected calls of that tool (milestone `tool_call` targets and the reference dialogue's calls).
- RAC  a well-formed call identical (tool and arguments) to an earlier one, with no world change
  between the earlier call and this one running — retrying after turning cellular on (also within
  one parallel batch) is not a repeat.
- IAC  milestones that need a call or a world change and were never reached (similarity 0).
- ORDER  a milestone at similarity 0 whose event is in the trajectory, but before a prerequisite's
  mapped message or after a successor's (it is not also reported as IAC or pending).
- MINEFIELD  a minefield with a non-zero similarity; evidence: the message it matched.
- PREMATURE_END  the conversation ended (by the user or the message cap) with milestones unreached.
- CLAIMED_UNMADE  the agent tells the user a change was made (sent, added, turned on, …) although
  nothing changed in the world during that turn and the expected change had not happened yet
  (only in scenarios whose milestones expect a world change or an action call).

Counts are also given per agent tool call (never per step budget).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolsandbox.evaluation.calls import AgentCall, arguments_agree
from pytest_toolsandbox.evaluation.columns import TraceMatch
from pytest_toolsandbox.evaluation.constraints import EventSpec
from pytest_toolsandbox.evaluation.memo import ContentCache
from pytest_toolsandbox.evaluation.result import EventOutcome, Finding
from pytest_toolsandbox.evaluation.state import EpisodeState
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.timeexpr import resolve_times
from pytest_toolsandbox.scenario.world_builder import scenario_clock
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.tables import Table
from pytest_toolsandbox.world.trajectory import Trajectory

CODES = ("IFE", "IFN", "IAN", "IAT", "IAV", "RAC", "IAC", "ORDER", "MINEFIELD", "PREMATURE_END", "CLAIMED_UNMADE")

_PAST = (r"(?:sent|texted|messaged|added|saved|created|stored|removed|deleted|updated|changed|modified|"
         r"scheduled|booked|cancell?ed|enabled|disabled|(?:turned|switched)\s+(?:on|off))")
_VERBS = rf"(?:{_PAST}|set)"  # "set" is also present tense ("Should I set it?"), so never after a bare "I"
_ADVERBS = r"(?:(?:just|successfully|now|also|already)\s+)*"
# "is/are" + participle usually describes a state ("Cellular service is disabled", "Your reminder is
# set for 5 PM"), so the present tense is a claim only with "now" ("Wifi is now off").
_CLAIM = re.compile(
    rf"\b(?:has|have|had|was|were)\s+(?:now\s+|just\s+|already\s+)?(?:been\s+)?(?:successfully\s+)?{_VERBS}\b"
    rf"|\b(?:is|are)\s+now\s+(?:successfully\s+)?(?:{_VERBS}|on|off)\b"
    rf"|\b(?:I've|I\s+have|we've|we\s+have)\s+{_ADVERBS}{_VERBS}\b"
    rf"|\b(?:I|we)\s+{_ADVERBS}{_PAST}\b"
    rf"|\b(?:I|we)\s+(?:just|successfully|also|already)\s+{_ADVERBS}set\b"
    rf"|\bsuccessfully\s+{_VERBS}\b",
    re.IGNORECASE)


def claims_change(text: str) -> bool:
    """Does this sentence tell the user a change has been made? (English past-tense claims.)"""
    return _CLAIM.search(text) is not None


@dataclass(frozen=True)
class Expected:
    arguments: dict[str, Any]
    tolerances: dict[str, float]


def expected_calls(specs: Sequence[EventSpec], scenario: Scenario) -> dict[str, list[Expected]]:
    """Per tool: the calls the milestones' tool_call targets and the reference dialogue expect."""
    expected: dict[str, list[Expected]] = {}
    for spec in specs:
        for constraint in spec.constraints:
            column = constraint.call_column
            trace = constraint.measures.get(column) if column else None
            if column is None or not isinstance(trace, TraceMatch):
                continue
            filled = {name for fill in constraint.fills for name, _ in fill.values}
            for tool, arguments in constraint.rows[0][column]:
                kept = {name: value for name, value in arguments if name not in filled}
                expected.setdefault(tool, []).append(Expected(kept, dict(trace.tolerances)))
    clock = scenario_clock(scenario)
    for step in scenario.reference:
        for call in step.calls:
            expected.setdefault(call.tool, []).append(Expected(resolve_times(dict(call.arguments), clock), {}))
    return expected


def _call_key(call: AgentCall) -> str:
    """The name the agent called and its arguments. Each offered name is one tool, so a repeat of a tool is a
    repeat of its offered name — and a call the message cap cut off under a name it was not offered (the
    registry's, in a scrambled variant) is not taken for a repeat of that tool's earlier calls."""
    return json.dumps([call.name, call.arguments], sort_keys=True, default=str)


class Diagnosis:
    """Collects findings for one trajectory; `findings()` returns the non-zero codes in CODES order."""

    def __init__(self, trajectory: Trajectory, state: EpisodeState, calls: Sequence[AgentCall]) -> None:
        self.trajectory = trajectory
        self.state = state
        self.calls = list(calls)
        self._found: dict[str, tuple[list[int], list[str]]] = {code: ([], []) for code in CODES}

    def _add(self, code: str, index: int | None, detail: str, count: int = 1) -> None:
        indices, details = self._found[code]
        if index is not None:
            indices.append(index)
        details.extend([detail] * count)

    def malformed_calls(self) -> None:
        for call in self.calls:
            if call.error_code in ("IFE", "IFN", "IAN", "IAT"):
                self._add(call.error_code, call.index, call.name)

    def wrong_values(self, expected: dict[str, list[Expected]]) -> None:
        for call in self.calls:
            if call.error_code is not None or call.tool not in expected:
                continue
            if not any(arguments_agree(e.arguments, call.arguments, e.tolerances) for e in expected[call.tool]):
                self._add("IAV", call.index, call.tool)

    def repeated_calls(self) -> None:
        last: dict[str, AgentCall] = {}
        for call in self.calls:
            if call.error_code is not None:
                continue
            key = _call_key(call)
            earlier = last.get(key)
            # The world just before this call ran: in a parallel batch, replies carry the state after
            # each call in execution order, so the message before this call's reply shows it.
            before = call.reply.index - 1 if call.reply is not None else call.index
            unchanged = (earlier is not None and earlier.reply is not None
                         and self.state.world_at(earlier.reply.index) == self.state.world_at(before))
            if unchanged:
                self._add("RAC", call.index, call.tool or call.name)
            last[key] = call

    def unreached(self, specs: Sequence[EventSpec], outcomes: Sequence[EventOutcome]) -> None:
        needs_call = [o.name for spec, o in zip(specs, outcomes, strict=True)
                      if o.similarity == 0.0 and o.order is None
                      and any(c.table is not Table.SANDBOX or c.call_column for c in spec.constraints)]
        if needs_call:
            self._add("IAC", None, ", ".join(needs_call), count=len(needs_call))
        for outcome in outcomes:
            if outcome.order is not None:
                self._add("ORDER", outcome.order.found_at, f"{outcome.name} {outcome.order.describe()}")
                self._found["ORDER"][0].append(outcome.order.other_at)
        pending = [o.name for o in outcomes if o.similarity == 0.0 and o.order is None]
        if pending and self.trajectory.ended_by in ("user", "max_messages") and self.trajectory.messages:
            how = "the user ended it" if self.trajectory.ended_by == "user" else "the message cap was hit"
            self._add("PREMATURE_END", self.trajectory.messages[-1].index, f"{how}; pending: {', '.join(pending)}")

    def minefields(self, outcomes: Sequence[EventOutcome]) -> None:
        for outcome in outcomes:
            if outcome.similarity > 0.0:
                self._add("MINEFIELD", outcome.index, outcome.name)

    def false_claims(self, specs: Sequence[EventSpec], outcomes: Sequence[EventOutcome],
                     actions: Collection[str]) -> None:
        changes = [o for spec, o in zip(specs, outcomes, strict=True)
                   if any(c.table is not Table.SANDBOX for c in spec.constraints)]
        expected_tools = {tool for spec in specs for c in spec.constraints if c.call_column
                          for tool, _ in c.rows[0][c.call_column]}
        if not changes and not expected_tools & set(actions):
            return  # nothing is to be changed: "was sent", "is set" describe what the agent read
        initial = self.state.world_at(self.state.first)
        turn_start = self.state.first
        for message in self.trajectory.messages:
            if message.sender is Role.USER and message.recipient is Role.AGENT:
                turn_start = message.index
            if message.sender is not Role.AGENT or message.recipient is not Role.USER:
                continue
            if not claims_change(message.content):
                continue
            if self.state.world_at(turn_start) != self.state.world_at(message.index):
                continue  # the agent did change something in this turn
            if changes:
                unmade = [o.name for o in changes if o.similarity == 0.0 or (o.index or 0) > message.index]
            else:
                unmade = ["no change at all"] if self.state.world_at(message.index) == initial else []
            if unmade:
                self._add("CLAIMED_UNMADE", message.index, ", ".join(unmade))

    def findings(self) -> list[Finding]:
        per = max(len(self.calls), 1)
        out = []
        for code in CODES:
            indices, details = self._found[code]
            if details:
                out.append(Finding(code=code, count=len(details), per_call=len(details) / per,
                                   indices=sorted(set(indices)),
                                   detail="; ".join(dict.fromkeys(d for d in details if d))))
        return out


_EXPECTED: ContentCache[dict[str, list[Expected]]] = ContentCache()


def diagnose(scenario: Scenario, trajectory: Trajectory, state: EpisodeState, calls: Sequence[AgentCall],
             milestones: tuple[Sequence[EventSpec], Sequence[EventOutcome]],
             minefields: Sequence[EventOutcome], actions: Collection[str], key: str) -> list[Finding]:
    """All findings of a trajectory, in CODES order (codes that did not occur are left out).

    `actions` names the tools with side effects (a claim of change only counts when the milestones
    expect a world change or an action call). `key`, the scenario's JSON, lets the expected calls
    (which depend on the scenario only) be found instead of recomputed.
    """
    specs, outcomes = milestones
    diagnosis = Diagnosis(trajectory, state, calls)
    diagnosis.malformed_calls()
    diagnosis.wrong_values(_EXPECTED.get(key, lambda: expected_calls(specs, scenario)))
    diagnosis.repeated_calls()
    diagnosis.unreached(specs, outcomes)
    diagnosis.minefields(minefields)
    diagnosis.false_claims(specs, outcomes, actions)
    return diagnosis.findings()
