"""The rate limiter's rules one at a time, on a simulated clock: how the run's limits are shared among
xdist workers, whose limit a wait is put down to, what a request that is not sent gives back, how an
answer corrects the token budget, and how long a 429 or 503 pauses the host."""

from __future__ import annotations

import json

import pytest

from pytest_toolsandbox.recording.ratelimit import (
    DEFAULT_RPM,
    DEFAULT_TPM,
    PAUSE_WITHOUT_RETRY_AFTER,
    Limits,
    RateLimiter,
    configure_limits,
    estimate_tokens,
    shared_limiter,
)
from tests.test_ratelimit import REMOTE, FakeTime, body


@pytest.mark.parametrize(("environ", "workers"), [({}, 1), ({"PYTEST_XDIST_WORKER_COUNT": "4"}, 4),
                                                  ({"PYTEST_XDIST_WORKER_COUNT": "four"}, 1),
                                                  ({"PYTEST_XDIST_WORKER_COUNT": "0"}, 1)])
def test_the_run_limits_are_shared_out_among_the_workers(environ: dict[str, str], workers: int) -> None:
    configure_limits(None, 400.0, environ, max_request_tokens=777)

    assert shared_limiter().limits == Limits(rpm=DEFAULT_RPM / workers, tpm=400.0 / workers,
                                             explicit=frozenset({"tpm"}), max_request_tokens=777, workers=workers)
    configure_limits(30.0, None, environ)
    assert shared_limiter().limits.tpm == DEFAULT_TPM / workers
    assert shared_limiter().limits.explicit == frozenset({"rpm"})


def limiter(time: FakeTime, **limits: object) -> RateLimiter:
    return RateLimiter(Limits(**limits), clock=time.clock, sleep=time.sleep)


def test_a_wait_is_put_down_to_whose_limit_it_was() -> None:
    time = FakeTime()
    ours, yours = limiter(time, rpm=6, tpm=0), limiter(time, rpm=6, tpm=0, explicit=frozenset({"rpm"}))
    for each in (ours, yours):
        each.acquire(REMOTE, body())
        each.acquire(REMOTE, body())

    assert ours.waited == {"our default limit of 6 requests/min (api.example.com, m; the provider announced none "
                           "yet; --rpm 0 lifts it)": 10.0}
    assert yours.waited == {"your limit of 6 requests/min (--rpm; api.example.com, m)": 10.0}


def test_a_request_not_sent_gives_back_its_request_and_its_tokens() -> None:
    time = FakeTime()
    rpm_6 = limiter(time, rpm=6, tpm=600)  # buckets of 1 request and 100 tokens
    heavy = body(max_tokens=80)
    ticket = rpm_6.acquire(REMOTE, heavy)
    assert (ticket.requests, ticket.estimate) == (1, estimate_tokens(heavy))

    rpm_6._give_back(ticket)

    assert (ticket.requests, ticket.estimate) == (0, 0)
    rpm_6.acquire(REMOTE, heavy)
    assert time.waits == []  # both the request and the tokens were there again


def test_a_request_given_back_twice_returns_its_reservation_once() -> None:
    time = FakeTime()
    rpm_6 = limiter(time, rpm=6, tpm=0)
    ticket = rpm_6.acquire(REMOTE, body())
    rpm_6._give_back(ticket)
    rpm_6._give_back(ticket)
    rpm_6.acquire(REMOTE, body())

    rpm_6.acquire(REMOTE, body())

    assert time.waits == [10.0]  # a bucket of one request: the third waits, the refund did not double


def usage(total: int) -> bytes:
    return json.dumps({"usage": {"prompt_tokens": total - 1, "completion_tokens": 1}}).encode()


