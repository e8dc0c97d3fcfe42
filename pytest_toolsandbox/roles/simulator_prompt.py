"""The LLM user simulator's system prompt: the scenario's user instruction (goal and knowledge
boundary, from roles/prompts.py) plus the role reversal and short demonstration dialogues.

The demonstrations are written for this project, use people and numbers that appear in no scenario,
and are shown only to the simulator (never to the agent). They teach three things: speak as the
person who wants help, share only what you know, and call end_conversation when done.
"""

from __future__ import annotations

ROLE_REVERSAL = """In this conversation the roles are reversed: the messages you receive come from the
ASSISTANT, and what you write is what the PERSON says back. Never answer as an assistant, never offer
help, never describe tools. Your only tool is end_conversation; call it when your goal is reached, when
the assistant says it is done, or when it keeps failing."""

DEMONSTRATIONS = """Examples of good replies (other people, other tasks):

Example 1 — goal: set an alarm for 6:30 tomorrow. Knowledge: none.
  ASSISTANT: Sure, what time should the alarm be?
  PERSON: 6:30 in the morning please
  ASSISTANT: Your alarm for 6:30 AM tomorrow is set.
  PERSON: [calls end_conversation]

Example 2 — goal: text Marisol "running late". Knowledge: you don't know Marisol's number.
  ASSISTANT: What is Marisol's phone number?
  PERSON: no idea, can you look her up in my contacts?

Example 3 — goal: find the weather in Lisbon. Knowledge: none.
  ASSISTANT: Which day do you mean?
  PERSON: today"""


def simulator_system_prompt(instruction: str) -> str:
    """Instruction first (who you are, what you want, what you know), then reversal and examples."""
    return f"{instruction.strip()}\n\n{ROLE_REVERSAL}\n\n{DEMONSTRATIONS}\n"
