"""An httpx2 transport bound to one episode's cassette: replay what it holds, else send live and record.

vcrpy's `use_cassette` patches httpx2 for the whole process, so two episodes running at once in two
threads would record into (and replay from) each other's cassette. This transport is handed to the
episode's own SDK clients instead, and nothing global changes. It keeps vcrpy's cassette format: the
request is a `vcr.request.Request` and the response the same dict vcrpy's httpx stubs store (status
code and phrase, every header as a list of values, the body bytes), so cassettes written either way
replay either way. Live requests pass the process's shared rate limiter (`ratelimit.py`) first;
replayed ones never wait. The limiter is shared by every episode of the process and a thread's connection
pool by the episodes that thread plays, so a live request is a critical section that a forced stop waits
for (`running/interruption.py`).
"""

from __future__ import annotations

import functools
import os
import threading
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Protocol
from urllib.request import getproxies, proxy_bypass

import httpx2

from pytest_toolsandbox.basics.limits import (
    COMPRESSED_ENCODINGS,
    LimitExceeded,
    Limits,
    declared_too_large,
    decompressed_body,
    read_response,
    size_text,
)
from pytest_toolsandbox.recording.in_flight import IN_FLIGHT
from pytest_toolsandbox.recording.ratelimit import RateLimiter, shared_limiter
from pytest_toolsandbox.recording.refusal import MissingKey
from pytest_toolsandbox.recording.secrets import scrub_url
from pytest_toolsandbox.running.interruption import checkpoint, critical

if TYPE_CHECKING:
    import ssl


class Recording(Protocol):
    """What the transport uses of an episode's recording (`episode_recording.EpisodeRecording`, which
    creates the transport: the recording depends on the transport, never the other way round)."""

    cassette: Any
    lock: threading.Lock
    limits: Limits
    refused_hosts: dict[str, str]


def recorded_response(response: httpx2.Response, content: bytes) -> dict[str, Any]:
    """A live response as a cassette stores it (the layout of vcrpy's httpx stubs)."""
    headers: defaultdict[str, list[str]] = defaultdict(list)
    for name, value in response.headers.multi_items():
        headers[name].append(value)
    return {"status": {"code": response.status_code, "message": response.reason_phrase},
            "headers": dict(headers), "body": {"string": content}}


def replayed_response(recorded: dict[str, Any]) -> httpx2.Response:
    """A response rebuilt from the cassette, as the server sent it."""
    body = recorded["body"]["string"]
    message = recorded["status"].get("message")
    return httpx2.Response(
        recorded["status"]["code"],
        headers=[(name, value) for name, values in recorded["headers"].items() for value in values],
        stream=httpx2.ByteStream(body.encode("utf-8") if isinstance(body, str) else body),
        extensions={"reason_phrase": message.encode("ascii")} if message else None,
    )


LIVE_LIMITS = httpx2.Limits(max_connections=None, max_keepalive_connections=8, keepalive_expiry=30.0)
"""Connection pool limits of one thread's live transport: the scheduler and the rate limiter already
bound how many requests are in flight, so the pool must not queue them a second time; it keeps a few
connections (and their TLS sessions) open between an episode's calls, and between the episodes its
thread plays (one provider per role)."""


_PROXY_VARIABLES = tuple(f"{name}_proxy" for name in ("http", "https", "all", "no"))
_PROXY_VARIABLES += tuple(name.upper() for name in _PROXY_VARIABLES)


@functools.lru_cache(maxsize=256)
def _proxy_lookup(scheme: str, host: str, environment: tuple[str | None, ...]) -> str | None:
    """The proxy for one scheme and host while the proxy variables hold `environment` (cached: urllib
    walks the whole environment twice per lookup, a tenth of a recorded call's CPU)."""
    del environment  # part of the cache key only: a changed proxy variable is a new lookup
    for attempt in range(10):
        try:
            return None if proxy_bypass(host) else getproxies().get(scheme)
        except (KeyError, RuntimeError):  # a variable vanished, or the mapping changed size, mid-read
            if attempt == 9:
                raise
    raise AssertionError("unreachable: the loop returns or raises")


def _proxy_for(url: httpx2.URL) -> str | None:
    """The proxy the environment names for `url`, if any. urllib reads it by iterating `os.environ`,
    which pytest's main thread changes at every test phase (`PYTEST_CURRENT_TEST`) while episodes send
    requests from runner threads; an iteration that loses that race raises, and is simply repeated.
    Reading the proxy variables one by one (`os.environ.get`) is safe, and keys the cache."""
    return _proxy_lookup(url.scheme, url.host, tuple(os.environ.get(name) for name in _PROXY_VARIABLES))


