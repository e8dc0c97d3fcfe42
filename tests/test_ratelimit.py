"""Shared rate limits: token buckets per (host, model) on a simulated clock, usage correction, pauses
after a 429 that hold every thread, and the real SDKs through the cassette transport."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from vcr.serializers import yamlserializer

from pytest_toolsandbox.basics.limits import RequestTooLarge
from pytest_toolsandbox.recording.episode_recording import EpisodeRecording
from pytest_toolsandbox.recording.persister import CompressedYamlPersister
from pytest_toolsandbox.recording.ratelimit import (
    DEFAULT_RPM,
    DEFAULT_TPM,
    STOP_CHECK_SECONDS,
    Limits,
    RateLimiter,
    configure_limits,
    estimate_tokens,
    shared_limiter,
    used_tokens,
)
from pytest_toolsandbox.roles.conversation import Conversation, Said
from pytest_toolsandbox.roles.model_client import ModelClient
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings
from pytest_toolsandbox.roles.retry import RetryPolicy
from pytest_toolsandbox.running.interruption import Stoppable, checkpoint
from pytest_toolsandbox.running.watchdog import EpisodeTimeout
from tests.llm_server import CHAT, Reply, ScriptedServer, error, openai_calls, openai_text
from tests.test_plugin_support import WIFI_OFF, run, summary, write_suite, xzcat

REMOTE = "api.example.com"


class FakeTime:
    """A clock that only moves when someone sleeps; every sleep is kept."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []
        self._lock = threading.Lock()

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.waits.append(round(seconds, 6))
            self.now += seconds


def body(model: str = "m", max_tokens: int | None = None, padding: int = 0) -> bytes:
    fields: dict[str, object] = {"model": model, "pad": "x" * padding}
    if max_tokens is not None:
        fields["max_tokens"] = max_tokens
    return json.dumps(fields).encode()


def limiter(time: FakeTime, rpm: float = 0, tpm: float = 0) -> RateLimiter:
    return RateLimiter(Limits(rpm=rpm, tpm=tpm), clock=time.clock, sleep=time.sleep)


def test_requests_per_minute_allow_a_ten_second_burst_then_an_even_pace() -> None:
    time = FakeTime()
    limits = limiter(time, rpm=60)
    for _ in range(25):
        limits.acquire(REMOTE, body())
    assert time.waits == [1.0] * 15  # 10 at once (ten seconds of budget), then one per second
    assert time.now == pytest.approx(15.0)


def test_each_host_and_model_has_its_own_budget() -> None:
    time = FakeTime()
    limits = limiter(time, rpm=6)  # a burst of one request
    for model in ("a", "b"):
        limits.acquire(REMOTE, body(model))
    limits.acquire("other.example.com", body("a"))
    assert time.waits == []
    limits.acquire(REMOTE, body("a"))
    assert time.waits == [10.0]


def test_tokens_per_minute_are_corrected_by_the_reported_usage() -> None:
    request = body(max_tokens=900)
    estimate = len(request) // 4 + 900
    assert estimate_tokens(request) == estimate
    for usage, expected in ((None, [(estimate - (1000 - estimate)) * 60 / 6000]), (50, [])):
        time = FakeTime()
        limits = limiter(time, tpm=6000)  # 1000 tokens of burst, 100 per second
        ticket = limits.acquire(REMOTE, request)
        answer = {"usage": {"prompt_tokens": usage - 10, "completion_tokens": 10}} if usage else {}
        limits.observe(ticket, 200, {}, json.dumps(answer).encode())
        limits.acquire(REMOTE, request)
        assert time.waits == pytest.approx(expected)


def test_usage_of_both_providers_is_read() -> None:
    assert used_tokens(b'{"usage": {"prompt_tokens": 100, "completion_tokens": 20}}') == 120
    assert used_tokens(b'{"usage": {"input_tokens": 200, "output_tokens": 30}}') == 230
    assert used_tokens(b'{"id": 1}') is None and used_tokens(b"not json") is None
    assert estimate_tokens(b'{"max_output_tokens": 100}') == len(b'{"max_output_tokens": 100}') // 4 + 100


