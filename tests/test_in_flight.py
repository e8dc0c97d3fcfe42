"""The live requests in flight and when the next answer is due: what lets the episode pool import
modules only where no answer would be held up (ahead.py, `EpisodePool.idle`)."""

from __future__ import annotations

from pytest_toolsandbox.recording.in_flight import InFlight


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


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
    slow = requests.sent()
    clock.now += 0.8
    requests.ended(slow, answered=True)
    fast = requests.sent()
    clock.now += 0.5
    requests.ended(fast, answered=True)
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
    refused = requests.sent()
    clock.now += 0.001
    requests.ended(refused, answered=False)
    assert requests.fastest is None and requests.count == 0
