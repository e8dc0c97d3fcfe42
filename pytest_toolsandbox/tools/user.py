"""The one tool of the user: ending the conversation."""

from __future__ import annotations

from pytest_toolsandbox.tools.spec import tool
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.world import World


@tool(domain="user", visible_to=Role.USER)
def end_conversation(world: World) -> None:
    """End the conversation once the task is complete or cannot be completed."""
    world.end_conversation()