def test_a_429_pauses_every_thread_on_that_host_until_the_retry_after() -> None:
    time = FakeTime()
    limits = limiter(time, rpm=6000)
    ticket = limits.acquire(REMOTE, body("a"))
    limits.observe(ticket, 429, {"retry-after": "2"}, b"{}")
    others = [threading.Thread(target=limits.acquire, args=(REMOTE, body(model))) for model in ("a", "b")]
    for thread in others:
        thread.start()
    for thread in others:
        thread.join(10)
    assert time.waits[0] == 2.0 and time.now >= 2.0  # the first waiter sleeps the pause out
    assert all(wait <= 2.0 for wait in time.waits)
    before = list(time.waits)
    limits.acquire("other.example.com", body("a"))  # another provider is not paused
    assert time.waits == before


@pytest.mark.parametrize(("status", "headers", "pause"), [
    (429, {"retry-after-ms": "1500"}, 1.5),
    (429, {}, 5.0),  # none named: a short backoff
    (503, {"retry-after": "3"}, 3.0),
    (503, {}, 0.0),  # a plain server error is the caller's retry's business
    (429, {"retry-after": "100000"}, 300.0),  # capped
])
def test_which_responses_pause_and_for_how_long(status: int, headers: dict[str, str], pause: float) -> None:
    time = FakeTime()
    limits = limiter(time, rpm=6000)
    limits.observe(limits.acquire(REMOTE, body()), status, headers, b"{}")
    limits.acquire(REMOTE, body())
    assert sum(time.waits) == pytest.approx(pause)


def test_loopback_has_no_budget_unless_one_was_given_but_honours_429() -> None:
    time = FakeTime()
    defaults = RateLimiter(Limits(rpm=6, tpm=6), clock=time.clock, sleep=time.sleep)
    for _ in range(3):
        defaults.acquire("127.0.0.1", body(max_tokens=10_000))
    assert time.waits == []  # no budget: a local server is not throttled by default
    defaults.observe(defaults.acquire("127.0.0.1", body()), 429, {"retry-after": "3"}, b"{}")
    defaults.acquire("127.0.0.1", body())
    assert time.waits == [3.0]  # but a server that says 429 pauses every request to it
    time.waits.clear()
    explicit = RateLimiter(Limits(rpm=6, tpm=0, explicit=frozenset({"rpm"})), clock=time.clock, sleep=time.sleep)
    explicit.acquire("localhost", body())
    explicit.acquire("localhost", body())
    assert time.waits == [10.0]


def test_configured_limits_are_shared_out_among_xdist_workers() -> None:
    try:
        limits = configure_limits(None, 0, environ={"PYTEST_XDIST_WORKER_COUNT": "4"}).limits
        assert (limits.rpm, limits.tpm, limits.explicit) == (DEFAULT_RPM / 4, 0.0, frozenset({"tpm"}))
        limits = configure_limits(120, None, environ={}).limits
        assert (limits.rpm, limits.tpm, limits.explicit) == (120.0, DEFAULT_TPM, frozenset({"rpm"}))
    finally:
        configure_limits(None, None)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-0123456789")
    with ScriptedServer() as running:
        yield running


def test_a_429_from_the_server_pauses_the_pool_and_the_request_then_succeeds(server: ScriptedServer,
                                                                             tmp_path: Path) -> None:
    """The real openai SDK through the cassette transport: 429 with `retry-after: 2`, then 200."""
    time = FakeTime()
    configure_limits(1000, None, environ={}, clock=time.clock, sleep=time.sleep)  # explicit: loopback counts
    retry_waits: list[float] = []
    try:
        server.push(CHAT, error(429, headers={"retry-after": "2"}), openai_text("done"))
        settings = ModelSettings("openai", "test-model", ModelOptions(base_url=server.url + "/v1", max_tokens=64))
        model = ModelClient(settings, RetryPolicy(retries=2, sleep=retry_waits.append, jitter=lambda: 1.0))
        recording = EpisodeRecording(tmp_path / "episode.yaml.xz", "once")
        with recording.activate():
            reply = model.complete(Conversation(system="", entries=(Said("hi", mine=False),)), [])
        recording.finish(keep=True)
    finally:
        configure_limits(None, None)
    assert reply.text == "done"
    assert retry_waits == [2.0]  # the call's own retry honours retry-after, as before
    # and the limiter held the pool for the same pause, looking for a stop of the episode every half second
    assert sum(time.waits) == pytest.approx(2.0) and max(time.waits) <= STOP_CHECK_SECONDS
    assert xzcat(tmp_path / "episode.yaml.xz").count("code: 200") == 1
    assert "code: 429" not in xzcat(tmp_path / "episode.yaml.xz")


