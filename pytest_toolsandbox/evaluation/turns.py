"""Turn count as the paper's Table 11 counts it.

Every message after the scenario's seeded opening counts, except system messages, the user's own
traffic with the execution environment (ending the conversation) and messages only the user sees.
The seeded first user message is not counted (the reference drops it through null visibility).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_toolsandbox.scenario.world_builder import FIRST_USER_MESSAGE_INDEX
from pytest_toolsandbox.world.messages import Message, Role

_USER_TOOLS = {(Role.USER, Role.EXECUTION_ENVIRONMENT), (Role.EXECUTION_ENVIRONMENT, Role.USER)}


def turn_count(messages: Sequence[Message]) -> int:
    """Messages of the conversation proper (README example: 4 calls + 4 replies + the answer = 9)."""
    return sum(
        1 for message in messages
        if message.index > FIRST_USER_MESSAGE_INDEX
        and message.sender is not Role.SYSTEM
        and (message.sender, message.recipient) not in _USER_TOOLS
        and tuple(message.visible_to) != (Role.USER,)
    )
