"""The pairing rules both hosted APIs enforce on a conversation, applied before it is sent.

Every tool call must be answered by a result in the very next turn, and a result must answer a call of
the turn before: OpenAI and Anthropic reject anything else with a 400. A conversation can break that
when calls over the per-turn cap were rejected without results, or when an episode's history was
built by something other than the episode loop (a replayed trajectory, an overridden fixture). Missing
results are added as errors saying the call was not run; a result that answers nothing becomes text
the model can still read.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_toolsandbox.roles.conversation import Called, Entry, Result, Returned, Said

NOT_RUN = "(no result: this call was not run)"


def paired(entries: Sequence[Entry]) -> tuple[Entry, ...]:
    """`entries` with every call answered right after it and every result answering a call."""
    fixed: list[Entry] = []
    waiting: dict[str, str] = {}  # call id -> tool name, of the calls of the turn just before
    for entry in entries:
        if isinstance(entry, Returned):
            answered = tuple(result for result in entry.results if result.call_id in waiting)
            answered_ids = {result.call_id for result in answered}
            results = answered + _not_run({key: name for key, name in waiting.items() if key not in answered_ids})
            if results:
                fixed.append(Returned(results))
            fixed.extend(Said(f"[{result.name or 'tool'} result] {result.content}", mine=False)
                         for result in entry.results if result.call_id not in waiting)
            waiting = {}
            continue
        if waiting:
            fixed.append(Returned(_not_run(waiting)))
        fixed.append(entry)
        waiting = {call.id: call.name for call in entry.calls} if isinstance(entry, Called) else {}
    if waiting:
        fixed.append(Returned(_not_run(waiting)))
    return tuple(fixed)


def _not_run(calls: dict[str, str]) -> tuple[Result, ...]:
    return tuple(Result(call_id=call_id, name=name, content=NOT_RUN, is_error=True) for call_id, name in calls.items())
