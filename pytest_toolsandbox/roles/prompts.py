"""Prompts: the agent's system message and the user simulator's instruction (our own wording)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_toolsandbox.scenario.models import Demonstration, UserSpec

AGENT_SYSTEM_PROMPT = (
    "You are an assistant on the user's phone with access to tools. Never guess the value of a tool "
    "argument: if the request is ambiguous or information is missing, ask the user."
)

_USER_RULES = """You are role-playing a person who wants something done by an assistant on their phone.
Stay in character as that person for the whole conversation:
1. You are the one asking for help; never offer help or act like an assistant yourself.
2. Only use the information given below. Never invent names, numbers, dates or other facts.
3. Speak briefly and casually, the way people text.
4. If the assistant is stuck, share another piece of information you have, or suggest it use its tools.
5. The assistant may change phone settings (wifi, cellular, location, low battery mode); let it.
6. When the task is done, or the assistant says it is done, call end_conversation.
7. If the assistant fails five times in a row, call end_conversation.
"""


def user_instruction(user: UserSpec) -> str:
    """The user simulator's system message: rules, goal and knowledge boundary."""
    knowledge = f"\nWhat you know: {user.knowledge}" if user.knowledge else ""
    examples = "".join(_demonstration(position, d) for position, d in enumerate(user.demonstrations, 1))
    return f"{_USER_RULES}\nYour goal: {user.goal}{knowledge}{examples}"


def _demonstration(position: int, demonstration: Demonstration) -> str:
    """A scenario's own example conversation (someone else's goal), as a transcript."""
    speakers = {"user": "PERSON", "agent": "ASSISTANT", "user_calls": "PERSON calls"}
    turns = "\n".join(f"  {speakers[role]}: {text}" for turn in demonstration.turns for role, text in turn.items())
    return f"\n\nExample conversation {position} (another person's goal: {demonstration.goal}):\n{turns}"
