"""The rate limits a provider announces in its response headers, read into one shape.

Both hosted APIs say on every answer how much of the key's per-minute budget is left:

- OpenAI: `x-ratelimit-limit-requests`, `x-ratelimit-remaining-requests`, `x-ratelimit-reset-requests`
  (a duration such as "1s", "20ms" or "6m0s"), and the same three for `-tokens`;
- Anthropic: `anthropic-ratelimit-requests-limit`, `-remaining`, `-reset` (an RFC 3339 time), and the
  same for `tokens`, `input-tokens` and `output-tokens`.

The rate limiter (ratelimit.py) paces to these figures instead of its own defaults. Header values are
data from the network: anything that is not a finite non-negative number is ignored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?")
_OPENAI = "x-ratelimit-{part}-{unit}"
_ANTHROPIC = "anthropic-ratelimit-{unit}-{part}"
_TOKEN_UNITS = ("tokens", "input-tokens")
"""Anthropic's token limits, most inclusive first: our estimate of a request is input plus its output limit."""


@dataclass(frozen=True)
class Announced:
    """One limit as the provider announced it on one answer."""

    limit: float
    """Units per minute."""
    remaining: float
    """Units left when the answer was sent."""
    reset: float | None
    """Seconds until the budget is full again, when announced."""


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def reset_seconds(text: str | None, now: float) -> float | None:
    """A reset as OpenAI ("6m0s", "1.5s", "20ms") or Anthropic (RFC 3339 time; `now` is epoch seconds) writes it."""
    if not text:
        return None
    match = _DURATION.fullmatch(text.strip())
    if match and any(match.groups()):
        hours, minutes, seconds, millis = (float(group) if group else 0.0 for group in match.groups())
        return hours * 3600 + minutes * 60 + seconds + millis / 1000
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return _number(text)
    return max(0.0, moment.timestamp() - now) if moment.tzinfo is not None else None


def _announced(headers: Mapping[str, str], names: str, unit: str, now: float) -> Announced | None:
    limit = _number(headers.get(names.format(part="limit", unit=unit)))
    remaining = _number(headers.get(names.format(part="remaining", unit=unit)))
    if not limit or remaining is None:
        return None
    return Announced(limit, min(remaining, limit), reset_seconds(headers.get(names.format(part="reset", unit=unit)),
                                                                 now))


def announced_limits(headers: Mapping[str, str], now: float) -> dict[str, Announced]:
    """{"requests": …, "tokens": …} as far as the headers announce them (`now`: epoch seconds)."""
    found: dict[str, Announced] = {}
    requests = (_announced(headers, _OPENAI, "requests", now)
                or _announced(headers, _ANTHROPIC, "requests", now))
    if requests is not None:
        found["requests"] = requests
    tokens = _announced(headers, _OPENAI, "tokens", now) or next(
        (limit for unit in _TOKEN_UNITS if (limit := _announced(headers, _ANTHROPIC, unit, now)) is not None), None)
    if tokens is not None:
        found["tokens"] = tokens
    return found
