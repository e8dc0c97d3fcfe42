"""Shared rate limits for live model and API requests: requests and tokens per minute per (host, model).

Every live request of the process (all episodes, all threads) passes one `RateLimiter` before it is
sent, so concurrent episodes share the provider's budget instead of each assuming it has all of it.
Requests answered from a cassette never reach the limiter. Each (host, model) has two token buckets:
requests per minute (one per request) and tokens per minute (an estimate before the request, corrected
with the usage the response reports). A bucket holds ten seconds of its budget, so a run starts with
a short burst and then settles to an even pace. A 429 (or a 503 with `retry-after`) pauses every
request to that host until the server's `retry-after`, or a short backoff when it names none.

One request never reserves more than a bucket holds: a conversation estimated at a million tokens
would otherwise put its (host, model) minutes into debt and stall every other episode behind it. A
request estimated over `max_request_tokens` (`--max-request-tokens`) is not sent at all
(`RequestTooLarge`, its item's error). A waiting request looks at its episode's stop switch while it
waits, so an episode abandoned by its timeout gives its reservation back and sends nothing.

Waiting goes through an injectable clock and sleeper, so tests check the schedule without sleeping.
The process-wide limiter is configured once per run (`configure_limits`, called by the plugin) and
looked up by the cassette transport (`shared_limiter`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from pytest_toolsandbox.basics.limits import RequestTooLarge
from pytest_toolsandbox.roles.retry import header_retry_after

DEFAULT_RPM = 60.0
DEFAULT_TPM = 100_000.0
"""Conservative defaults for remote providers (docs/plugin.md says why)."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
BURST_SECONDS = 10.0
"""A bucket holds this many seconds of its per-minute budget."""
PAUSE_WITHOUT_RETRY_AFTER = 5.0
"""Seconds the pool pauses after a 429 that names no retry-after."""
MAX_PAUSE = 300.0
"""A retry-after beyond this is capped: a misbehaving server should not stall a run for hours."""
_CHARS_PER_TOKEN = 4
DEFAULT_MAX_REQUEST_TOKENS = 1_000_000
"""Generous: above the context window of current models (a request that large fails at the provider)."""
STOP_CHECK_SECONDS = 0.5
"""While a request waits for the budget, how often it looks whether its episode was stopped."""


@dataclass
class TokenBucket:
    """`per_minute` units refill evenly; a taker reserves units at once and waits for the debt to clear.

    Reserving (the level may go negative) rather than polling keeps waiting threads in arrival order
    and lets each compute its own wait under one short lock.
    """

    per_minute: float
    level: float = field(init=False)
    updated: float = 0.0

    def __post_init__(self) -> None:
        self.level = self.capacity

    @property
    def capacity(self) -> float:
        return max(1.0, self.per_minute * BURST_SECONDS / 60.0)

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + max(0.0, now - self.updated) * self.per_minute / 60.0)
        self.updated = now

    def reserve(self, amount: float, now: float) -> float:
        """Take `amount`; seconds until the bucket is out of debt again (0: go now)."""
        self._refill(now)
        self.level -= amount
        return 0.0 if self.level >= 0 else -self.level * 60.0 / self.per_minute

    def refund(self, amount: float, now: float) -> None:
        """Give back `amount` (negative: take more) once the real cost is known."""
        self._refill(now)
        self.level = min(self.capacity, self.level + amount)


@dataclass(frozen=True)
class Limits:
    """Per-minute budgets of this process; 0 = unlimited. `explicit` names the limits the user set,
    which alone apply to loopback hosts (a local model server is not throttled by default)."""

    rpm: float = DEFAULT_RPM
    tpm: float = DEFAULT_TPM
    explicit: frozenset[str] = frozenset()
    max_request_tokens: int = DEFAULT_MAX_REQUEST_TOKENS
    """Largest estimated request sent to any host, loopback included; 0 = no limit."""

    def for_host(self, host: str) -> tuple[float, float]:
        if host.lower() in LOOPBACK_HOSTS:
            return (self.rpm if "rpm" in self.explicit else 0.0, self.tpm if "tpm" in self.explicit else 0.0)
        return self.rpm, self.tpm