class LiveTransports:
    """Real HTTP transports, created at a thread's first live request (a replay opens no socket and
    builds no TLS context), one per thread and per proxy the environment names for a URL
    (`HTTPS_PROXY`, `NO_PROXY`, …).

    One set serves every episode of the process (`shared_live_transports`). Each thread has pools of
    its own: a runner thread plays one episode at a time, so its pool holds a connection per provider
    and reuses it from episode to episode, whereas one pool shared by 64 runners scanned all 64 of its
    connections (a `poll` each) twice per request, a fifth of a recorded episode's CPU. The TLS context
    is shared (it is thread-safe, and building one costs 30 ms: certificates loaded and parsed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ssl_context: ssl.SSLContext | None = None
        self._threads = threading.local()

    def for_url(self, url: httpx2.URL) -> httpx2.HTTPTransport:
        proxy = _proxy_for(url)
        transports: dict[str | None, httpx2.HTTPTransport] | None = getattr(self._threads, "by_proxy", None)
        if transports is None:
            transports = self._threads.by_proxy = {}
        if proxy not in transports:
            transports[proxy] = httpx2.HTTPTransport(verify=self._shared_ssl_context(), proxy=proxy,
                                                     limits=LIVE_LIMITS)
        return transports[proxy]

    def _shared_ssl_context(self) -> ssl.SSLContext:
        with self._lock:
            if self._ssl_context is None:
                self._ssl_context = httpx2.create_ssl_context()
            return self._ssl_context


_shared_live = LiveTransports()


def shared_live_transports() -> LiveTransports:
    """The live transports of this process. They stay open as long as their thread runs: an episode
    cancelled by Ctrl-C may still be inside a request, and closing a pool under it would block; the idle
    connections close with the thread or the process (a dead one is detected before reuse)."""
    return _shared_live


class CassetteTransport(httpx2.BaseTransport):
    """Sends each request through `recording`'s cassette; `limiter` (default: the process's shared
    one) paces the requests that go live."""

    def __init__(self, recording: Recording, live: LiveTransports,
                 limiter: RateLimiter | None = None) -> None:
        self.recording = recording
        self.live = live
        self.limiter = limiter

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        from vcr.errors import CannotOverwriteExistingCassetteException
        from vcr.request import Request as VcrRequest

        body = request.read()
        wanted = VcrRequest(request.method, str(request.url), body, request.headers)
        cassette = self.recording.cassette
        with self.recording.lock:
            # In "all" mode nothing is replayed; vcrpy would still filter and match the request against
            # every recorded one before looking at the mode.
            if cassette.record_mode != "all" and cassette.can_play_response_for(wanted):
                return replayed_response(cassette.play_response(wanted))
            if cassette.write_protected and cassette.filter_request(wanted):
                raise CannotOverwriteExistingCassetteException(cassette=cassette, failed_request=wanted)
        if request.url.host in self.recording.refused_hosts:
            raise MissingKey(self.recording.refused_hosts[request.url.host])
        checkpoint()  # a cancelled episode sends nothing more
        with critical():  # the limiter is shared by every episode, this thread's pool by its later episodes
            limiter = self.limiter or shared_limiter()
            ticket = limiter.acquire(request.url.host, body, checkpoint)  # stopped while waiting: nothing sent
            token, answered = IN_FLIGHT.sent(), False
            try:
                response = self.live.for_url(request.url).handle_request(request)
                try:
                    content = self._read(request, response)
                    answered = True
                finally:
                    _sync_stream(response).close()  # the connection goes back to the pool
            finally:
                IN_FLIGHT.ended(token, answered)
                if not answered:
                    limiter.release(ticket)
            limiter.observe(ticket, response.status_code, response.headers, content)
        response.stream = httpx2.ByteStream(content)
        with self.recording.lock:
            cassette.append(wanted, recorded_response(response, content))
        return response

    def _read(self, request: httpx2.Request, response: httpx2.Response) -> bytes:
        """The response body, read up to the episode's `max_response_bytes` (a hostile server must not
        fill the memory: reading stops past the limit, and the request fails with `LimitExceeded`).
        A gzip or deflate body is decompressed here, within the same limit, and its headers say so (as
        vcrpy's `decode_compressed_response` records it): the SDK then gets the plain body."""
        limit = self.recording.limits.max_response_bytes
        what = f"{request.method} {scrub_url(str(request.url))}"
        if declared_too_large(response.headers.get("content-length"), limit):
            raise LimitExceeded(f"{what}: the response is larger than {size_text(limit)} (content-length "
                                f"{response.headers['content-length']}); not read (raise --max-response-bytes / "
                                "toolsandbox_max_response_bytes if replies are really that long)")
        content = read_response(_sync_stream(response), limit, what)
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding in COMPRESSED_ENCODINGS:
            content = decompressed_body(content, encoding, limit, what)
            del response.headers["content-encoding"]
            response.headers["content-length"] = str(len(content))
        return content


def _sync_stream(response: httpx2.Response) -> httpx2.SyncByteStream:
    """The body of a response this sync transport received (httpx2 types a response's stream as either kind)."""
    stream = response.stream
    if not isinstance(stream, httpx2.SyncByteStream):
        raise TypeError(f"{response.request.method} {scrub_url(str(response.request.url))}: an async body reached "
                        "a sync transport")
    return stream
