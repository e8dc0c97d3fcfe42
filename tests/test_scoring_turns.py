"""Turn count as the paper's Table 11 counts it."""

from __future__ import annotations

from pytest_toolsandbox.evaluation.turns import turn_count
from pytest_toolsandbox.world.messages import Message, Role

S, U, A, E = Role.SYSTEM, Role.USER, Role.AGENT, Role.EXECUTION_ENVIRONMENT


def log(*pairs: tuple[Role, Role], visible_to: dict[int, tuple[Role, ...]] | None = None) -> list[Message]:
    visible_to = visible_to or {}
    return [Message(index=i, sender=sender, recipient=recipient, visible_to=visible_to.get(i, ()))
            for i, (sender, recipient) in enumerate(pairs)]


def test_seeded_opening_system_and_user_tool_traffic_are_not_counted() -> None:
    messages = log((S, A), (S, U), (U, A), (A, E), (E, A), (A, U), (U, A), (A, U), (U, E), (E, U))
    assert turn_count(messages) == 5  # call, reply, answer, user reply, answer


def test_messages_only_the_user_sees_are_not_counted() -> None:
    messages = log((S, A), (S, U), (U, A), (A, U), (S, U), (U, A), visible_to={4: (U,), 5: (U,)})
    assert turn_count(messages) == 1


def test_an_empty_conversation_has_no_turns() -> None:
    assert turn_count(log((S, A), (S, U), (U, A))) == 0
