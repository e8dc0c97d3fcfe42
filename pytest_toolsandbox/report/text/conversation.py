"""A trajectory as a readable conversation (terminal text)."""

from __future__ import annotations

import json
from typing import Any

from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.trajectory import Trajectory

_LABELS = {Role.SYSTEM: "system", Role.USER: "user", Role.AGENT: "agent",
           Role.EXECUTION_ENVIRONMENT: "tools"}


def _row_keys(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {json.dumps(row, sort_keys=True, default=str): row for row in rows}


def _compact(row: dict[str, Any]) -> str:
    return ", ".join(f"{column}={value!r}" for column, value in row.items() if value is not None)


def format_conversation(trajectory: Trajectory, show_system: bool = False) -> str:
    lines = [f"scenario {trajectory.scenario} · variant {trajectory.variant} · agent {trajectory.agent} · "
             f"user {trajectory.user} · ended by {trajectory.ended_by}"]
    for message in trajectory.messages:
        if message.sender is Role.SYSTEM and not show_system:
            continue
        arrow = f"{_LABELS[message.sender]} → {_LABELS[message.recipient]}"
        text = message.content
        if message.exception:
            text = f"✗ {message.exception}"
        lines.append(f"[{message.index:>2}] {arrow:<16} {text}")
    for name, snapshots in trajectory.snapshots.items():
        changes = [snapshot.index for snapshot in snapshots[1:]]
        if not changes:
            continue
        lines.append(f"world: {name} changed at message(s) {', '.join(map(str, changes))}")
        before, after = (_row_keys(snapshots[0].rows), _row_keys(snapshots[-1].rows))
        lines.extend(f"  - {_compact(row)}" for key, row in before.items() if key not in after)
        lines.extend(f"  + {_compact(row)}" for key, row in after.items() if key not in before)
    if trajectory.error:
        lines.append(f"error: {trajectory.error}")
    return "\n".join(lines)
