"""A fake OpenAI-compatible provider that plays whole episodes by itself, slowly and within a concurrency limit.

It stands in for a hosted model when measuring or testing concurrent runs (Anthropic's Messages format at
`/v1/messages` too: tests/fake_messages.py): every Chat Completions request
is answered after a fixed `delay` (the handler thread waits, the caller never sleeps), at most
`max_concurrent` requests are served at once (the rest queue, as at a provider's concurrency limit), and
the answer is a pure function of the request, so a run records and replays identically however its
episodes interleave:

- while fewer than `calls_per_turn` tool results follow the conversation's last user message and tools
  are offered, the answer calls one offered tool, chosen by a sha256 of the request's last user message
  and the number of results so far, with arguments built from the tool's JSON schema (every required
  property gets a simple default: the first enum value, "test", 1, true, [], {});
- otherwise it answers with a short text.

Usage numbers come with every answer (derived from the request's size), so token accounting is
exercised. An optional 429 storm answers every request that arrives within `storm_window` seconds,
counted from the arrival of request number `storm_after` (0 = the first), with HTTP 429 and
`retry-after: <retry_after>` at once. With `retry_after` ≥ `storm_window`, a client that pauses for
`retry-after` on its first 429 sends nothing more until the window is over and so meets a single burst
of 429s (only requests already on their way); a client that retries on its own, shorter schedule meets
the window again and again.

Requests are checked against the Chat Completions rules (tests/provider_rules.py: reasoning-model
parameters, tool-call pairing) and one that breaks them gets the API's 400. With `rpm` (and `tpm`) set the
server announces its limits in OpenAI's rate-limit headers on every answer (`x-ratelimit-limit-requests`,
`-remaining-`, `-reset-` as "1.5s" or "6m0s", tokens likewise) and enforces them as a token bucket that holds
one minute's budget and refills continuously: a request over the limit gets a 429 with `retry-after`. A
request's tokens are counted as the API counts them before answering: its size / 4 plus the output limit
it asks for.

Two holds make a test independent of how fast the machine is: with `hold_until_in_flight` N, no
request is answered before N are in flight at once (a client that never has N in flight finds every
answer delayed by `hold_timeout`, after which `Stats.hold_timed_out` is set and the hold is lifted for
good); with `answer_at_most` N, the requests after the N-th wait unanswered until the server stops.

The server counts answered requests, 429s sent, the peak number of requests in flight (arrived, not yet
answered), the peak number being served (at most `max_concurrent`; the rest queued) and the times of the
first arrival and the last answer. In process: `with FakeProvider(...) as server:` and `server.stats()`.
As a separate process, so that a benchmark's server does not compete with pytest for one interpreter's
lock:

    python -m tests.fake_provider --port 0 --delay 0.5 --max-concurrent 64 [--storm-window 1 ...]

prints `listening on http://127.0.0.1:PORT` once ready, answers `GET /stats` with the counters as JSON and
`POST /reset` by zeroing them, and stops on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import signal
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fake_messages import MESSAGES, messages_answer
from tests.llm_server import send_json
from tests.provider_rules import openai_violation

CHAT = "/v1/chat/completions"


@dataclass(frozen=True)
class Behaviour:
    """How the fake provider answers."""

    delay: float = 0.5
    max_concurrent: int = 64
    calls_per_turn: int = 2
    storm_after: int = 0
    storm_window: float = 0.0
    retry_after: float = 1.0
    rpm: float = 0.0
    """Announced and enforced requests per minute (0: no rate-limit headers, no limit)."""
    tpm: float = 0.0
    """Announced and enforced tokens per minute (0: none)."""
    hold_until_in_flight: int = 0
    answer_at_most: int = 0
    hold_timeout: float = 120.0


@dataclass
class Stats:
    """What the server saw. Times are `time.time()` seconds (None before the first request)."""

    served: int = 0
    rate_limited: int = 0
    arrived: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    serving: int = 0
    peak_serving: int = 0
    connections: int = 0
    rejected: int = 0
    """Requests answered with a 400 for breaking a provider rule."""
    first_arrival: float | None = None
    last_answer: float | None = None
    storm_started: float | None = None
    rate_limited_at: list[float] = field(default_factory=list)
    hold_timed_out: bool = False

    def bursts(self, gap: float) -> int:
        """Groups of 429s: a 429 more than `gap` seconds after the previous one starts a new burst."""
        times = sorted(self.rate_limited_at)
        return sum(1 for before, after in zip([None, *times], times, strict=False)
                   if before is None or after - before > gap)


def reset_text(seconds: float) -> str:
    """A duration as OpenAI writes it in `x-ratelimit-reset-*`: "20ms", "1.5s", "6m0s"."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.0f}s" if minutes else f"{rest:.3g}s"


