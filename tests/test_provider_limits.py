"""The rate limiter paces to the limits a provider announces in its headers (both header families), on a
simulated clock: generous limits lift our defaults, tight ones pace, what is in flight is not counted
twice, a lower limit of the user's still holds, and the wait is put down to whose limit it was."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.recording.provider_limits import announced_limits, reset_seconds
from pytest_toolsandbox.recording.ratelimit import PAUSE_WITHOUT_RETRY_AFTER, Limits, RateLimiter
from pytest_toolsandbox.recording.ratelimit_report import RateLimitReport
from tests.test_ratelimit import REMOTE, FakeTime, body


def openai_headers(rpm: float, remaining: float, reset: str = "1s") -> dict[str, str]:
    return {"x-ratelimit-limit-requests": f"{rpm:g}", "x-ratelimit-remaining-requests": f"{remaining:g}",
            "x-ratelimit-reset-requests": reset}


@pytest.mark.parametrize(("text", "seconds"), [("1s", 1.0), ("20ms", 0.02), ("6m0s", 360.0), ("1.5s", 1.5),
                                               ("1h2m3s", 3723.0), ("2026-01-01T00:00:05Z", 5.0), ("soon", None),
                                               ("", None)])
def test_reset_durations_of_both_providers(text: str, seconds: float | None) -> None:
    assert reset_seconds(text, now=1767225600.0) == seconds  # 2026-01-01T00:00:00Z


def test_both_header_families_are_read_and_bad_values_ignored() -> None:
    openai = announced_limits({**openai_headers(500, 499, "120ms"), "x-ratelimit-limit-tokens": "30000",
                               "x-ratelimit-remaining-tokens": "29000"}, now=0)
    assert (openai["requests"].limit, openai["requests"].remaining, openai["requests"].reset) == (500, 499, 0.12)
    assert (openai["tokens"].limit, openai["tokens"].remaining) == (30000, 29000)
    anthropic = announced_limits({"anthropic-ratelimit-requests-limit": "50",
                                  "anthropic-ratelimit-requests-remaining": "49",
                                  "anthropic-ratelimit-input-tokens-limit": "40000",
                                  "anthropic-ratelimit-input-tokens-remaining": "1000"}, now=0)
    assert (anthropic["requests"].limit, anthropic["tokens"].limit, anthropic["tokens"].remaining) == (50, 40000, 1000)
    assert announced_limits({"x-ratelimit-limit-requests": "nan", "x-ratelimit-remaining-requests": "-1"}, 0) == {}


def paced(limiter: RateLimiter, time: FakeTime, count: int, headers: dict[str, str]) -> list[float]:
    """Send `count` requests one after the other, each answered with `headers`; the waits they met."""
    for _ in range(count):
        limiter.observe(limiter.acquire(REMOTE, body()), 200, headers, b"{}")
    return time.waits


def test_generous_announced_limits_lift_our_defaults() -> None:
    time = FakeTime()
    defaults = RateLimiter(Limits(rpm=6, tpm=0), clock=time.clock, sleep=time.sleep)
    assert paced(defaults, time, 3, {}) == [10.0, 10.0]  # our 6/min, a bucket of one request
    time.waits.clear()
    announced = RateLimiter(Limits(rpm=6, tpm=0), clock=time.clock, sleep=time.sleep)
    assert paced(announced, time, 50, openai_headers(10_000, 9_000)) == []
    assert announced.waited == {}


def test_tight_announced_limits_pace_to_the_remaining_budget() -> None:
    time = FakeTime()
    limiter = RateLimiter(Limits(rpm=600, tpm=0), clock=time.clock, sleep=time.sleep)
    limiter.observe(limiter.acquire(REMOTE, body()), 200, openai_headers(30, 0), b"{}")
    limiter.acquire(REMOTE, body())
    assert time.waits == [2.0]  # nothing left: the next unit comes after 60 / 30 s
    assert list(limiter.waited) == ["the provider's limit of 30 requests/min (api.example.com, m)"]


def test_requests_in_flight_are_not_counted_twice() -> None:
    time = FakeTime()
    limiter = RateLimiter(Limits(rpm=600, tpm=0), clock=time.clock, sleep=time.sleep)
    first, second, third = (limiter.acquire(REMOTE, body()) for _ in range(3))
    limiter.observe(second, 200, openai_headers(60, 2), b"{}")  # two left, but two of ours are on their way
    limiter.observe(first, 200, openai_headers(60, 60), b"{}")  # an older answer does not raise the level
    limiter.acquire(REMOTE, body())
    assert time.waits == [1.0]
    limiter.release(third)


def test_a_lower_limit_of_the_users_still_holds_and_xdist_workers_share() -> None:
    time = FakeTime()
    yours = RateLimiter(Limits(rpm=6, tpm=0, explicit=frozenset({"rpm"})), clock=time.clock, sleep=time.sleep)
    paced(yours, time, 20, openai_headers(10_000, 10_000))
    assert sum(time.waits) == pytest.approx(10 * 19)  # one request per 10 s, as without the announcement
    assert list(yours.waited) == ["your limit of 6 requests/min (--rpm; api.example.com, m)"]
    time.waits.clear()
    shared = RateLimiter(Limits(rpm=0, tpm=0, workers=2), clock=time.clock, sleep=time.sleep)
    shared.observe(shared.acquire(REMOTE, body()), 200, openai_headers(60, 0), b"{}")
    shared.acquire(REMOTE, body())
    assert time.waits == [2.0]  # each of two workers takes 30 of the 60 a minute


def test_a_loopback_server_that_announces_limits_is_paced() -> None:
    time = FakeTime()
    limiter = RateLimiter(Limits(rpm=6, tpm=6), clock=time.clock, sleep=time.sleep)
    tickets = [limiter.acquire("127.0.0.1", body(max_tokens=10_000)) for _ in range(3)]
    assert time.waits == []  # no budget of ours for a local server
    limiter.observe(tickets[0], 200, openai_headers(60, 2), b"{}")
    limiter.acquire("127.0.0.1", body())
    assert time.waits == [1.0]  # but the limit it announced


def test_a_429_without_retry_after_waits_for_the_announced_reset() -> None:
    time = FakeTime()
    limiter = RateLimiter(Limits(rpm=0, tpm=0), clock=time.clock, sleep=time.sleep)
    limiter.observe(limiter.acquire(REMOTE, body()), 429, openai_headers(100, 0, "7s"), b"{}")
    limiter.acquire(REMOTE, body())
    assert time.waits[0] == 7.0
    assert "a 429's pause from api.example.com" in limiter.waited


def test_the_announced_reset_is_a_deadline_of_its_own_model() -> None:
    """The reset was announced 5 s before the 429: 2 s are left. Another model's 429 does not wait for it."""
    time = FakeTime()
    limiter = RateLimiter(Limits(rpm=0, tpm=0), clock=time.clock, sleep=time.sleep)
    limiter.observe(limiter.acquire(REMOTE, body()), 200, openai_headers(100, 0, "7s"), b"{}")
    time.now += 5.0
    limiter.observe(limiter.acquire(REMOTE, body()), 429, {}, b"{}")
    limiter.acquire(REMOTE, body())
    assert time.waits == [2.0]
    time.now += 10.0
    limiter.observe(limiter.acquire(REMOTE, body()), 200, openai_headers(100, 0, "60s"), b"{}")
    limiter.observe(limiter.acquire(REMOTE, body(model="other")), 429, {}, b"{}")
    limiter.acquire(REMOTE, body(model="other"))
    assert time.waits == [2.0, PAUSE_WITHOUT_RETRY_AFTER]


def test_the_report_names_whose_limit_held_the_run() -> None:
    report = RateLimitReport()
    report._add({"our default limit of 60 requests/min (x)": 42.0, "the provider's limit (y)": 0.5})
    assert report.lines() == ["rate limit: requests waited 42.0 s in total (summed over requests) for "
                              "our default limit of 60 requests/min (x)"]


def test_a_bucket_back_under_the_users_lower_limit_paces_at_the_users_rate_again() -> None:
    from pytest_toolsandbox.recording.ratelimit import BURST_SECONDS, PROVIDERS, TokenBucket

    bucket = TokenBucket(30.0, updated=0.0)
    bucket.announce(20.0, PROVIDERS, None, 1.0)  # the provider's share fell below the user's --rpm
    assert (bucket.per_minute, bucket.burst_seconds, bucket.owner) == (20.0, 60.0, PROVIDERS)
    bucket.announce(30.0, "yours", None, 2.0)  # and rose above it again
    assert (bucket.per_minute, bucket.burst_seconds, bucket.owner) == (30.0, BURST_SECONDS, "yours")