def estimate_tokens(body: bytes) -> int:
    """Prompt ≈ one token per four bytes of the request body, plus the output limit it asks for."""
    prompt = len(body) // _CHARS_PER_TOKEN
    try:
        parsed = json.loads(body) if body else None
    except (ValueError, RecursionError):
        return prompt
    if not isinstance(parsed, dict):
        return prompt
    limit = parsed.get("max_tokens", parsed.get("max_output_tokens", 0))
    return prompt + (limit if isinstance(limit, int) and limit > 0 else 0)


def model_of(body: bytes) -> str:
    """The JSON body's `model` field ('' when there is none, e.g. a tool API's GET)."""
    try:
        parsed = json.loads(body) if body else None
    except (ValueError, RecursionError):
        return ""
    model = parsed.get("model") if isinstance(parsed, dict) else None
    return model if isinstance(model, str) else ""


def used_tokens(body: bytes) -> int | None:
    """The tokens a response reports (OpenAI prompt + completion, Anthropic input + output), if any."""
    try:
        parsed = json.loads(body) if body else None
    except (ValueError, RecursionError):
        return None
    usage = parsed.get("usage") if isinstance(parsed, dict) else None
    if not isinstance(usage, dict):
        return None
    for first, second in (("prompt_tokens", "completion_tokens"), ("input_tokens", "output_tokens")):
        counts = [usage.get(first), usage.get(second)]
        if any(isinstance(count, int) for count in counts):
            return sum(count for count in counts if isinstance(count, int))
    return None


@dataclass
class Ticket:
    """One admitted request: what it reserved, so the response can correct the token bucket."""

    host: str
    model: str
    estimate: int
    """Tokens reserved (the estimate, capped at the bucket's capacity)."""
    requests: int = 0
    """Request units reserved (0 before the reservation, or with no request budget)."""


