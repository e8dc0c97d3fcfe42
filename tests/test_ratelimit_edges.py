"""The rate limiter at its edges, on a simulated clock: waits of exactly 0 s or 1 s, how waiting time is
booked (per `STOP_CHECK_SECONDS` look while a stoppable request waits), a 429 meeting a request that waits
for its budget, what a stopped or dropped request leaves behind, bodies that are not what they should be,
loopback hosts, and whose token limit a wait is put down to."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_toolsandbox.basics.limits import RequestTooLarge
from pytest_toolsandbox.recording.ratelimit import (
    PAUSE_WITHOUT_RETRY_AFTER,
    STOP_CHECK_SECONDS,
    Limits,
    RateLimiter,
    estimate_tokens,
    model_of,
    used_tokens,
)
from pytest_toolsandbox.running.watchdog import EpisodeTimeout
from tests.test_provider_limits import openai_headers
from tests.test_ratelimit import REMOTE, FakeTime, body
from tests.test_ratelimit_rules import limiter, usage

HEAVY = body(max_tokens=84)
"""94 tokens: with --tpm 600 (a bucket of 100 tokens, 10 a second) one fits, a second waits 8.8 s."""
PAUSE = "a 429's pause from api.example.com"


def stopped_at_look(number: int) -> Callable[[], None]:
    """A checkpoint whose episode is stopped (its timeout expired) at the `number`th look."""
    looks: list[None] = []

    def checkpoint() -> None:
        looks.append(None)
        if len(looks) == number:
            raise EpisodeTimeout("the item's timeout expired")

    return checkpoint


def never_stopped() -> None:
    """The checkpoint of an episode that runs to its end."""


@pytest.mark.parametrize(("request_body", "tokens"), [
    (b"", 0), (b"not json", 2), (b"[1, 2, 3, 4]", 3),
    (b'{"max_completion_tokens": 100}', 7 + 100), (b'{"max_output_tokens": 100}', 6 + 100),
    (b'{"max_tokens": -5}', 4), (b'{"max_tokens": "100"}', 5), (b'{"max_tokens": 1}', 4 + 1),
    (b'{"max_tokens": 0, "max_completion_tokens": 50}', 11),  # max_tokens is named: it wins, and asks for none
])
def test_a_request_is_estimated_at_its_bytes_over_four_plus_the_output_it_asks_for(request_body: bytes,
                                                                                   tokens: int) -> None:
    assert estimate_tokens(request_body) == tokens


@pytest.mark.parametrize(("request_body", "model"), [(b"", ""), (b"not json", ""), (b"[1]", ""), (b'{"model": 5}', ""),
                                                     (b"{}", ""), (b'{"model": "gpt-x"}', "gpt-x")])
def test_the_model_of_a_request_is_its_json_models_name_or_nothing(request_body: bytes, model: str) -> None:
    assert model_of(request_body) == model


@pytest.mark.parametrize(("answer", "tokens"), [(b"<html>busy</html>", None), (b"[1]", None), (b'{"usage": [1]}', None),
                                                (b'{"usage": {"prompt_tokens": 3}}', 3),
                                                (b'{"usage": {"input_tokens": 2, "output_tokens": "x"}}', 2)])
def test_the_usage_an_answer_reports_is_read_only_from_a_json_usage_object(answer: bytes, tokens: int | None) -> None:
    assert used_tokens(answer) == tokens


def test_a_request_at_the_size_limit_is_sent_and_one_token_over_is_refused_saying_how_to_fix_it() -> None:
    time, request = FakeTime(), body(padding=4000)  # 4,025 bytes: 1,006 tokens
    RateLimiter(Limits(rpm=0, tpm=0, max_request_tokens=1006), clock=time.clock, sleep=time.sleep).acquire(REMOTE,
                                                                                                         request)
    tight = RateLimiter(Limits(rpm=0, tpm=0, max_request_tokens=1005), clock=time.clock, sleep=time.sleep)

    with pytest.raises(RequestTooLarge) as refused:
        tight.acquire(REMOTE, request)

    assert str(refused.value) == ("a request to api.example.com is estimated at 1,006 tokens (4,025 bytes), "
                                  "over --max-request-tokens 1,005: it was not sent; raise the limit (0 = none) "
                                  "if the model takes requests that large")


@pytest.mark.parametrize("host", ["LocalHost", "LOCALHOST", "127.0.0.1"])
def test_a_loopback_host_written_in_any_case_has_no_default_budget(host: str) -> None:
    time = FakeTime()
    defaults = limiter(time, rpm=6, tpm=6)
    for _ in range(3):
        defaults.acquire(host, body(max_tokens=10_000))
    assert time.waits == []


@pytest.mark.parametrize(("host", "explicit", "label"), [
    ("127.0.0.1", frozenset({"tpm"}), "your limit of 600 tokens/min (--tpm; 127.0.0.1, m)"),  # --tpm holds locally
    (REMOTE, frozenset({"tpm"}), "your limit of 600 tokens/min (--tpm; api.example.com, m)"),
    (REMOTE, frozenset(), "our default limit of 600 tokens/min (api.example.com, m; the provider announced none yet; "
                          "--tpm 0 lifts it)"),
])
def test_a_wait_for_tokens_is_put_down_to_whose_token_limit_it_was(host: str, explicit: frozenset[str],
                                                                   label: str) -> None:
    time = FakeTime()
    tpm_600 = limiter(time, rpm=6000, tpm=600, explicit=explicit)  # a request budget that never holds
    tpm_600.acquire(host, HEAVY)
    tpm_600.acquire(host, HEAVY)

    assert time.waits == [8.8]
    assert tpm_600.waited == {label: pytest.approx(8.8)}


def test_a_request_without_a_model_is_put_down_to_its_host_alone() -> None:
    time = FakeTime()
    rpm_6 = limiter(time, rpm=6, tpm=0)
    rpm_6.acquire(REMOTE, b"")  # a tool API's GET
    rpm_6.acquire(REMOTE, b"")

    assert rpm_6.waited == {"our default limit of 6 requests/min (api.example.com; the provider announced none yet; "
                            "--rpm 0 lifts it)": 10.0}


def test_a_wait_both_budgets_impose_alike_is_put_down_to_the_request_limit() -> None:
    time = FakeTime()
    both = limiter(time, rpm=6, tpm=600)  # one request, or 100 tokens, per 10 s
    full = body(max_tokens=100)  # reserves the whole bucket of 100 tokens
    both.acquire(REMOTE, full)
    both.acquire(REMOTE, full)

    assert time.waits == [10.0]
    assert list(both.waited) == ["our default limit of 6 requests/min (api.example.com, m; the provider announced "
                                 "none yet; --rpm 0 lifts it)"]


def test_every_wait_is_booked_and_added_up_even_one_of_exactly_a_second() -> None:
    time = FakeTime()
    rpm_60 = limiter(time, rpm=60, tpm=0)  # a burst of ten, then one a second
    for _ in range(12):
        rpm_60.acquire(REMOTE, body())

    assert time.waits == [1.0, 1.0]
    assert rpm_60.waited == {"our default limit of 60 requests/min (api.example.com, m; the provider announced none "
                             "yet; --rpm 0 lifts it)": 2.0}


@pytest.mark.parametrize(("retry_after", "checkpoint", "waits"), [
    ("1", None, [1.0]),
    ("2", None, [2.0]),
    ("2", never_stopped, [STOP_CHECK_SECONDS] * 4),  # a stoppable request looks at its episode every half second
])
def test_a_429s_pause_is_booked_once_however_often_the_request_looks(retry_after: str,
                                                                    checkpoint: Callable[[], None] | None,
                                                                    waits: list[float]) -> None:
    time = FakeTime()
    unlimited = limiter(time, rpm=0, tpm=0)
    unlimited.observe(unlimited.acquire(REMOTE, body()), 429, {"retry-after": retry_after}, b"{}")

    unlimited.acquire(REMOTE, body(), checkpoint)

    assert time.waits == waits
    assert unlimited.waited == {PAUSE: float(retry_after)}


def test_after_a_pause_the_request_waits_for_its_budget_from_the_pauses_end() -> None:
    time = FakeTime()
    rpm_6 = limiter(time, rpm=6, tpm=0)  # a bucket of one request, a tenth of one a second
    rpm_6.observe(rpm_6.acquire(REMOTE, body()), 429, {"retry-after": "1"}, b"{}")

    rpm_6.acquire(REMOTE, body())

    assert time.waits == [1.0, 9.0]  # the pause ends at exactly 1 s; the bucket refilled a tenth meanwhile
    assert list(rpm_6.waited.values()) == [1.0, 9.0]


def test_a_429_while_a_request_waits_for_its_budget_holds_it_for_the_pause_on_top() -> None:
    time = FakeTime()
    rpm_6 = limiter(time, rpm=6, tpm=0)
    other = rpm_6.acquire(REMOTE, body(model="other"))  # another model: a budget of its own, the same host
    rpm_6.acquire(REMOTE, body())

    def sleep_then_429(seconds: float) -> None:
        time.sleep(seconds)
        if len(time.waits) == 1:
            rpm_6.observe(other, 429, {"retry-after": "1"}, b"{}")

    rpm_6.sleep = sleep_then_429
    rpm_6.acquire(REMOTE, body(), never_stopped)  # owes 10 s; after half a second the host is paused for 1 s

    assert sum(time.waits) == pytest.approx(0.5 + 1.0 + 9.5)
    assert rpm_6.waited == {"our default limit of 6 requests/min (api.example.com, m; the provider announced none "
                            "yet; --rpm 0 lifts it)": 10.0, PAUSE: 1.0}


@pytest.mark.parametrize(("limits", "host", "waits"), [
    ({"rpm": 0, "tpm": 600}, REMOTE, [0.5, 0.5, 7.8]),  # the next request finds only what refilled: 16 tokens
    ({"rpm": 6, "tpm": 6}, "127.0.0.1", [0.5, 0.5]),  # a host without a budget: nothing to give back
])
def test_an_episode_stopped_during_a_pause_gives_back_nothing_it_did_not_take(limits: dict[str, float], host: str,
                                                                              waits: list[float]) -> None:
    time = FakeTime()
    limited = limiter(time, **limits)
    limited.acquire(host, HEAVY)  # 94 of the 100 tokens
    limited.observe(limited.acquire(host, body(model="other")), 429, {"retry-after": "1"}, b"{}")

    with pytest.raises(EpisodeTimeout):
        limited.acquire(host, HEAVY, stopped_at_look(2))  # stopped half-way through the pause, before reserving
    limited.acquire(host, HEAVY)

    assert time.waits == waits


@pytest.mark.parametrize("ended", ["dropped", "stopped"])
def test_a_request_that_ended_unanswered_is_not_in_flight_when_the_provider_announces(ended: str) -> None:
    time = FakeTime()
    rpm_600 = limiter(time, rpm=600, tpm=0)
    answered = rpm_600.acquire(REMOTE, body())
    if ended == "dropped":
        rpm_600.release(rpm_600.acquire(REMOTE, body()))
    else:
        with pytest.raises(EpisodeTimeout):
            rpm_600.acquire(REMOTE, body(), stopped_at_look(1))
    rpm_600.observe(answered, 200, openai_headers(60, 2), b"{}")  # two left, none of ours on the way

    rpm_600.acquire(REMOTE, body())
    rpm_600.acquire(REMOTE, body())

    assert time.waits == []


def test_a_request_given_back_returns_exactly_its_one_request() -> None:
    time = FakeTime()
    rpm_12 = limiter(time, rpm=12, tpm=0)  # a bucket of two requests
    rpm_12.acquire(REMOTE, body())
    with pytest.raises(EpisodeTimeout):
        rpm_12.acquire(REMOTE, body(), stopped_at_look(1))
    rpm_12.acquire(REMOTE, body())

    rpm_12.acquire(REMOTE, body())

    assert time.waits == [5.0]


def test_an_error_answer_gives_back_the_whole_estimate() -> None:
    time = FakeTime()
    tpm_600 = limiter(time, rpm=0, tpm=600)
    failed = tpm_600.acquire(REMOTE, HEAVY)
    tpm_600.acquire(REMOTE, body())  # 6 tokens: the bucket is empty
    tpm_600.observe(failed, 500, {}, usage(10))

    tpm_600.acquire(REMOTE, HEAVY)

    assert time.waits == []  # the 94 came back: exactly enough


def test_usage_corrects_a_token_budget_the_provider_announced() -> None:
    time = FakeTime()
    unlimited = limiter(time, rpm=0, tpm=0)  # no budget of ours: only the provider's
    announced = {"x-ratelimit-limit-tokens": "600", "x-ratelimit-remaining-tokens": "100"}
    unlimited.observe(unlimited.acquire(REMOTE, body()), 200, announced, b"{}")
    heavy = unlimited.acquire(REMOTE, HEAVY)
    unlimited.observe(heavy, 200, {}, usage(10))  # 84 of the 94 come back

    unlimited.acquire(REMOTE, HEAVY)

    assert time.waits == [pytest.approx(0.4)]  # 90 there, 4 tokens short at the provider's 10 a second


def test_a_later_429_never_shortens_the_pause() -> None:
    time = FakeTime()
    unlimited = limiter(time, rpm=0, tpm=0)
    first, second = unlimited.acquire(REMOTE, body()), unlimited.acquire(REMOTE, body())
    unlimited.observe(first, 429, {"retry-after": "7"}, b"{}")
    unlimited.observe(second, 429, {"retry-after": "2"}, b"{}")

    unlimited.acquire(REMOTE, body())

    assert time.waits == [7.0]


def test_a_429_waits_for_a_reset_exactly_one_second_away() -> None:
    time = FakeTime()
    unlimited = limiter(time, rpm=0, tpm=0)
    announcing, limited = unlimited.acquire(REMOTE, body()), unlimited.acquire(REMOTE, body())
    unlimited.observe(announcing, 200, openai_headers(60, 0, "1s"), b"{}")
    unlimited.observe(limited, 429, {}, b"{}")

    unlimited.acquire(REMOTE, body())

    assert time.waits[0] == 1.0  # not the 5 s backoff of a 429 that says nothing
    assert PAUSE_WITHOUT_RETRY_AFTER not in time.waits


def test_a_429_waits_for_anthropics_reset_written_as_a_time_of_day() -> None:
    time = FakeTime()
    new_year = 1767225600.0  # 2026-01-01T00:00:00Z
    unlimited = RateLimiter(Limits(rpm=0, tpm=0), clock=time.clock, sleep=time.sleep, wall_clock=lambda: new_year)
    announcing, limited = unlimited.acquire(REMOTE, body()), unlimited.acquire(REMOTE, body())
    unlimited.observe(announcing, 200, {"anthropic-ratelimit-requests-limit": "50",
                                        "anthropic-ratelimit-requests-remaining": "0",
                                        "anthropic-ratelimit-requests-reset": "2026-01-01T00:00:07Z"}, b"{}")
    unlimited.observe(limited, 429, {}, b"{}")

    unlimited.acquire(REMOTE, body())

    assert time.waits == [7.0]


def test_a_lower_token_limit_of_the_users_holds_against_a_generous_provider() -> None:
    time = FakeTime()
    capped = limiter(time, rpm=6000, tpm=600, explicit=frozenset({"tpm"}))
    generous = {"x-ratelimit-limit-tokens": "60000", "x-ratelimit-remaining-tokens": "60000"}
    capped.observe(capped.acquire(REMOTE, HEAVY), 200, generous, b"{}")

    capped.acquire(REMOTE, HEAVY)

    assert capped.waited == {"your limit of 600 tokens/min (--tpm; api.example.com, m)": pytest.approx(8.8)}


def test_an_announcement_of_requests_alone_keeps_our_token_budget() -> None:
    time = FakeTime()
    tpm_600 = limiter(time, rpm=0, tpm=600)
    tpm_600.observe(tpm_600.acquire(REMOTE, HEAVY), 200, openai_headers(10_000, 10_000), b"{}")

    tpm_600.acquire(REMOTE, HEAVY)

    assert time.waits == [8.8]


def test_each_worker_takes_its_share_of_the_announced_remaining_budget() -> None:
    time = FakeTime()
    half = limiter(time, rpm=0, tpm=0, workers=2)
    half.observe(half.acquire(REMOTE, body()), 200, openai_headers(60, 2), b"{}")  # one each, 30 a minute each

    half.acquire(REMOTE, body())
    half.acquire(REMOTE, body())

    assert time.waits == [2.0]

