"""Which part of the reference dialogue produced which message, and the dialogue without some parts.

The validator asks "is this milestone needed?" by taking away the reference step(s) that satisfy it
and replaying. That needs two things this module provides:

- `Piece`: the unit that can be taken away — one call of a (possibly parallel) call step, or one text
  step of the agent or the user.
- `owners()`: for a trajectory played by the reference agent and the scripted user, the piece behind
  each message. An agent call message and the execution environment's reply to it belong to the call;
  an agent text message to its text step; a user message after the first to its `user:` step.

A text step is never deleted but replaced by a neutral filler line: the agent's text hands the floor to
the user (who then says the next scripted line), so deleting it would shift every later reply and
measure the wrong thing. A filler message is owned by no piece.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pytest_toolsandbox.scenario.reference import ReferenceStep
from pytest_toolsandbox.scenario.world_builder import FIRST_USER_MESSAGE_INDEX
from pytest_toolsandbox.world.messages import Message, Role

FILLER = "Okay."
"""What a taken-away text step says instead: matches no realistic milestone text."""


@dataclass(frozen=True, order=True)
class Piece:
    """One removable part of the reference: call `call` of step `step`, or text step `step` (call None)."""

    step: int
    call: int | None = None

    def describe(self, reference: Sequence[ReferenceStep]) -> str:
        step = reference[self.step]
        if self.call is not None:
            call = step.calls[self.call]
            arguments = ", ".join(f"{name}={value!r}" for name, value in call.arguments.items())
            where = f"reference[{self.step}]" + (f" call {self.call + 1}" if len(step.calls) > 1 else "")
            return f"{where} {call.tool}({arguments})"
        who, text = ("agent", step.agent) if step.agent is not None else ("user", step.user)
        return f"reference[{self.step}] {who}: {_short(text or '')!r}"


@dataclass(frozen=True)
class Entry:
    """One step of a (possibly reduced) reference, with where it came from."""

    origin: int
    step: ReferenceStep
    calls: tuple[int, ...] = ()  # original positions of the calls kept
    filler: bool = False


def pieces(reference: Sequence[ReferenceStep]) -> list[Piece]:
    """Every removable piece of a reference dialogue, in order."""
    out: list[Piece] = []
    for position, step in enumerate(reference):
        if step.calls:
            out.extend(Piece(position, call) for call in range(len(step.calls)))
        else:
            out.append(Piece(position))
    return out


def script(reference: Sequence[ReferenceStep], removed: Collection[Piece] = ()) -> list[Entry]:
    """The reference without `removed`: calls dropped (an emptied step disappears), texts made filler."""
    entries: list[Entry] = []
    for position, step in enumerate(reference):
        if step.calls:
            kept = tuple(call for call in range(len(step.calls)) if Piece(position, call) not in removed)
            if kept:
                entries.append(Entry(position, ReferenceStep(calls=tuple(step.calls[c] for c in kept)), kept))
        elif Piece(position) in removed:
            filler = ReferenceStep(agent=FILLER) if step.agent is not None else ReferenceStep(user=FILLER)
            entries.append(Entry(position, filler, filler=True))
        else:
            entries.append(Entry(position, step))
    return entries


def owners(messages: Sequence[Message], entries: Sequence[Entry]) -> dict[int, Piece]:
    """Message index → the piece of the original reference that produced it.

    Relies on how the reference agent plays: one turn per agent step, a turn's calls posted back to back
    (so a new turn starts whenever an agent message follows someone else's), and the scripted user
    saying the `user:` steps in order. Messages no piece produced (the first user message, the
    agent's "nothing more to add" after its script ran out, fillers, the user's end) are absent.
    """
    agent_entries = [entry for entry in entries if entry.step.user is None]
    user_entries = [entry for entry in entries if entry.step.user is not None]
    found: dict[int, Piece] = {}
    by_call_id: dict[str, Piece] = {}
    turn, in_turn, user_turn = -1, 0, 0
    previous: Role | None = None
    for message in messages[FIRST_USER_MESSAGE_INDEX + 1:]:
        if message.sender is Role.AGENT:
            if previous is not Role.AGENT:
                turn, in_turn = turn + 1, 0
            entry = agent_entries[turn] if turn < len(agent_entries) else None
            if entry is not None and not entry.filler:
                if message.tool_call is not None and in_turn < len(entry.calls):
                    piece = Piece(entry.origin, entry.calls[in_turn])
                    found[message.index] = by_call_id[message.tool_call.id] = piece
                elif message.tool_call is None and entry.step.agent is not None:
                    found[message.index] = Piece(entry.origin)
            in_turn += 1
        elif message.sender is Role.EXECUTION_ENVIRONMENT and message.tool_call_id in by_call_id:
            found[message.index] = by_call_id[message.tool_call_id]
        elif message.sender is Role.USER and message.recipient is Role.AGENT:
            entry = user_entries[user_turn] if user_turn < len(user_entries) else None
            user_turn += 1
            if entry is not None and not entry.filler:
                found[message.index] = Piece(entry.origin)
        previous = message.sender
    return found


def describe_message(message: Message) -> str:
    """`agent → user: "text…"` for error messages."""
    return f"{message.sender} → {message.recipient}: {_short(message.content)!r}"


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
