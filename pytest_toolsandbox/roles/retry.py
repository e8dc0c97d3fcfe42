"""Retries around any provider: exponential backoff with jitter on 429, 5xx, timeouts and dropped
connections, honouring the server's `retry-after`. The sleeper and the jitter source are injectable,
so tests run the whole schedule without waiting.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

from pytest_toolsandbox.basics.run_defaults import DEFAULT_RETRIES, DEFAULT_RETRY_DELAY

RETRYABLE_STATUS = frozenset({408, 409, 429})
_CONNECTION_ERRORS = frozenset({"APIConnectionError", "APITimeoutError"})


@dataclass
class RetryPolicy:
    """`retries` extra attempts after the first; delays double from `base_delay` up to `max_delay`."""

    retries: int = DEFAULT_RETRIES
    base_delay: float = DEFAULT_RETRY_DELAY
    max_delay: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = field(default_factory=lambda: random.Random().random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 1)."""
        if retry_after is not None:
            return min(self.max_delay, max(0.0, retry_after))
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return backoff * (0.5 + 0.5 * self.jitter())  # jitter spreads workers that failed together


def status_of(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def error_detail(error: BaseException) -> dict[str, Any] | None:
    """The error object of an SDK error's JSON body: Anthropic's SDK keeps the whole `{"type": "error",
    "error": {…}}`, OpenAI's the inner object already (as some compatible servers send it); None when the
    body is no such object."""
    body: Any = getattr(error, "body", None)
    detail = body.get("error", body) if isinstance(body, dict) else None
    return detail if isinstance(detail, dict) else None


def is_quota_exhausted(error: BaseException) -> bool:
    """OpenAI's 429 `insufficient_quota`: the account is out of credit, which no wait fixes (a rate
    limit 429 says `rate_limit_exceeded`). The SDK exposes the body's error code as `code`."""
    detail = error_detail(error) or {}
    return "insufficient_quota" in {getattr(error, "code", None), detail.get("code"), detail.get("type")}


def is_retryable(error: BaseException) -> bool:
    """Rate limits, server errors, timeouts and lost connections are worth another attempt (an exhausted
    quota is not: it answers 429 too, but waiting never ends it)."""
    status = status_of(error)
    if status is not None:
        return (status in RETRYABLE_STATUS and not is_quota_exhausted(error)) or status >= 500
    return any(cls.__name__ in _CONNECTION_ERRORS for cls in type(error).__mro__)


def retry_after(error: BaseException) -> float | None:
    """The server's requested wait carried by an SDK error's response, if any."""
    response: Any = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    return None if headers is None else header_retry_after(headers)


def header_retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait response headers ask for (`retry-after-ms`, `retry-after` seconds or HTTP date), if any."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return float(milliseconds) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None