class ProviderBucket:
    """One announced limit as the provider keeps it: holds `per_minute` units, refills continuously."""

    def __init__(self, per_minute: float) -> None:
        self.per_minute = per_minute
        self.level = per_minute
        self.updated = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.per_minute, self.level + (now - self.updated) * self.per_minute / 60)
        self.updated = now

    def fits(self, amount: float) -> bool:
        self._refill()
        return amount <= self.level

    def take(self, amount: float) -> None:
        self._refill()
        self.level -= amount

    def headers(self, unit: str) -> dict[str, str]:
        self._refill()
        missing = self.per_minute - self.level
        return {f"x-ratelimit-limit-{unit}": f"{self.per_minute:g}",
                f"x-ratelimit-remaining-{unit}": str(int(self.level)),
                f"x-ratelimit-reset-{unit}": reset_text(missing * 60 / self.per_minute)}


def request_tokens(raw: bytes, body: dict[str, Any]) -> int:
    """What a request counts against the token limit: its size / 4 and the output it may produce."""
    limit = body.get("max_completion_tokens", body.get("max_tokens", 0))
    return len(raw) // 4 + (limit if isinstance(limit, int) else 0)


def answer(body: dict[str, Any], calls_per_turn: int) -> dict[str, Any]:
    """The chat completion for a request: a pure function of its body."""
    raw_messages = body.get("messages")
    messages = [item for item in raw_messages if isinstance(item, dict)] if isinstance(raw_messages, list) else []
    last_user = max((index for index, message in enumerate(messages) if message.get("role") == "user"), default=-1)
    results = sum(1 for message in messages[last_user + 1:] if message.get("role") == "tool")
    raw_tools = body.get("tools")
    tools = [tool["function"] for tool in raw_tools if isinstance(tool, dict) and isinstance(tool.get("function"), dict)
             ] if isinstance(raw_tools, list) else []
    user_text = str(messages[last_user].get("content", "")) if last_user >= 0 else ""
    if tools and results < calls_per_turn:
        digest = hashlib.sha256(f"{user_text}\n{results}".encode()).digest()
        tool = tools[int.from_bytes(digest[:4], "big") % len(tools)]
        calls_so_far = sum(len(message.get("tool_calls") or []) for message in messages)
        message = {"role": "assistant", "content": None,
                   "tool_calls": [{"id": f"call_{calls_so_far + 1}", "type": "function",
                                   "function": {"name": tool.get("name", ""),
                                                "arguments": json.dumps(_arguments(tool.get("parameters")))}}]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": f"Done after {results} tool call(s)."}
        finish = "stop"
    prompt_tokens = len(json.dumps(messages, sort_keys=True)) // 4 + 1
    completion_tokens = len(json.dumps(message, sort_keys=True)) // 4 + 1
    return {"id": f"chatcmpl-fake-{len(messages)}", "object": "chat.completion", "created": 1700000000,
            "model": str(body.get("model", "fake")),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def _json_object(raw: bytes) -> dict[str, Any]:
    """The request body; anything but a JSON object counts as an empty request."""
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _arguments(schema: Any) -> dict[str, Any]:
    """A value for every required property of an object schema."""
    if not isinstance(schema, dict):
        return {}
    properties = schema.get("properties") or {}
    return {name: _default(properties.get(name) or {}) for name in schema.get("required") or []}


def _default(schema: dict[str, Any]) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        options = [option for option in schema.get(key) or [] if option.get("type") != "null"]
        if options:
            return _default(options[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), None)
    return {"string": "test", "integer": 1, "number": 1, "boolean": True, "array": [],
            "object": {}}.get(kind)


class FakeProvider:
    """The server; `url` is http://127.0.0.1:<port> (append /v1 for an SDK's base URL)."""

    def __init__(self, behaviour: Behaviour | None = None, port: int = 0, host: str = "127.0.0.1") -> None:
        """`host` may be another loopback address (127.0.0.2) that the plugin treats as a hosted API."""
        self.behaviour = behaviour or Behaviour()
        self._limits = {unit: ProviderBucket(per_minute) for unit, per_minute
                        in (("requests", self.behaviour.rpm), ("tokens", self.behaviour.tpm)) if per_minute}
        self._stats = Stats()
        self._changed = threading.Condition()
        self._slots = threading.BoundedSemaphore(self.behaviour.max_concurrent)
        self._stopping = threading.Event()
        self._open: set[socket.socket] = set()
        """Kept-alive connections: ended on stop, so a client's pool cannot reuse one with a later
        server that gets the same port."""
        self._server = ThreadingHTTPServer((host, port), self._handler(), bind_and_activate=False)
        self._server.request_queue_size = 1024  # a burst of new connections must not overflow the backlog
        self._server.daemon_threads = True
        self._server.server_bind()
        self._server.server_activate()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def stats(self) -> Stats:
        """A copy of the counters."""
        with self._changed:
            return Stats(**{**asdict(self._stats), "rate_limited_at": list(self._stats.rate_limited_at)})

    def reset(self) -> None:
        with self._changed:
            self._stats = Stats()

    def wait_until_served(self, count: int, timeout: float) -> bool:
        """Block until `count` requests were answered (True) or `timeout` seconds passed (False)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._stats.served >= count, timeout)

    def _admit(self, raw: bytes, body: dict[str, Any]) -> tuple[bool, dict[str, str]]:
        """Whether the announced limits take this request, and the rate-limit headers of its answer."""
        with self._changed:
            wanted = {"requests": 1, "tokens": request_tokens(raw, body)}
            admitted = all(bucket.fits(wanted[unit]) for unit, bucket in self._limits.items())
            if admitted:
                for unit, bucket in self._limits.items():
                    bucket.take(wanted[unit])
            headers = {name: value for unit, bucket in self._limits.items()
                       for name, value in bucket.headers(unit).items()}
            if not admitted:
                self._stats.rate_limited += 1
                self._stats.rate_limited_at.append(time.time())
            return admitted, headers

    def _arrive(self) -> tuple[bool, bool]:
        """Count an arrival: whether it falls into the 429 storm, and whether it will ever be answered."""
        now = time.time()
        with self._changed:
            stats, behaviour = self._stats, self.behaviour
            if stats.first_arrival is None:
                stats.first_arrival = now
            if behaviour.storm_window > 0 and stats.storm_started is None and stats.arrived >= behaviour.storm_after:
                stats.storm_started = now
            stats.arrived += 1
            storming = stats.storm_started is not None and now < stats.storm_started + behaviour.storm_window
            if storming:
                stats.rate_limited += 1
                stats.rate_limited_at.append(now)
            else:
                stats.in_flight += 1
                stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
                self._changed.notify_all()  # a held request may now be answered
            answerable = not behaviour.answer_at_most or stats.arrived - stats.rate_limited <= behaviour.answer_at_most
            return storming, answerable

    def _hold(self, answerable: bool) -> None:
        """Wait as the holds say (nothing without them); the server stopping ends every wait."""
        behaviour = self.behaviour
        with self._changed:
            if not answerable:
                self._changed.wait_for(self._stopping.is_set)
                return
            needed = behaviour.hold_until_in_flight
            if needed and not self._stats.hold_timed_out:
                reached = self._changed.wait_for(
                    lambda: self._stats.peak_in_flight >= needed or self._stopping.is_set(), behaviour.hold_timeout)
                if not reached:
                    self._stats.hold_timed_out = True
                    self._changed.notify_all()

    def _refused(self, rejected: bool) -> None:
        """An arrival answered at once with a 400 or a 429: no longer in flight."""
        with self._changed:
            self._stats.in_flight -= 1
            self._stats.rejected += rejected
            self._changed.notify_all()

    def _serving(self, change: int) -> None:
        with self._changed:
            self._stats.serving += change
            self._stats.peak_serving = max(self._stats.peak_serving, self._stats.serving)

    def _served(self) -> None:
        with self._changed:
            self._stats.served += 1
            self._stats.in_flight -= 1
            self._stats.last_answer = time.time()
            self._changed.notify_all()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: SDK clients reuse their connections
            disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms delayed-ACK stall

            def setup(self) -> None:
                super().setup()
                with provider._changed:
                    provider._stats.connections += 1
                    provider._open.add(self.connection)

            def finish(self) -> None:
                with provider._changed:
                    provider._open.discard(self.connection)
                super().finish()

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                if self.path == "/reset":
                    provider.reset()
                    self._send(200, {"reset": True})
                    return
                if self.path not in (CHAT, MESSAGES):
                    self._send(404, {"error": {"message": f"no such endpoint {self.path}", "type": "not_found"}})
                    return
                storming, answerable = provider._arrive()
                if storming:
                    self._send(429, {"error": {"message": "fake rate limit", "type": "rate_limit_error"}},
                               {"retry-after": f"{provider.behaviour.retry_after:g}"})
                    return
                body = _json_object(raw)
                violation = openai_violation(body)
                admitted, limit_headers = provider._admit(raw, body) if violation is None else (True, {})
                if violation is not None or not admitted:
                    provider._refused(rejected=violation is not None)
                    if violation is not None:
                        self._send(400, violation)
                    else:
                        self._send(429, {"error": {"message": "Rate limit reached", "type": "requests",
                                                   "param": None, "code": "rate_limit_exceeded"}},
                                   {**limit_headers, "retry-after": "1"})
                    return
                try:
                    provider._hold(answerable)
                    with provider._slots:
                        provider._serving(+1)
                        try:
                            provider._stopping.wait(provider.behaviour.delay)
                            payload = (answer(body, provider.behaviour.calls_per_turn) if self.path == CHAT
                                       else messages_answer(body, provider.behaviour.calls_per_turn, answer))
                        finally:
                            provider._serving(-1)
                finally:
                    provider._served()
                self._send(200, payload, limit_headers)

            def do_GET(self) -> None:
                if self.path == "/stats":
                    self._send(200, asdict(provider.stats()))
                else:
                    self._send(404, {"error": {"message": f"no such endpoint {self.path}", "type": "not_found"}})

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                send_json(self, status, body, headers)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> FakeProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop accepting requests; requests being delayed are answered at once."""
        self._stopping.set()
        with self._changed:
            self._changed.notify_all()  # held requests are answered now
        self._server.shutdown()
        self._server.server_close()
        with self._changed:
            connections = list(self._open)
        for connection in connections:  # a handler waiting for the next request reads end-of-file and
            with contextlib.suppress(OSError):  # closes; one answering a request still sends its answer
                connection.shutdown(socket.SHUT_RD)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = Behaviour()
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--delay", type=float, default=defaults.delay, help="seconds before each answer")
    parser.add_argument("--max-concurrent", type=int, default=defaults.max_concurrent,
                        help="requests served at once; later ones queue")
    parser.add_argument("--calls-per-turn", type=int, default=defaults.calls_per_turn,
                        help="tool calls made after each user message before answering in text")
    parser.add_argument("--storm-after", type=int, default=defaults.storm_after,
                        help="the 429 storm starts at this request's arrival (0 = the first)")
    parser.add_argument("--storm-window", type=float, default=defaults.storm_window,
                        help="seconds of 429 answers (0 = no storm)")
    parser.add_argument("--retry-after", type=float, default=defaults.retry_after,
                        help="retry-after header of the 429 answers")
    args = parser.parse_args()
    behaviour = Behaviour(delay=args.delay, max_concurrent=args.max_concurrent, calls_per_turn=args.calls_per_turn,
                          storm_after=args.storm_after, storm_window=args.storm_window, retry_after=args.retry_after)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with FakeProvider(behaviour, args.port) as server:
        print(f"listening on {server.url}", flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
