"""Request bodies in a canonical form, so matching ignores key order and whitespace."""

from __future__ import annotations

import json
from typing import Any


def canonical_body(body: Any) -> str:
    """JSON bodies re-serialised with sorted keys; anything else as text."""
    if body is None:
        return ""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    try:
        return json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, RecursionError):
        return text


def same_body(first: Any, second: Any) -> None:
    """A vcrpy matcher: raises AssertionError (vcrpy's contract) when the bodies differ."""
    if canonical_body(first.body) != canonical_body(second.body):
        raise AssertionError("normalised JSON bodies differ")
