"""Token counts as a provider reports them, checked before they are added up.

A server's `usage` is data from outside: a compatible server may leave it out, and a broken or hostile one
may send a negative, non-finite or non-numeric count. Such a count is unknown (None), never a number that
would lower a run's totals below what was spent or turn an item into an error; the caller counts the
request as one of unknown usage, and the caps say they cannot count it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_toolsandbox.roles.reply import Reply


def token_count(value: Any) -> int | None:
    """A non-negative whole token count, or None when `value` is missing or not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return int(value)


def reported_tokens(usage: Any, input_field: str, output_field: str) -> tuple[int | None, int | None]:
    """(input, output) tokens of an SDK usage object (or dict); None for each count missing or invalid."""
    if usage is None:
        return None, None
    if isinstance(usage, dict):
        return token_count(usage.get(input_field)), token_count(usage.get(output_field))
    return token_count(getattr(usage, input_field, None)), token_count(getattr(usage, output_field, None))


def new_usage() -> dict[str, int]:
    """A role's counts: tokens, answered requests, retried attempts, and answered requests whose usage was
    missing or invalid (their tokens are not in the totals)."""
    return {"input_tokens": 0, "output_tokens": 0, "requests": 0, "retries": 0, "unknown_usage": 0}


def add_reply(usage: dict[str, int], reply: Reply) -> None:
    """Count one answered request: its tokens when both counts are valid, else as one of unknown usage."""
    usage["requests"] += 1
    if reply.input_tokens is None or reply.output_tokens is None:
        usage["unknown_usage"] += 1
        return
    usage["input_tokens"] += reply.input_tokens
    usage["output_tokens"] += reply.output_tokens