def test_the_run_configures_the_limiter_from_its_options(pytester: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)  # this suite's own workers are not the run's
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    try:
        pytester.makeini("[pytest]\ntoolsandbox_tpm = 5000\n")
        run(pytester, "--rpm", "30").assert_outcomes(passed=1)
        options = summary(pytester)["run"]["options"]
        assert (options["rpm"], options["tpm"]) == (30.0, 5000.0)
        assert shared_limiter().limits == Limits(rpm=30.0, tpm=5000.0, explicit=frozenset({"rpm", "tpm"}))
        run(pytester, "--tpm", "0").assert_outcomes(passed=1)
        assert shared_limiter().limits == Limits(rpm=DEFAULT_RPM, tpm=0.0, explicit=frozenset({"tpm"}))
        result = run(pytester, "--rpm", "-5")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert "--rpm / toolsandbox_rpm: '-5' must be at least 0" in result.stderr.str()
    finally:
        configure_limits(None, None)


def test_a_429_storm_slows_concurrent_episodes_without_failing_them(server: ScriptedServer, tmp_path: Path) -> None:
    """Four episodes at once in four threads; the first four answers are 429s. Every request ends in
    success, the limiter paused the pool, and each cassette holds only its episode's successes."""
    time = FakeTime()
    configure_limits(6000, None, environ={}, clock=time.clock, sleep=time.sleep)
    server.push(CHAT, *(error(429, headers={"retry-after": "1"}) for _ in range(4)))
    server.push(CHAT, Reply(openai_text("ok").body, forever=True))
    outcomes: dict[int, object] = {}

    def episode(number: int) -> None:
        settings = ModelSettings("openai", "test-model", ModelOptions(base_url=server.url + "/v1", max_tokens=64))
        model = ModelClient(settings, RetryPolicy(retries=4, sleep=lambda _: None, jitter=lambda: 1.0))
        recording = EpisodeRecording(tmp_path / f"episode-{number}.yaml.xz", "once")
        try:
            with recording.activate():
                outcomes[number] = [model.complete(Conversation(system="", entries=(
                    Said(f"episode {number} question {index}", mine=False),)), []).text for index in range(3)]
        except Exception as failure:
            outcomes[number] = failure
        finally:
            recording.finish(keep=True)

    try:
        threads = [threading.Thread(target=episode, args=(number,)) for number in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        configure_limits(None, None)
    assert outcomes == {number: ["ok", "ok", "ok"] for number in range(4)}
    assert time.waits and all(0 < wait <= 1.0 for wait in time.waits)
    for number in range(4):
        cassette = xzcat(tmp_path / f"episode-{number}.yaml.xz")
        assert cassette.count("code: 200") == 3 and "code: 429" not in cassette
        requests, _ = CompressedYamlPersister.load_cassette(tmp_path / f"episode-{number}.yaml.xz", yamlserializer)
        assert [json.loads(request.body)["messages"][-1]["content"] for request in requests] == [
            f"episode {number} question {index}" for index in range(3)]


# ------------------------------------------------------------------------------------------------
# One oversized request (issue 25): it never stalls the others, and can be refused outright.

def test_one_oversized_request_reserves_at_most_one_bucket() -> None:
    time = FakeTime()
    limits = limiter(time, tpm=100_000)  # a bucket of 16,666 tokens, 1,666 a second
    huge = body(padding=3_600_000)  # 900,000 tokens, within the default size limit
    limits.acquire(REMOTE, huge)
    assert time.waits == []  # the bucket was full
    limits.acquire(REMOTE, body())
    # the huge request took the (whole-token) bucket, not ten minutes of debt, and not nothing: the next
    # one waits for its own tokens at 1,666 a second
    assert 0 < sum(time.waits) <= estimate_tokens(body()) * 60 / 100_000


def test_usage_far_over_the_estimate_leaves_at_most_one_bucket_of_debt() -> None:
    time = FakeTime()
    limits = limiter(time, tpm=100_000)
    ticket = limits.acquire(REMOTE, body())
    usage = {"usage": {"prompt_tokens": 5_000_000, "completion_tokens": 1}}
    limits.observe(ticket, 200, {}, json.dumps(usage).encode())
    limits.acquire(REMOTE, body())
    assert 0 < sum(time.waits) <= 10.0


def test_a_request_over_the_size_limit_is_refused_and_reserves_nothing() -> None:
    time = FakeTime()
    limits = RateLimiter(Limits(rpm=6, tpm=6000, max_request_tokens=1000), clock=time.clock, sleep=time.sleep)
    with pytest.raises(RequestTooLarge, match=r"estimated at 1,\d{3} tokens .* over --max-request-tokens 1,000"):
        limits.acquire(REMOTE, body(padding=4000))
    limits.acquire(REMOTE, body())  # the bucket of one request is still full
    assert time.waits == []
    unlimited = RateLimiter(Limits(rpm=0, tpm=0, max_request_tokens=0), clock=time.clock, sleep=time.sleep)
    unlimited.acquire(REMOTE, body(padding=40_000_000))


def test_an_episode_stopped_while_its_request_waits_sends_nothing_and_gives_its_reservation_back() -> None:
    time = FakeTime()
    limits = limiter(time, rpm=6)  # one request per ten seconds
    limits.acquire(REMOTE, body())
    stoppable = Stoppable()

    def sleep_then_time_out(seconds: float) -> None:
        time.sleep(seconds)
        stoppable.stop(EpisodeTimeout)  # the item's timeout expires while the request waits

    limits.sleep = sleep_then_time_out
    with pytest.raises(EpisodeTimeout):
        stoppable.run(lambda: limits.acquire(REMOTE, body(), checkpoint))
    assert time.waits == [STOP_CHECK_SECONDS]  # it stopped waiting at the next look, not after ten seconds
    limits.sleep = time.sleep
    limits.acquire(REMOTE, body())  # the next request waits for the first one's debt only
    assert sum(time.waits) == pytest.approx(10.0)


def test_an_oversized_request_errors_its_item_and_never_reaches_the_server(pytester: pytest.Pytester,
                                                                           server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    try:
        result = run(pytester, "--agent", "openai:test-model", "--model-base-url", server.url + "/v1",
                     "--max-request-tokens", "100", "--llm-retry-delay", "0", "--ts-record-mode", "once")
    finally:
        configure_limits(None, None)
    result.assert_outcomes(errors=1)
    error = summary(pytester)["records"][0]["error"]
    assert "openai:test-model: a request to 127.0.0.1 is estimated at" in error
    assert "over --max-request-tokens 100: it was not sent" in error
    assert server.bodies(CHAT) == []  # not sent, and not retried
    assert summary(pytester)["run"]["options"]["max_request_tokens"] == 100


SIMULATED_CLOCK = """
import pytest

from pytest_toolsandbox.recording import ratelimit


class SimulatedTime:
    now = 0.0

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.hookimpl(trylast=True)
def pytest_configure(config):  # the plugin's limiter of --rpm 6, on a clock that moves when it waits
    time, limiter = SimulatedTime(), ratelimit.shared_limiter()
    limiter.clock, limiter.sleep = time.clock, time.sleep
"""


@pytest.mark.parametrize("workers", [[], ["-n", "1"]])
def test_the_limit_requests_wait_for_is_named_when_it_first_holds_them(pytester: pytest.Pytester,
                                                                       server: ScriptedServer,
                                                                       workers: list[str]) -> None:
    """--rpm 6 holds one request at a time: the item's second request waits 10 s (simulated)."""
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF,
                           "scenarios/settings/wifi_off_again.yaml": WIFI_OFF})
    pytester.makeconftest(SIMULATED_CLOCK)
    server.push(CHAT, openai_calls(("c1", "set_wifi_status", {"on": False})), openai_text("Wifi is off now."),
                openai_calls(("c2", "set_wifi_status", {"on": False})), openai_text("Wifi is off now."))
    try:
        result = run(pytester, "--agent", "openai:test-model", "--model-base-url", server.url + "/v1", "--rpm", "6",
                     "--llm-retry-delay", "0", "--concurrency", "1", "--ts-record-mode", "once", *workers)
    finally:
        configure_limits(None, None)
    output = result.stdout.str()
    label = "your limit of 6 requests/min (--rpm; 127.0.0.1, test-model)"
    first = f"rate limit: requests are waiting for {label} (10.0 s so far; the total comes at the end)"
    assert output.count(first) == 1
    assert output.index(first) < output.index("toolsandbox: per-category results")
    assert f"rate limit: requests waited 30.0 s in total (summed over requests) for {label}" in output
