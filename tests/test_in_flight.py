"""The live requests in flight and when the next answer is due: what lets the episode pool import
modules only where no answer would be held up (running/ahead.py, `EpisodePool.idle`)."""

from __future__ import annotations

from pytest_toolsandbox.recording.in_flight import InFlight
from tests.test_scheduler import Clock


def exchange(requests: InFlight, clock: Clock, seconds: float, answered: bool = True) -> None:
    """One request sent and ended `seconds` later."""
    token = requests.sent()
    clock.now += seconds
    requests.ended(token, answered=answered)


def test_no_answer_is_expected_before_the_providers_latency_is_known() -> None:
    clock = Clock()
    requests = InFlight(clock)
    assert (requests.count, requests.quiet_for()) == (0, None)
    first = requests.sent()
    assert (requests.count, requests.quiet_for()) == (1, None)  # the first wave: latency unknown
    clock.now += 0.5
    requests.ended(first, answered=True)
    assert (requests.count, requests.fastest, requests.quiet_for()) == (0, 0.5, None)  # nothing in flight


def test_the_earliest_request_and_the_fastest_answer_say_when_the_next_answer_is_due() -> None:
    clock = Clock()
    requests = InFlight(clock)
    exchange(requests, clock, 0.8)
    exchange(requests, clock, 0.5)
    assert requests.fastest == 0.5
    early = requests.sent()
    clock.now += 0.1
    requests.sent()
    clock.now += 0.1
    assert round(requests.quiet_for(), 6) == 0.3  # the earlier of the two requests is due at +0.5
    requests.ended(early, answered=True)  # in 0.2 s: the fastest answer now
    assert round(requests.fastest, 6) == 0.2 and round(requests.quiet_for(), 6) == 0.1
    clock.now += 1.0
    assert round(requests.quiet_for(), 6) == -0.9  # overdue: a slower answer than any so far


def test_a_failed_exchange_says_nothing_about_the_providers_latency() -> None:
    clock = Clock()
    requests = InFlight(clock)
    exchange(requests, clock, 0.001, answered=False)  # a refused connection
    assert requests.fastest is None and requests.count == 0
