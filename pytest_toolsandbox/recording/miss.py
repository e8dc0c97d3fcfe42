"""A request that is not in the cassette, explained: a unified diff between the request's normalised
body and the nearest recorded request, so a changed prompt or tool schema is visible at a glance."""

from __future__ import annotations

import difflib
import json
from typing import Any

from pytest_toolsandbox.recording.normalise import canonical_body

_MAX_DIFF_LINES = 60


class CassetteMiss(RuntimeError):
    """The episode sent a request its cassette does not hold, and the record mode forbids recording."""

    @classmethod
    def from_vcr(cls, error: Any) -> CassetteMiss:
        """The request is shown as matching saw it, filtered like a recorded one (no credentials in its
        URL, no key in its body), so the diff shows only real differences and no secret."""
        request = error.failed_request
        shown = error.cassette.filter_request(request) if hasattr(error.cassette, "filter_request") else None
        return cls(miss_message(error.cassette, shown or request))


def _pretty(request: Any) -> list[str]:
    body = canonical_body(request.body)
    try:
        text = json.dumps(json.loads(body), indent=1, sort_keys=True, ensure_ascii=False)
    except (ValueError, TypeError):
        text = body
    return [f"{request.method} {request.uri}", *text.splitlines()]


def nearest(cassette: Any, request: Any) -> Any | None:
    """The recorded request whose pretty form is closest to `request`'s (same endpoint preferred)."""
    mine = _pretty(request)
    candidates = list(getattr(cassette, "requests", []))
    if not candidates:
        return None
    same_endpoint = [old for old in candidates if (old.method, old.path) == (request.method, request.path)]
    return max(same_endpoint or candidates,
               key=lambda old: difflib.SequenceMatcher(None, _pretty(old), mine, autojunk=False).ratio())


def miss_message(cassette: Any, request: Any) -> str:
    """Which cassette, which request, and how it differs from the nearest recorded one."""
    path = getattr(cassette, "_path", "?")
    lines = [f"request not in cassette {path} ({request.method} {request.uri}); the record mode forbids "
             "recording it"]
    old = nearest(cassette, request)
    if old is None:
        lines.append("the cassette holds no requests")
    else:
        diff = list(difflib.unified_diff(_pretty(old), _pretty(request), "recorded", "sent", n=2, lineterm=""))
        if len(diff) > _MAX_DIFF_LINES:
            diff = [*diff[:_MAX_DIFF_LINES], f"… {len(diff) - _MAX_DIFF_LINES} more diff lines"]
        lines.append("diff against the nearest recorded request:" if diff else
                     "the nearest recorded request is identical but was already played (one more call "
                     "than when it was recorded)")
        lines.extend(diff)
    lines.append("re-record with --ts-record-mode=all (or new_episodes to keep the recorded part)")
    return "\n".join(lines)