class RateLimiter:
    """The buckets of one process, keyed by (host, model), and the per-host pauses after a 429."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.limits = limits or Limits()
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str], tuple[TokenBucket | None, TokenBucket | None]] = {}
        self._paused_until: dict[str, float] = {}

    def _throttled(self, host: str) -> bool:
        return any(self.limits.for_host(host))

    def _buckets_for(self, host: str, model: str, now: float) -> tuple[TokenBucket | None, TokenBucket | None]:
        key = (host, model)
        if key not in self._buckets:
            rpm, tpm = self.limits.for_host(host)
            self._buckets[key] = (TokenBucket(rpm, updated=now) if rpm else None,
                                  TokenBucket(tpm, updated=now) if tpm else None)
        return self._buckets[key]

    def acquire(self, host: str, body: bytes, checkpoint: Callable[[], None] | None = None) -> Ticket:
        """Wait until a request of this body may go to `host`: while the host is paused after a 429 (any
        host, loopback included: the server asked), then for the budgets (only hosts that have some).
        `checkpoint` raises when the caller's episode was stopped: called at least every
        `STOP_CHECK_SECONDS` while waiting, and the reservation is given back when it raises."""
        estimate = self._check_size(host, body)
        throttled = self._throttled(host)
        ticket = Ticket(host, model_of(body), estimate) if throttled else Ticket(host, "", 0)
        reserved = not throttled  # no budget to reserve from: only a pause can make it wait
        owed = 0.0  # seconds still to wait for the reservation's debt to clear
        while True:
            with self._lock:
                now = self.clock()
                paused = self._paused_until.get(host, 0.0) - now
                if paused <= 0 and not reserved:
                    requests, tokens = self._buckets_for(host, ticket.model, now)
                    ticket.estimate = int(min(ticket.estimate, tokens.capacity)) if tokens else 0
                    ticket.requests = 1 if requests else 0
                    owed = max(requests.reserve(1, now) if requests else 0.0,
                               tokens.reserve(ticket.estimate, now) if tokens else 0.0)
                    reserved = True
            if checkpoint is not None:
                try:
                    checkpoint()
                except BaseException:
                    self._give_back(ticket)
                    raise
            wait = paused if paused > 0 else owed
            if wait <= 0:
                return ticket
            step = wait if checkpoint is None else min(wait, STOP_CHECK_SECONDS)
            self.sleep(step)  # then look again: a 429 may have paused the host meanwhile
            if paused <= 0:
                owed -= step

    def _check_size(self, host: str, body: bytes) -> int:
        """The request's token estimate; RequestTooLarge over `max_request_tokens`."""
        estimate = estimate_tokens(body)
        limit = self.limits.max_request_tokens
        if limit and estimate > limit:
            raise RequestTooLarge(f"a request to {host} is estimated at {estimate:,} tokens ({len(body):,} bytes), "
                                  f"over --max-request-tokens {limit:,}: it was not sent; raise the limit (0 = none) "
                                  "if the model takes requests that large")
        return estimate

    def _give_back(self, ticket: Ticket) -> None:
        """A reserved request that will not be sent returns what it reserved."""
        with self._lock:
            now = self.clock()
            requests, tokens = self._buckets.get((ticket.host, ticket.model), (None, None))
            if requests is not None and ticket.requests:
                requests.refund(ticket.requests, now)
            if tokens is not None and ticket.estimate:
                tokens.refund(ticket.estimate, now)
            ticket.requests = ticket.estimate = 0

    def observe(self, ticket: Ticket, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """After a live response: correct the token estimate, and pause the host on a rate limit."""
        throttled = self._throttled(ticket.host)
        if not throttled and status not in (429, 503):
            return
        with self._lock:
            now = self.clock()
            if throttled:
                _, tokens = self._buckets_for(ticket.host, ticket.model, now)
                used = used_tokens(body) if status < 400 else 0
                if tokens is not None and used is not None:  # at most one bucket of debt for what it used
                    tokens.refund(max(ticket.estimate - used, -tokens.capacity), now)
            asked = header_retry_after(headers)
            if status == 429 or (status == 503 and asked is not None):
                pause = min(MAX_PAUSE, max(0.0, asked if asked is not None else PAUSE_WITHOUT_RETRY_AFTER))
                self._paused_until[ticket.host] = max(self._paused_until.get(ticket.host, 0.0), now + pause)


_shared = RateLimiter()
_shared_lock = threading.Lock()


def configure_limits(rpm: float | None, tpm: float | None, environ: Mapping[str, str] | None = None,
                     clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                     max_request_tokens: int = DEFAULT_MAX_REQUEST_TOKENS) -> RateLimiter:
    """Set this process's limiter for the run: `rpm`/`tpm` as given (None: the default, not explicit;
    0: unlimited), each divided among xdist workers (`PYTEST_XDIST_WORKER_COUNT`), so the run as a
    whole keeps to the budget."""
    global _shared
    import os

    environ = os.environ if environ is None else environ
    try:
        workers = max(1, int(environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    except ValueError:
        workers = 1
    explicit: Collection[str] = [name for name, value in (("rpm", rpm), ("tpm", tpm)) if value is not None]
    limits = Limits(rpm=(DEFAULT_RPM if rpm is None else rpm) / workers,
                    tpm=(DEFAULT_TPM if tpm is None else tpm) / workers, explicit=frozenset(explicit),
                    max_request_tokens=max_request_tokens)
    with _shared_lock:
        _shared = RateLimiter(limits, clock=clock, sleep=sleep)
        return _shared


def shared_limiter() -> RateLimiter:
    """The limiter every live request of this process passes."""
    with _shared_lock:
        return _shared

