"""The live requests of this process that wait for an answer, and how soon the next answer can come.

The episode pool (`running/ahead.py`) spends idle moments, when every running episode waits for its provider,
on imports the items will need soon. An import holds the interpreter for a few hundred milliseconds;
started just before a wave of answers comes in, it delays every one of them (the first answers of a
concurrent run were read 0.15 s late). So besides counting the requests, this keeps when each was sent
and the fastest answer so far: no answer is expected before the earliest request's send time plus that.

A model client wraps each request in an `Exchange` that `sent` marks once the request has really gone
out (past the rate limiter): an episode stopped by its timeout while a request is on its way counts that
request (the provider answers and bills it), one stopped before sending does not.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import count


@dataclass
class Exchange:
    """One request of a model client, from the moment it is handed to the SDK until it returns."""

    sent: bool = False
    """The request went out (the transport said so): it costs whether or not its answer is read."""


_EXCHANGE: ContextVar[Exchange | None] = ContextVar("toolsandbox_exchange", default=None)


@contextmanager
def exchange_of(exchange: Exchange) -> Iterator[None]:
    """Requests sent on this thread meanwhile mark `exchange` as sent."""
    token = _EXCHANGE.set(exchange)
    try:
        yield
    finally:
        _EXCHANGE.reset(token)


class InFlight:
    """Requests sent and not yet answered, with their send times."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._sent: dict[int, float] = {}
        self._tokens = count()
        self.fastest: float | None = None
        """The shortest time a request took to be answered (a successful exchange) in this process."""

    @property
    def count(self) -> int:
        return len(self._sent)

    def sent(self) -> int:
        """A request goes out (the caller's exchange, if any, is marked sent); the token is for `ended`."""
        exchange = _EXCHANGE.get()
        if exchange is not None:
            exchange.sent = True
        with self._lock:
            token = next(self._tokens)
            self._sent[token] = self._clock()
            return token

    def ended(self, token: int, answered: bool) -> None:
        """The request's exchange is over; `answered`: a response came (a failure says nothing of the
        provider's latency: a refused connection fails in a millisecond)."""
        with self._lock:
            took = self._clock() - self._sent.pop(token)
            if answered and (self.fastest is None or took < self.fastest):
                self.fastest = took

    def quiet_for(self) -> float | None:
        """Seconds until the first answer to a request in flight is expected at the earliest (negative:
        overdue); None while nothing is in flight or no request has been answered yet."""
        with self._lock:
            if not self._sent or self.fastest is None:
                return None
            return min(self._sent.values()) + self.fastest - self._clock()


IN_FLIGHT = InFlight()
"""The process's live requests, counted by every episode's cassette transport."""
