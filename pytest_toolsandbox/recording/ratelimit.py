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

Limits that come from the provider: both hosted APIs announce the key's real limits on every answer
(provider_limits.py). Once a (host, model) has announced them, its buckets take the provider's figures
in place of our defaults (each xdist worker its share): the per-minute limit as the refill rate, the
whole minute as the bucket (as the providers keep it), and the announced remaining budget, less what
this process has in flight, as the level. Our defaults therefore never hold a run below what the
provider allows; a limit the user set (`--rpm`, `--tpm`) still applies when it is lower. A 429 without
`retry-after` pauses until the exhausted limit's announced reset. Whose limit a request waited for (our
default, the user's, the provider's, or a 429's pause) is added up per limit (`waited`), and the
terminal names it when it first holds requests back and at the end of the run (ratelimit_report.py).

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
from pytest_toolsandbox.basics.run_defaults import DEFAULT_MAX_REQUEST_TOKENS, DEFAULT_RPM, DEFAULT_TPM
from pytest_toolsandbox.recording.provider_limits import Announced, announced_limits
from pytest_toolsandbox.roles.retry import header_retry_after

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
BURST_SECONDS = 10.0
"""A bucket holds this many seconds of its per-minute budget."""
PAUSE_WITHOUT_RETRY_AFTER = 5.0
"""Seconds the pool pauses after a 429 that names no retry-after."""
MAX_PAUSE = 300.0
"""A retry-after beyond this is capped: a misbehaving server should not stall a run for hours."""
_CHARS_PER_TOKEN = 4
PROVIDERS = "the provider's"
"""The owner of a bucket paced to announced limits."""
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
    owner: str = "ours"
    """Whose limit this is: "ours" (a default), "yours" (--rpm / --tpm) or "the provider's" (announced)."""
    burst_seconds: float = BURST_SECONDS

    def __post_init__(self) -> None:
        self.level = self.capacity

    @property
    def capacity(self) -> float:
        return max(1.0, self.per_minute * self.burst_seconds / 60.0)

    def announce(self, per_minute: float, owner: str, level: float | None, now: float) -> None:
        """Take a limit the provider announced: its rate, a whole minute's bucket and (from a fresh answer)
        the level it reported. A lower limit of the user's stays as set, only never above the provider's level."""
        self._refill(now)
        self.owner = owner
        # the provider's share paces a whole minute; back under the user's lower limit, the user's rate again
        self.per_minute, self.burst_seconds = per_minute, (60.0 if owner == PROVIDERS else BURST_SECONDS)
        if level is not None:
            self.level = min(self.capacity, level if owner == PROVIDERS else min(self.level, level))

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + max(0.0, now - self.updated) * self.per_minute / 60.0)
        self.updated = now

    def reserve(self, amount: float, now: float) -> float:
        """Take `amount`; seconds until the bucket is out of debt again (0: go now)."""
        self._refill(now)
        self.level -= amount
        return max(0.0, -self.level * 60.0 / self.per_minute)

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
    workers: int = 1
    """Processes sharing the provider's limits (xdist workers): each paces to its share."""

    def for_host(self, host: str) -> tuple[float, float]:
        if host.lower() in LOOPBACK_HOSTS:
            return (self.rpm if "rpm" in self.explicit else 0.0, self.tpm if "tpm" in self.explicit else 0.0)
        return self.rpm, self.tpm


