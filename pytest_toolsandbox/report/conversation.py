"""A trajectory as a readable conversation (terminal text)."""

from __future__ import annotations

from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.trajectory import Trajectory

_LABELS = {Role.SYSTEM: "system", Role.USER: "user", Role.AGENT: "agent",
           Role.EXECUTION_ENVIRONMENT: "tools"}


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
        if changes:
            lines.append(f"world: {name} changed at message(s) {', '.join(map(str, changes))}")
    if trajectory.error:
        lines.append(f"error: {trajectory.error}")
    return "\n".join(lines)
