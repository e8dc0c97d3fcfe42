"""A trajectory as an HTML fragment: the user's goal and knowledge, the milestone and minefield
tables (expected target beside the matched message), ground-truth metrics, the conversation with
each tool call shown with its result, the reference dialogue one click away, the diagnosis and the
world changes.

Used for the static report's trajectory pages and for pytest-html's per-test extras. Everything that
comes from a run (agent and user text, tool arguments and results, names) is data and goes through
html.escape; the fragment carries its own small stylesheet so it reads the same in both reports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pytest_toolsandbox.basics.jsondata import JsonDataError, loads
from pytest_toolsandbox.evaluation.events import GUARDRAILS
from pytest_toolsandbox.report.pages.escaping import escape
from pytest_toolsandbox.report.results.record import Record
from pytest_toolsandbox.report.text.codes import legend_html
from pytest_toolsandbox.roles.base import render_call
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.world.messages import Message, Role, ToolCall
from pytest_toolsandbox.world.trajectory import Trajectory

STYLE = """
.ts-trajectory{font:14px/1.45 system-ui,sans-serif;color:#1d2330;max-width:70rem}
.ts-trajectory table{border-collapse:collapse;margin:.4rem 0 1rem}
.ts-trajectory th,.ts-trajectory td{border:1px solid #d5d9e2;padding:.25rem .5rem;text-align:left;vertical-align:top}
.ts-trajectory th{background:#eef1f6}
.ts-trajectory pre{margin:0;white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,monospace}
.ts-msg{border-left:4px solid #c3c9d6;margin:.35rem 0;padding:.3rem .6rem;background:#f8f9fb}
.ts-msg .ts-who{font-weight:600;font-size:12px;color:#4a5368}
.ts-from-user{border-color:#3b7dd8;background:#f1f6fd}
.ts-from-agent{border-color:#2e9d5b;background:#f2faf5}
.ts-from-execution_environment{border-color:#8b6fd1;background:#f6f3fd}
.ts-error{border-color:#d0453a;background:#fdf1f0}
.ts-error .ts-text{color:#a3261d}
.ts-good{color:#1f7a44;font-weight:600}.ts-bad{color:#b42318;font-weight:600}.ts-mid{color:#9a6700;font-weight:600}
.ts-goal{background:#f1f6fd;border:1px solid #bcd3f2;padding:.5rem .8rem;margin:.4rem 0 1rem}
.ts-goal p{margin:.2rem 0}.ts-result{margin:.3rem 0 0 1rem;padding-left:.5rem;border-left:2px solid #8b6fd1}
.ts-nav a{margin-right:1rem}.ts-muted{color:#6b7385}.ts-guard{color:#b42318;font-size:12px}
"""


@dataclass(frozen=True)
class PageContext:
    """What a trajectory page shows beyond the trajectory and its record: the scenario's user goal,
    knowledge and reference dialogue, and links to neighbouring items (all optional)."""

    goal: str = ""
    knowledge: str = ""
    reference: tuple[str, ...] = ()
    previous: str | None = None
    next: str | None = None
    groups: tuple[tuple[str, str], ...] = field(default=())
    """(label, relative link) of the listings this item belongs to."""


def scenario_context(scenario: Scenario) -> dict[str, Any]:
    """The scenario part of a PageContext as plain data (it travels from xdist workers on the report)."""
    steps = [f"user: {scenario.user.first_message}"]
    for step in scenario.reference:
        if step.calls:
            steps.append("\n".join(render_call(ToolCall(id="reference", name=call.tool,
                                                         arguments=json.dumps(call.arguments, ensure_ascii=False)))
                                   for call in step.calls))
        elif step.agent is not None:
            steps.append(f"agent: {step.agent}")
        elif step.user is not None:
            steps.append(f"user: {step.user}")
    return {"goal": scenario.user.goal, "knowledge": scenario.user.knowledge, "reference": steps}

_LABEL = {Role.SYSTEM: "system", Role.USER: "user", Role.AGENT: "agent", Role.EXECUTION_ENVIRONMENT: "tools"}


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True, default=str)


def _similarity_class(value: float | None) -> str:
    if value is None:
        return ""
    return "ts-good" if value >= 1.0 - 1e-9 else "ts-bad" if value <= 0.0 else "ts-mid"


def _result(message: Message) -> str:
    """A tool's answer, nested under the call that asked for it (anchored by its own index)."""
    if message.exception:
        text = f"<div class='ts-text ts-bad'>✗ {escape(message.exception)}</div>"
    elif message.tool_trace is not None:
        text = f"<pre>{escape(_pretty(message.tool_trace.result))}</pre>"
    else:
        text = f"<pre>{escape(message.content)}</pre>"
    return (f"<div class='ts-result' id='m{message.index}'><div class='ts-who'>[{message.index}] result</div>"
            f"{text}</div>")


def _message(message: Message, result: Message | None = None) -> str:
    classes = [f"ts-msg ts-from-{escape(str(message.sender))}"]
    if message.exception or (result is not None and result.exception):
        classes.append("ts-error")
    who = f"[{message.index}] {_LABEL[message.sender]} → {_LABEL[message.recipient]}"
    if message.tool_call is not None:
        try:
            arguments = _pretty(loads(message.tool_call.arguments or "{}"))
        except JsonDataError:  # not JSON, or nested absurdly deep: shown as the agent sent it
            arguments = message.tool_call.arguments
        body = (f"<div class='ts-text'>call <b>{escape(message.tool_call.name)}</b></div>"
                f"<pre>{escape(arguments)}</pre>{_result(result) if result is not None else ''}")
    elif message.exception:
        body = f"<div class='ts-text'>✗ {escape(message.exception)}</div>"
    elif message.tool_trace is not None:
        body = (f"<div class='ts-text'>result of <b>{escape(message.tool_name or message.tool_trace.tool)}"
                f"</b></div><pre>{escape(_pretty(message.tool_trace.result))}</pre>")
    else:
        body = f"<div class='ts-text'>{escape(message.content)}</div>"
    return (f"<div class='{' '.join(classes)}' id='m{message.index}'>"
            f"<div class='ts-who'>{escape(who)}</div>{body}</div>")


def _verdicts(record: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """Per milestone name, its verdict from the record; None for records without one."""
    verdict = record.get("verdict")
    if not isinstance(verdict, dict):
        return None
    return {entry["name"]: entry for entry in verdict.get("milestones", []) if isinstance(entry, dict)}


def _reached(outcome: dict[str, Any]) -> bool:
    return outcome["similarity"] > 0.0


def _event_class(similarity: float, minefield: bool) -> str:
    """A milestone is good at 1.0; a minefield is bad as soon as it fired (similarity above 0)."""
    if minefield:
        return "ts-bad" if similarity > 0.0 else "ts-good"
    return _similarity_class(similarity)


def _verdict_cell(verdict: dict[str, Any] | None) -> str:
    """The milestone's verdict: reached, or not reached with what was missing (records with a verdict)."""
    if verdict is None:
        return "<td>—</td>"
    if verdict.get("reached"):
        return "<td class='ts-good'>reached</td>"
    return f"<td class='ts-bad'>not reached: {escape(verdict.get('missing') or '')}</td>"


def _events_table(title: str, outcomes: list[dict[str, Any]], messages: dict[int, Message], minefield: bool,
                  verdicts: dict[str, dict[str, Any]] | None = None) -> str:
    if not outcomes:
        return ""
    rows = []
    for outcome in outcomes:
        index = outcome.get("index")
        target = messages.get(index) if index is not None else None
        guard = outcome.get("guardrail_hit")
        if guard is None and outcome.get("constraints", {}).get(GUARDRAILS) == 0.0 and not _reached(outcome):
            guard = index
        if target is not None and _reached(outcome):
            where = f"<a href='#m{index}'>[{index}]</a> {escape((target.exception or target.content)[:160])}"
            if minefield:
                where = f"<span class='ts-bad'>fired</span> at {where}"
        elif minefield:
            where = "<span class='ts-muted'>not triggered</span>"
        else:
            where = "<span class='ts-bad'>not reached</span>"
        if guard is not None and not minefield:
            where += (f"<div class='ts-guard'>zeroed by a guardrail: met at <a href='#m{guard}'>[{guard}]</a> but "
                      f"{escape(outcome.get('guarded') or 'a guarded table changed')}</div>")
        expected = outcome.get("expected") or {}
        target_text = "<br>".join(escape(text) for text in expected.values()) or "—"
        constraints = ", ".join(f"{escape(name)} {value:.3f}" for name, value in outcome.get("constraints", {}).items())
        similarity = outcome["similarity"]
        verdict = _verdict_cell(verdicts.get(outcome["name"])) if verdicts is not None else ""
        rows.append(f"<tr><td>{escape(outcome['name'])}</td>{verdict}"
                    f"<td class='{_event_class(similarity, minefield)}'>{similarity:.3f}</td>"
                    f"<td>{target_text}</td><td>{where}</td><td>{constraints}</td></tr>")
    verdict_head = "<th>verdict</th>" if verdicts is not None else ""
    return (f"<h3>{escape(title)}</h3><table class='ts-events'><tr><th>{escape(title[:-1])}</th>{verdict_head}"
            f"<th>similarity</th><th>expected</th><th>matched message</th><th>constraints</th></tr>"
            f"{''.join(rows)}</table>")


def _world_changes(trajectory: Trajectory) -> str:
    parts = []
    for table, snapshots in trajectory.snapshots.items():
        if len(snapshots) < 2:
            continue
        first = {json.dumps(row, sort_keys=True, default=str): row for row in snapshots[0].rows}
        last = {json.dumps(row, sort_keys=True, default=str): row for row in snapshots[-1].rows}
        added = [row for key, row in last.items() if key not in first]
        removed = [row for key, row in first.items() if key not in last]
        changed_at = ", ".join(str(snapshot.index) for snapshot in snapshots[1:])
        parts.append(f"<details><summary>{escape(table)}: changed at message(s) {escape(changed_at)} "
                     f"(+{len(added)} / −{len(removed)} rows)</summary>"
                     f"<pre>{escape(_pretty({'added': added, 'removed': removed}))}</pre></details>")
    return "<h3>World changes</h3>" + "".join(parts) if parts else ""


def _rate(value: float | None, denominator: int | None) -> str:
    return f"{value:.2f}" if value is not None and denominator else "n/a"


def _ground_truth(record: Record) -> str:
    truth = record.get("ground_truth")
    if not truth:
        return ""
    calls, reference = truth.get("predicted_calls"), truth.get("reference_calls")
    return (f"precision {_rate(truth.get('precision'), calls)} · recall {_rate(truth.get('recall'), reference)} · "
            f"incorrect-action rate {_rate(truth.get('incorrect_action_rate'), calls)} · "
            f"{truth.get('matched_calls', 0)} of {calls} calls match the reference's {reference}")


def _tokens(record: Record) -> str | None:
    tokens = record.get("tokens") or {}
    parts = [f"{role}: " + ", ".join(f"{key} {value}" for key, value in counts.items())
             for role, counts in tokens.items() if counts]
    return "; ".join(parts) or None


def _verdict_summary(record: Record) -> str | None:
    """`passed`, or `failed` with the count of milestones not reached and minefields fired (and why the
    final answer falls short, when it does)."""
    verdict = record.get("verdict")
    if not isinstance(verdict, dict):
        return None
    if verdict.get("passed"):
        return "passed"
    missed = sum(1 for milestone in verdict.get("milestones", []) if not milestone.get("reached"))
    answer = verdict.get("final_answer")
    why = f"; {answer.get('missing')}" if isinstance(answer, dict) and answer.get("held") is False else ""
    return f"failed: {missed} milestone(s) not reached, {len(verdict.get('fired', []))} minefield(s) fired{why}"


def _header(trajectory: Trajectory, record: Record) -> str:
    score = record.get("score")
    duration = record.get("duration")
    facts = [("scenario", trajectory.scenario), ("file", record.get("path", trajectory.scenario_path)),
             ("variant", trajectory.variant), ("agent", trajectory.agent), ("user", trajectory.user),
             ("outcome", record.get("outcome", "")), ("ended by", trajectory.ended_by),
             ("turns", record.get("turn_count")), ("threshold", record.get("threshold")),
             ("verdict", _verdict_summary(record)),
             ("ground truth", _ground_truth(record) or None), ("tokens", _tokens(record)),
             ("time", None if duration is None else f"{duration:.2f} s")]
    cells = "".join(f"<tr><th>{escape(name)}</th><td>{escape(str(value))}</td></tr>"
                    for name, value in facts if value is not None)
    score_cell = (f"<tr><th>similarity</th><td class='{_similarity_class(score)}'>{score:.4f}</td></tr>"
                  if score is not None else "")
    error = (f"<div class='ts-msg ts-error'><div class='ts-text'>error: {escape(str(record['error']))}</div></div>"
             if record.get("error") else "")
    return f"<table class='ts-facts'>{score_cell}{cells}</table>{error}"


def _goal(context: PageContext | None) -> str:
    if context is None or not context.goal:
        return ""
    knowledge = f"<p><b>Knows:</b> {escape(context.knowledge)}</p>" if context.knowledge else ""
    return f"<div class='ts-goal'><p><b>User goal:</b> {escape(context.goal)}</p>{knowledge}</div>"


def _navigation(context: PageContext | None, root: str) -> str:
    if context is None:
        return ""
    links = []
    if context.previous:
        links.append(f"<a rel='prev' href='{root}{escape(context.previous)}'>← previous item</a>")
    if context.next:
        links.append(f"<a rel='next' href='{root}{escape(context.next)}'>next item →</a>")
    links += [f"<a href='{root}{escape(link)}'>↑ {escape(label)}</a>" for label, link in context.groups]
    return f"<div class='ts-nav'>{''.join(links)}</div>" if links else ""


def _reference(context: PageContext | None) -> str:
    if context is None or not context.reference:
        return ""
    steps = "".join(f"<li><pre>{escape(step)}</pre></li>" for step in context.reference)
    return (f"<details class='ts-reference'><summary>Reference dialogue ({len(context.reference)} steps)</summary>"
            f"<ol>{steps}</ol></details>")


def _diagnosis(record: Record) -> str:
    findings = record.get("diagnosis") or []
    if not findings:
        return ""
    items = "".join(f"<li><b>{escape(f['code'])}</b> ×{f['count']} at messages "
                    f"{escape(', '.join(map(str, f.get('indices', []))) or '—')} {escape(f.get('detail', ''))}</li>"
                    for f in findings)
    return (f"<h3>Diagnosis</h3><ul class='ts-diagnosis'>{items}</ul>"
            + legend_html(str(f.get("code")) for f in findings))


_CHANGES = {"regression": "Baseline regression: this task passed in the baseline and fails now.",
            "improvement": "Improvement: this task failed in the baseline and passes now.",
            "known_failure": "Known failure: this task also failed in the baseline (expected failure)."}


def _baseline_change(record: Record) -> str:
    """A banner when the item changed against the run's baseline (the reason a CI gate failed)."""
    change = record.get("change")
    if change not in _CHANGES:
        return ""
    return f"<p class='ts-change {escape(change)}'><b>{escape(_CHANGES[change])}</b></p>"


def _conversation(messages: list[Message]) -> str:
    """Messages in order, each tool result nested under its call (matched by call id)."""
    waiting: dict[str, list[int]] = {}
    result_of: dict[int, Message] = {}
    for message in messages:
        if message.tool_call is not None:
            waiting.setdefault(message.tool_call.id, []).append(message.index)
        elif message.tool_call_id is not None and waiting.get(message.tool_call_id):
            result_of[waiting[message.tool_call_id].pop(0)] = message
    nested = {result.index for result in result_of.values()}
    return "".join(_message(message, result_of.get(message.index)) for message in messages
                   if message.index not in nested)


def trajectory_fragment(trajectory: Trajectory, record: Record, context: PageContext | None = None,
                        root: str = "") -> str:
    """The whole trajectory view as one self-contained HTML fragment (no scripts, no network)."""
    messages = {message.index: message for message in trajectory.messages}
    system = [m for m in trajectory.messages if m.sender is Role.SYSTEM]
    others = [m for m in trajectory.messages if m.sender is not Role.SYSTEM]
    system_html = (f"<details><summary>system messages ({len(system)})</summary>"
                   f"{''.join(_message(m) for m in system)}</details>") if system else ""
    return (f"<style>{STYLE}</style><div class='ts-trajectory'>{_navigation(context, root)}{_goal(context)}"
            f"{_baseline_change(record)}{_header(trajectory, record)}"
            f"{_events_table('Milestones', record.get('milestones', []), messages, False, _verdicts(record))}"
            f"{_events_table('Minefields', record.get('minefields', []), messages, minefield=True)}"
            f"{_diagnosis(record)}<h3>Conversation</h3>{_reference(context)}{system_html}"
            f"<div class='ts-conversation'>{_conversation(others)}</div>"
            f"{_world_changes(trajectory)}</div>")
