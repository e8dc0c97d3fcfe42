"""A trajectory as an HTML fragment: the conversation with tool calls, results and errors, the
milestone and minefield tables, the diagnosis and the world changes.

Used for the static report's trajectory pages and for pytest-html's per-test extras. Everything that
comes from a run (agent and user text, tool arguments and results, names) is data and goes through
html.escape; the fragment carries its own small stylesheet so it reads the same in both reports.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from pytest_toolsandbox.jsondata import JsonDataError, loads
from pytest_toolsandbox.report.record import Record
from pytest_toolsandbox.world.messages import Message, Role
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
"""

_LABEL = {Role.SYSTEM: "system", Role.USER: "user", Role.AGENT: "agent", Role.EXECUTION_ENVIRONMENT: "tools"}


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True, default=str)


def _similarity_class(value: float | None) -> str:
    if value is None:
        return ""
    return "ts-good" if value >= 1.0 - 1e-9 else "ts-bad" if value <= 0.0 else "ts-mid"


def _message(message: Message) -> str:
    classes = [f"ts-msg ts-from-{escape(str(message.sender))}"]
    if message.exception:
        classes.append("ts-error")
    who = f"[{message.index}] {_LABEL[message.sender]} → {_LABEL[message.recipient]}"
    if message.tool_call is not None:
        try:
            arguments = _pretty(loads(message.tool_call.arguments or "{}"))
        except JsonDataError:  # not JSON, or nested absurdly deep: shown as the agent sent it
            arguments = message.tool_call.arguments
        body = (f"<div class='ts-text'>call <b>{escape(message.tool_call.name)}</b></div>"
                f"<pre>{escape(arguments)}</pre>")
    elif message.exception:
        body = f"<div class='ts-text'>✗ {escape(message.exception)}</div>"
    elif message.tool_trace is not None:
        body = (f"<div class='ts-text'>result of <b>{escape(message.tool_name or message.tool_trace.tool)}"
                f"</b></div><pre>{escape(_pretty(message.tool_trace.result))}</pre>")
    else:
        body = f"<div class='ts-text'>{escape(message.content)}</div>"
    return (f"<div class='{' '.join(classes)}' id='m{message.index}'>"
            f"<div class='ts-who'>{escape(who)}</div>{body}</div>")


def _events_table(title: str, outcomes: list[dict[str, Any]], messages: dict[int, Message]) -> str:
    if not outcomes:
        return ""
    rows = []
    for outcome in outcomes:
        index = outcome.get("index")
        target = messages.get(index) if index is not None else None
        where = (f"<a href='#m{index}'>[{index}]</a> {escape((target.exception or target.content)[:160])}"
                 if target is not None else "—")
        constraints = ", ".join(f"{escape(name)} {value:.3f}" for name, value in outcome.get("constraints", {}).items())
        similarity = outcome["similarity"]
        rows.append(f"<tr><td>{escape(outcome['name'])}</td>"
                    f"<td class='{_similarity_class(similarity)}'>{similarity:.3f}</td>"
                    f"<td>{where}</td><td>{constraints}</td></tr>")
    return (f"<h3>{escape(title)}</h3><table class='ts-events'><tr><th>{escape(title[:-1])}</th>"
            f"<th>similarity</th><th>matched message</th><th>constraints</th></tr>{''.join(rows)}</table>")


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


def _header(trajectory: Trajectory, record: Record) -> str:
    score = record.get("score")
    verdict = record.get("outcome", "")
    facts = [("scenario", trajectory.scenario), ("file", record.get("path", trajectory.scenario_path)),
             ("variant", trajectory.variant), ("agent", trajectory.agent), ("user", trajectory.user),
             ("outcome", verdict), ("ended by", trajectory.ended_by),
             ("turns", record.get("turn_count")), ("threshold", record.get("threshold"))]
    cells = "".join(f"<tr><th>{escape(name)}</th><td>{escape(str(value))}</td></tr>"
                    for name, value in facts if value is not None)
    score_cell = (f"<tr><th>similarity</th><td class='{_similarity_class(score)}'>{score:.4f}</td></tr>"
                  if score is not None else "")
    error = (f"<div class='ts-msg ts-error'><div class='ts-text'>error: {escape(str(record['error']))}</div></div>"
             if record.get("error") else "")
    return f"<table class='ts-facts'>{score_cell}{cells}</table>{error}"


def _diagnosis(record: Record) -> str:
    findings = record.get("diagnosis") or []
    if not findings:
        return ""
    items = "".join(f"<li><b>{escape(f['code'])}</b> ×{f['count']} at messages "
                    f"{escape(', '.join(map(str, f.get('indices', []))) or '—')} {escape(f.get('detail', ''))}</li>"
                    for f in findings)
    return f"<h3>Diagnosis</h3><ul class='ts-diagnosis'>{items}</ul>"


def trajectory_fragment(trajectory: Trajectory, record: Record) -> str:
    """The whole trajectory view as one self-contained HTML fragment (no scripts, no network)."""
    messages = {message.index: message for message in trajectory.messages}
    system = [m for m in trajectory.messages if m.sender is Role.SYSTEM]
    others = [m for m in trajectory.messages if m.sender is not Role.SYSTEM]
    system_html = (f"<details><summary>system messages ({len(system)})</summary>"
                   f"{''.join(_message(m) for m in system)}</details>") if system else ""
    return (f"<style>{STYLE}</style><div class='ts-trajectory'>{_header(trajectory, record)}"
            f"{_events_table('Milestones', record.get('milestones', []), messages)}"
            f"{_events_table('Minefields', record.get('minefields', []), messages)}"
            f"{_diagnosis(record)}<h3>Conversation</h3>{system_html}"
            f"<div class='ts-conversation'>{''.join(_message(m) for m in others)}</div>"
            f"{_world_changes(trajectory)}</div>")
