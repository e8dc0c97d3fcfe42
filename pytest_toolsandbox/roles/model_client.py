"""One model endpoint as the roles use it: provider adapter + retries + token accounting.

Everything that is the same for every provider lives here once; the adapters only convert formats.
The SDK is imported when the first request is made, so naming a model costs nothing until it is
used. One instance serves one role in one episode (no state is shared between episodes).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from importlib import import_module
from typing import Any
from urllib.parse import urlsplit

from pytest_toolsandbox.basics.limits import LimitExceeded, RequestTooLarge
from pytest_toolsandbox.recording.in_flight import Exchange, exchange_of
from pytest_toolsandbox.recording.refusal import MissingKey
from pytest_toolsandbox.recording.secrets import scrub_text
from pytest_toolsandbox.roles.conversation import Conversation
from pytest_toolsandbox.roles.model_spec import ModelSettings
from pytest_toolsandbox.roles.model_stop import stop_reason, stop_run, unavailable
from pytest_toolsandbox.roles.reply import Reply
from pytest_toolsandbox.roles.retry import RetryPolicy, is_retryable, retry_after, status_of
from pytest_toolsandbox.roles.usage_counts import add_reply, new_usage
from pytest_toolsandbox.tools.schemas import OfferedTool

ADAPTERS = {"openai": "pytest_toolsandbox.roles.openai_chat",
            "anthropic": "pytest_toolsandbox.roles.anthropic_messages"}
"""Provider → adapter module (request, client, send, reply), imported when first used."""


class ModelError(RuntimeError):
    """The model API failed for good (after retries, or with an error retrying cannot fix).

    An infrastructure error: the item is reported as a test error, never as the agent's failure.
    """


class ModelUnavailable(ModelError):
    """No request to this model can succeed (retired or unknown model, quota used up): the run stops."""


def _cause(error: BaseException, matches: Callable[[BaseException], bool]) -> BaseException | None:
    """The exception behind `error` that `matches`, wherever the SDK wrapped it (an exception raised by
    the cassette transport reaches us as the SDK's connection error, which would be retried)."""
    seen: BaseException | None = error
    while seen is not None:
        if matches(seen):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _named(name: str) -> Callable[[BaseException], bool]:
    """Matches an exception by class name: vcrpy's, whose module is imported only when recording."""
    return lambda error: type(error).__name__ == name


def _of(kind: type[BaseException]) -> Callable[[BaseException], bool]:
    return lambda error: isinstance(error, kind)


def _describe(error: BaseException) -> str:
    status = status_of(error)
    text = scrub_text(str(error)).strip()  # an error body may quote the request's credentials
    message = text.splitlines()[0] if text else type(error).__name__
    return f"HTTP {status}: {message}" if status is not None else f"{type(error).__name__}: {message}"


class ModelClient:
    """Sends conversations to one model and keeps the token totals (`usage`)."""

    def __init__(self, settings: ModelSettings, retry: RetryPolicy | None = None) -> None:
        self.settings = settings
        self.adapter = import_module(ADAPTERS[settings.provider])
        self.retry = retry or RetryPolicy(retries=settings.options.retries, base_delay=settings.options.retry_delay)
        self._sdk: Any = None
        self._sdk_recording: Any = None
        self._lock = threading.Lock()
        self.usage = new_usage()
        self.answered_model: str | None = None
        """The model snapshot the last response named (its `model` field), e.g. a dated id behind an alias."""
        self._on_the_way: list[Exchange] = []
        """Requests handed to the SDK that have not returned yet."""

    def counted_usage(self) -> dict[str, int]:
        """`usage`, with each request that went out and has not returned counted as a request of unknown
        usage: an episode stopped by its timeout leaves it waiting for an answer the provider still bills."""
        with self._lock:
            usage = dict(self.usage)
            unanswered = sum(exchange.sent for exchange in self._on_the_way)
        usage["requests"] += unanswered
        usage["unknown_usage"] += unanswered
        return usage

    def _send(self, sdk: Any, body: dict[str, Any]) -> Any:
        """The adapter's send, on the way list meanwhile. Through a recording the transport says when the
        request went out; without one (a bare SDK client) it is taken as sent once handed over."""
        exchange = Exchange(sent=self._sdk_recording is None)
        with self._lock:
            self._on_the_way.append(exchange)
        try:
            with exchange_of(exchange):
                return self.adapter.send(sdk, body)
        finally:
            with self._lock:
                self._on_the_way.remove(exchange)

    @property
    def label(self) -> str:
        return self.settings.label

    def _source(self, error: BaseException) -> str:
        """The model, and its URL when no HTTP answer came back (connection refused, DNS, timeout): the
        SDKs' own message ("Connection error.") names neither."""
        return self.label if status_of(error) is not None else f"{self.label} at {self.settings.shown_endpoint}"

    def _client(self) -> Any:
        """The SDK client, built at the first request: inside an episode with a recording, its HTTP goes
        through that episode's cassette (rebuilt if this client is reused by a later episode)."""
        from pytest_toolsandbox.recording.episode_recording import active_recording

        active = active_recording()
        with self._lock:
            if self._sdk is None or self._sdk_recording is not active:
                if active is not None and self.settings.alias:  # replay with the model its cassette was recorded with
                    self.settings = self.settings.pinned(active.pin(self.settings.alias, self.settings.model))
                settings = self.settings
                if settings.api_key() is None:
                    if active is None:
                        raise ModelError(f"{self.label}: {settings.key_variable} is not set")
                    # a replay needs no key: only a request its cassette cannot answer would (see transport)
                    active.refused_hosts[urlsplit(settings.endpoint).hostname or ""] = (
                        f"{self.label}: {settings.key_variable} is not set, and this request is not in the cassette")
                    settings = settings.with_options(replace(settings.options, base_url=settings.endpoint))
                http_client = None if active is None else active.http_client(settings.options.timeout)
                self._sdk = self.adapter.client(settings, http_client=http_client)
                self._sdk_recording = active
            return self._sdk

    def complete(self, conversation: Conversation, tools: Sequence[OfferedTool]) -> Reply:
        """One completion, retried on transient failures; raises ModelError when it cannot get one."""
        sdk = self._client()  # first: it may pin the model the request names
        body = self.adapter.request(conversation, tools, self.settings)
        attempts = self.retry.retries + 1
        for attempt in range(1, attempts + 1):
            if (stopped := stop_reason()) is not None:  # another episode found the model gone: send nothing
                raise ModelUnavailable(stopped)
            try:
                response = self._send(sdk, body)
            except Exception as error:
                miss = _cause(error, _named("CannotOverwriteExistingCassetteException"))
                if miss is not None:
                    from pytest_toolsandbox.recording.miss import CassetteMiss

                    raise CassetteMiss.from_vcr(miss) from None
                if (too_large := _cause(error, _of(LimitExceeded))) is not None:  # the same reply would be as large
                    raise ModelError(f"{self.label}: {too_large} (not retried)") from None
                if (too_large := _cause(error, _of(RequestTooLarge))) is not None:  # never sent: over the size cap
                    raise ModelError(f"{self.label}: {too_large}") from None
                if (missing_key := _cause(error, _of(MissingKey))) is not None:
                    raise ModelError(str(missing_key)) from None
                if (reason := unavailable(error, self.settings)) is not None:
                    raise ModelUnavailable(stop_run(reason)) from None
                if not is_retryable(error):
                    raise ModelError(f"{self._source(error)}: {_describe(error)} (not retried)") from None
                if attempt == attempts:
                    raise ModelError(f"{self._source(error)}: {_describe(error)} after {attempts} attempt(s)") from None
                with self._lock:
                    self.usage["retries"] += 1
                self.retry.sleep(self.retry.delay(attempt, retry_after(error)))
                continue
            reply = self.adapter.reply(response)
            answered = getattr(response, "model", None)
            with self._lock:
                self.answered_model = answered if isinstance(answered, str) and answered else self.answered_model
                add_reply(self.usage, reply)
            return reply
        raise AssertionError("unreachable: the loop returns or raises")