def _json_object(body: bytes) -> dict[str, object]:
    """The body's JSON object; {} for anything else (empty, not JSON, a list): bodies are data from the network."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def estimate_tokens(body: bytes) -> int:
    """Prompt ≈ one token per four bytes of the request body, plus the output limit it asks for."""
    parsed = _json_object(body)
    limit = parsed.get("max_tokens", parsed.get("max_completion_tokens", parsed.get("max_output_tokens")))
    return len(body) // _CHARS_PER_TOKEN + (max(0, limit) if isinstance(limit, int) else 0)


def model_of(body: bytes) -> str:
    """The JSON body's `model` field ('' when there is none, e.g. a tool API's GET)."""
    model = _json_object(body).get("model")
    return model if isinstance(model, str) else ""


def used_tokens(body: bytes) -> int | None:
    """The tokens a response reports (OpenAI prompt + completion, Anthropic input + output), if any."""
    usage = _json_object(body).get("usage")
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
    estimate: int = 0
    """Tokens reserved (0 before the reservation, or with no token budget; else the request's estimate, capped
    at the bucket's capacity)."""
    requests: int = 0
    """Request units reserved (0 before the reservation, or with no request budget)."""
    number: int = 0
    """Order of admission: an answer to an older request does not override a newer one's figures."""


class RateLimiter:
    """The buckets of one process, keyed by (host, model), and the per-host pauses after a 429."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep, wall_clock: Callable[[], float] = time.time) -> None:
        self.limits = limits or Limits()
        self.clock = clock
        self.sleep = sleep
        self.wall_clock = wall_clock
        """Epoch seconds: Anthropic announces its resets as times of day. A seam of its own so that tests of
        those resets do not depend on today's date (`clock` is monotonic, not a date)."""
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str], tuple[TokenBucket | None, TokenBucket | None]] = {}
        self._paused_until: dict[str, float] = {}
        self._announced: set[tuple[str, str]] = set()
        """(host, model) keys whose provider announced its limits: paced even on a loopback host."""
        self._open: dict[int, Ticket] = {}
        """Admitted requests not answered yet, by number: their reservations are not in a provider's figures."""
        self._admitted = 0
        self._fresh: dict[tuple[str, str], int] = {}
        """Per key, the number of the request whose answer last set the levels."""
        self._resets: dict[tuple[str, str], float] = {}
        """Per (host, model) (providers limit each model apart), when the limit its latest answer said was
        exhausted is full again, on `clock`: a 429 without retry-after waits until then, not for the whole
        reset counted again from the 429."""
        self.waited: dict[str, float] = {}
        """Seconds requests waited, per limit that held them (summed over requests)."""

    def _throttled(self, host: str, model: str) -> bool:
        return any(self.limits.for_host(host)) or (host, model) in self._announced

    def _buckets_for(self, host: str, model: str) -> tuple[TokenBucket | None, TokenBucket | None]:
        """The key's buckets, made on first use. A new bucket is full, so it needs no time of its own: its
        first refill only sets the time."""
        key = (host, model)
        if key not in self._buckets:
            rpm, tpm = self.limits.for_host(host)
            self._buckets[key] = (TokenBucket(rpm, owner=self._owner("rpm")) if rpm else None,
                                  TokenBucket(tpm, owner=self._owner("tpm")) if tpm else None)
        return self._buckets[key]

    def _owner(self, name: str) -> str:
        return "yours" if name in self.limits.explicit else "ours"

    def _wait_for(self, label: str, seconds: float) -> None:
        """Book a wait (only a positive one) to the limit that held the request."""
        if seconds > 0:
            self.waited[label] = self.waited.get(label, 0.0) + seconds

    def acquire(self, host: str, body: bytes, checkpoint: Callable[[], None] | None = None) -> Ticket:
        """Wait until a request of this body may go to `host`: while the host is paused after a 429 (any
        host, loopback included: the server asked), then for the budgets (only hosts that have some).
        `checkpoint` raises when the caller's episode was stopped: called at least every
        `STOP_CHECK_SECONDS` while waiting, and the reservation is given back when it raises."""
        estimate = self._check_size(host, body)
        model = model_of(body)
        with self._lock:
            reserved = not self._throttled(host, model)  # no budget to reserve from: only a pause can make it wait
            self._admitted += 1
            ticket = Ticket(host, model, number=self._admitted)
            self._open[ticket.number] = ticket
        owed = 0.0  # seconds still to wait for the reservation's debt to clear
        while True:
            with self._lock:
                now = self.clock()
                paused = self._paused_until.get(host, 0.0) - now
                self._wait_for(f"a 429's pause from {host}", min(paused, STOP_CHECK_SECONDS)
                               if checkpoint is not None else paused)
                if paused <= 0 and not reserved:
                    held = []  # (seconds, whose limit) per budget the key has: a throttled key has at least one
                    requests, tokens = self._buckets_for(host, model)
                    if requests:
                        ticket.requests = 1
                        held.append((requests.reserve(1, now), _label(requests, "requests", host, model)))
                    if tokens:
                        ticket.estimate = int(min(estimate, tokens.capacity))
                        held.append((tokens.reserve(ticket.estimate, now), _label(tokens, "tokens", host, model)))
                    owed, label = max(held, key=lambda wait: wait[0])
                    self._wait_for(label, owed)
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
            self._open.pop(ticket.number, None)
            now = self.clock()
            requests, tokens = self._buckets.get((ticket.host, ticket.model), (None, None))
            for bucket, reserved in ((requests, ticket.requests), (tokens, ticket.estimate)):
                if bucket is not None:
                    bucket.refund(reserved, now)  # 0 (nothing reserved yet) changes nothing
            ticket.requests = ticket.estimate = 0

    def release(self, ticket: Ticket) -> None:
        """A request that got no answer (a dropped connection) is no longer in flight. Each ticket is either
        released or observed, once."""
        with self._lock:
            del self._open[ticket.number]

    def observe(self, ticket: Ticket, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """After a live response: learn the provider's limits, correct the token estimate, and pause the
        host on a rate limit."""
        with self._lock:
            del self._open[ticket.number]
            now = self.clock()
            announced = announced_limits(headers, self.wall_clock())
            if announced:
                self._learn(ticket, announced, now)
            _, tokens = self._buckets.get((ticket.host, ticket.model), (None, None))  # none: the key has no budget
            used = used_tokens(body) if status < 400 else 0
            if tokens is not None and used is not None and "tokens" not in announced:
                tokens.refund(max(ticket.estimate - used, -tokens.capacity), now)  # at most one bucket of debt
            asked = header_retry_after(headers)
            if status == 429 or (status == 503 and asked is not None):
                reset = self._resets.get((ticket.host, ticket.model), now) - now
                fallback = reset if reset > 0 else PAUSE_WITHOUT_RETRY_AFTER  # a reset gone by: the short backoff
                pause = min(MAX_PAUSE, max(0.0, asked if asked is not None else fallback))
                self._paused_until[ticket.host] = max(self._paused_until.get(ticket.host, 0.0), now + pause)

    def _learn(self, ticket: Ticket, announced: dict[str, Announced], now: float) -> None:
        """Pace (host, model) to the limits its provider announced (under the lock)."""
        key = (ticket.host, ticket.model)
        self._announced.add(key)
        fresh = ticket.number > self._fresh.get(key, 0)
        if fresh:
            self._fresh[key] = ticket.number
        requests, tokens = self._buckets_for(ticket.host, ticket.model)
        workers = max(1, self.limits.workers)
        in_flight = [other for other in self._open.values() if (other.host, other.model) == key]
        buckets = []
        for unit, name, bucket, reserved in (("requests", "rpm", requests, len(in_flight)),
                                             ("tokens", "tpm", tokens, sum(t.estimate for t in in_flight))):
            limit = announced.get(unit)
            if limit is None:
                buckets.append(bucket)
                continue
            share = limit.limit / workers
            mine = self.limits.rpm if name == "rpm" else self.limits.tpm
            per_minute, owner = ((mine, "yours") if name in self.limits.explicit and mine and mine < share
                                 else (share, PROVIDERS))
            bucket = bucket or TokenBucket(per_minute)
            bucket.announce(per_minute, owner, limit.remaining / workers - reserved if fresh else None, now)
            buckets.append(bucket)
        self._buckets[key] = (buckets[0], buckets[1])
        exhausted = [limit.reset for limit in announced.values() if limit.remaining < 1 and limit.reset is not None]
        if exhausted:
            self._resets[key] = now + max(exhausted)
        else:
            self._resets.pop(key, None)


def _label(bucket: TokenBucket, unit: str, host: str, model: str) -> str:
    """Whose limit a request waited for, in words: "the provider's limit of 40 requests/min (host, model)"."""
    where = f"{host}, {model}" if model else host
    if bucket.owner == "yours":
        return f"your limit of {bucket.per_minute:g} {unit}/min ({'--rpm' if unit == 'requests' else '--tpm'}; {where})"
    if bucket.owner == "ours":
        return (f"our default limit of {bucket.per_minute:g} {unit}/min ({where}; the provider announced none "
                f"yet; {'--rpm' if unit == 'requests' else '--tpm'} 0 lifts it)")
    return f"the provider's limit of {bucket.per_minute:g} {unit}/min ({where})"


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
        workers = max(1, int(environ["PYTEST_XDIST_WORKER_COUNT"]))
    except (KeyError, ValueError):
        workers = 1
    explicit: Collection[str] = [name for name, value in (("rpm", rpm), ("tpm", tpm)) if value is not None]
    limits = Limits(rpm=(DEFAULT_RPM if rpm is None else rpm) / workers,
                    tpm=(DEFAULT_TPM if tpm is None else tpm) / workers, explicit=frozenset(explicit),
                    max_request_tokens=max_request_tokens, workers=workers)
    with _shared_lock:
        _shared = RateLimiter(limits, clock=clock, sleep=sleep)
        return _shared


def shared_limiter() -> RateLimiter:
    """The limiter every live request of this process passes."""
    with _shared_lock:
        return _shared