@pytest.mark.parametrize(("status", "answer", "headers", "wait"), [
    (200, usage(10), {}, 0.4),  # 94 reserved, 10 used: 84 back, 90 of 100 there, 4 tokens (0.4 s) short
    (400, usage(10), {}, 0.0),  # an error's usage says nothing: all 94 come back
    (200, b"{}", {}, 8.8),  # no usage: the estimate stands, 6 left, 88 tokens (8.8 s) short
    (200, b"<html>busy</html>", {}, 8.8),  # an answer that is not JSON reports no usage either
    (200, usage(10), {"x-ratelimit-limit-tokens": "600", "x-ratelimit-remaining-tokens": "50"}, 4.4),  # the
    # provider's own figure (50 left, 44 tokens short) replaces ours, not corrected a second time by the usage
])
def test_the_answer_corrects_the_token_reservation(status: int, answer: bytes, headers: dict[str, str],
                                                   wait: float) -> None:
    time = FakeTime()
    tpm_600 = limiter(time, rpm=0, tpm=600)  # a bucket of 100 tokens, 10 per second
    heavy = body(max_tokens=84)
    assert estimate_tokens(heavy) == 94

    tpm_600.observe(tpm_600.acquire(REMOTE, heavy), status, headers, answer)
    tpm_600.acquire(REMOTE, heavy)

    assert sum(time.waits) == pytest.approx(wait)


@pytest.mark.parametrize(("status", "headers", "pause"), [
    (429, {"retry-after": "0"}, 0.0),
    (429, {"retry-after": "7"}, 7.0),
    (429, {"retry-after": "99999"}, 300.0),  # a misbehaving server stalls a run for five minutes at most
    (429, {}, PAUSE_WITHOUT_RETRY_AFTER),
    (503, {"retry-after": "3"}, 3.0),
    (503, {}, 0.0),  # an outage without retry-after is for the retries, not the pace
    (500, {"retry-after": "3"}, 0.0),
])
def test_how_long_an_answer_pauses_the_host(status: int, headers: dict[str, str], pause: float) -> None:
    time = FakeTime()
    unlimited = limiter(time, rpm=0, tpm=0)

    unlimited.observe(unlimited.acquire(REMOTE, body()), status, headers, b"{}")
    unlimited.acquire(REMOTE, body())
    unlimited.acquire("other.example.com", body())

    assert sum(time.waits) == pytest.approx(pause)


@pytest.mark.parametrize(("remaining", "pause"), [
    ("0", 20.0 - 60 / 1000),  # counted from the announcement: the next request first waited for the 1000/min
    ("1", PAUSE_WITHOUT_RETRY_AFTER),
])
def test_a_429_without_retry_after_waits_for_the_reset_of_an_exhausted_limit(remaining: str, pause: float) -> None:
    time = FakeTime()
    unlimited = limiter(time, rpm=0, tpm=0)
    exhausted = {"x-ratelimit-limit-requests": "1000", "x-ratelimit-remaining-requests": remaining,
                 "x-ratelimit-reset-requests": "20s"}
    unlimited.observe(unlimited.acquire(REMOTE, body()), 200, exhausted, b"{}")
    time.waits.clear()

    unlimited.observe(unlimited.acquire(REMOTE, body()), 429, {}, b"{}")
    unlimited.acquire(REMOTE, body())

    assert time.waits[-1:] == [pytest.approx(pause)]


def test_an_answer_without_limits_forgets_the_last_reset() -> None:
    time = FakeTime()
    unlimited = limiter(time, rpm=0, tpm=0)
    exhausted = {"x-ratelimit-limit-requests": "1000", "x-ratelimit-remaining-requests": "0",
                 "x-ratelimit-reset-requests": "20s"}
    unlimited.observe(unlimited.acquire(REMOTE, body()), 200, exhausted, b"{}")
    unlimited.observe(unlimited.acquire(REMOTE, body()), 200, {**exhausted, "x-ratelimit-remaining-requests": "900"},
                      b"{}")
    time.waits.clear()

    unlimited.observe(unlimited.acquire(REMOTE, body()), 429, {}, b"{}")
    unlimited.acquire(REMOTE, body())

    assert time.waits == [PAUSE_WITHOUT_RETRY_AFTER]


@pytest.mark.parametrize(("mine", "owner"), [(10.0, "your limit of 10 requests/min"),
                                             (30.0, "the provider's limit of 30 requests/min")])
def test_the_users_limit_holds_only_while_it_is_lower_than_the_providers(mine: float, owner: str) -> None:
    time = FakeTime()
    capped = limiter(time, rpm=mine, tpm=0, explicit=frozenset({"rpm"}))
    announced = {"x-ratelimit-limit-requests": "30", "x-ratelimit-remaining-requests": "0",
                 "x-ratelimit-reset-requests": "1s"}

    capped.observe(capped.acquire(REMOTE, body()), 200, announced, b"{}")
    capped.acquire(REMOTE, body())

    assert [label.split(" (")[0] for label in capped.waited] == [owner]
