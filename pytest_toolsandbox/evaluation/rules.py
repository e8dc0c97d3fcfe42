"""The two rule sets a run can score by: ours (the default) and the reference implementation's.

They differ where the reference's runner and ours treat a failure differently (docs/toolsandbox.md
lists every difference and its effect):

- A call the reference's agent cannot turn into code — a tool name it does not offer, or arguments
  that are not JSON — raises inside the reference's agent, ends the episode and scores 0 with the
  scenario's message cap as turn count. Under our rules the agent gets an error reply and goes on.
- An item whose episode errored counts as 0 (turn count: its message cap) in every mean under the
  reference's rules; ours leave it out of the means and count it apart.
- Sampling temperature: the provider's default under the reference's rules (its agents send none),
  0 under ours, unless `--temperature` is given.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_toolsandbox.basics.jsondata import JsonDataError, loads
from pytest_toolsandbox.basics.vocabulary import REFERENCE, RULES
from pytest_toolsandbox.world.messages import Message, Role

__all__ = ["REFERENCE", "RULES", "crash_reason"]


def crash_reason(offered: Iterable[str], messages: Iterable[Message]) -> tuple[int, str] | None:
    """The first agent call in `messages` that the reference's agent would crash on, as (message index,
    reason); None when there is none. `offered` are the tool names the agent was offered (scrambled
    names in a scrambled variant: the names the agent sees)."""
    names = set(offered)
    for message in messages:
        call = message.tool_call
        if message.sender is not Role.AGENT or call is None:
            continue
        if call.name not in names:
            return message.index, f"the agent called {call.name!r}, a tool it was not offered"
        if call.format_error is not None or not _is_json(call.arguments):
            return message.index, f"the arguments of the agent's call to {call.name!r} are not JSON"
    return None


def _is_json(text: str) -> bool:
    """Empty arguments count as `{}` (the SDKs send them for tools without parameters)."""
    if not text.strip():
        return True
    try:
        loads(text)
    except JsonDataError:
        return False
    return True
