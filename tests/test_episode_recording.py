"""Per-episode recording: each episode's roles send through their own cassette, with no process-wide
patching, so episodes recorded or replayed at once in several threads never mix their traffic; the
files are byte for byte what vcrpy's own httpx2 patching writes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from vcr.serializers import yamlserializer

from pytest_toolsandbox.recording.cassettes import recorder
from pytest_toolsandbox.recording.episode_recording import EpisodeRecording, active_recording
from pytest_toolsandbox.recording.miss import CassetteMiss
from pytest_toolsandbox.recording.persister import CompressedYamlPersister
from pytest_toolsandbox.recording.ratelimit import configure_limits
from pytest_toolsandbox.roles.conversation import Conversation, Said
from pytest_toolsandbox.roles.model_client import ModelClient
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings
from pytest_toolsandbox.roles.retry import RetryPolicy
from pytest_toolsandbox.running.watchdog import call_with_timeout
from pytest_toolsandbox.tools.rapidapi import RapidAPIBackend
from tests.fake_provider import Behaviour, FakeProvider
from tests.llm_server import CHAT, MESSAGES, Reply, ScriptedServer, anthropic_text, openai_text
from tests.test_plugin_support import xzcat

KEY = "sk-test-SECRET-0123456789"


class Sleeper:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with ScriptedServer() as running:
        yield running


@pytest.fixture
def limiter_sleeps() -> Iterator[Sleeper]:
    """The process's shared limiter with requests limited to 1 per minute even on loopback, and a
    sleeper that only records: any wait of a request shows up in the list."""
    sleeper = Sleeper()
    configure_limits(1, None, environ={}, sleep=sleeper)
    yield sleeper
    configure_limits(None, None)


def client(server: ScriptedServer, provider: str = "openai") -> ModelClient:
    base = server.url + ("/v1" if provider == "openai" else "")
    settings = ModelSettings(provider, "test-model", ModelOptions(base_url=base, max_tokens=64))
    return ModelClient(settings, RetryPolicy(retries=2, sleep=Sleeper(), jitter=lambda: 1.0))


def ask(model: ModelClient, text: str) -> str:
    return model.complete(Conversation(system="You are terse.", entries=(Said(text, mine=False),)), []).text


def play(path: Path, mode: str, server: ScriptedServer, questions: list[str],
         provider: str = "openai") -> tuple[list[str], EpisodeRecording]:
    """One 'episode': a model client asked `questions` in turn inside the episode's recording."""
    recording = EpisodeRecording(path, mode)
    with recording.activate():
        model = client(server, provider)
        answers = [ask(model, question) for question in questions]
    recording.finish(keep=True)
    return answers, recording


def recorded_questions(path: Path) -> list[str]:
    requests, _ = CompressedYamlPersister.load_cassette(path, yamlserializer)
    return [json.loads(request.body)["messages"][-1]["content"] for request in requests]


def test_an_episode_records_then_replays_with_the_server_stopped(server: ScriptedServer, tmp_path: Path) -> None:
    path = tmp_path / "episode.yaml.xz"
    server.push(CHAT, openai_text("one"), openai_text("two"))
    answers, recording = play(path, "once", server, ["first?", "second?"])
    assert answers == ["one", "two"]
    assert (recording.play_count, recording.dirty, recording.replayed) == (0, True, False)
    assert KEY not in xzcat(path) and "authorization" not in xzcat(path).lower()
    server.stop()
    replayed, again = play(path, "none", server, ["first?", "second?"])
    assert replayed == answers
    assert (again.play_count, again.dirty, again.replayed) == (2, False, True)


def test_a_request_outside_the_cassette_is_a_miss_with_a_diff(server: ScriptedServer, tmp_path: Path) -> None:
    path = tmp_path / "episode.yaml.xz"
    server.push(CHAT, openai_text("one"))
    play(path, "once", server, ["first?"])
    with pytest.raises(CassetteMiss) as miss:
        play(path, "none", server, ["a different question?"])
    assert f"request not in cassette {path}" in str(miss.value)
    assert '-   "content": "first?"' in str(miss.value) and '+   "content": "a different question?"' in str(miss.value)


def test_keep_false_leaves_no_new_file_and_an_existing_one_untouched(server: ScriptedServer, tmp_path: Path) -> None:
    path = tmp_path / "episode.yaml.xz"
    server.push(CHAT, openai_text("one"), openai_text("two"), openai_text("three"))
    recording = EpisodeRecording(path, "once")
    with recording.activate():
        ask(client(server), "first?")
    recording.finish(keep=False)
    assert not path.exists()
    play(path, "once", server, ["first?"])
    before = path.read_bytes()
    recording = EpisodeRecording(path, "new_episodes")
    with recording.activate():
        ask(client(server), "new?")
    recording.finish(keep=False)
    assert path.read_bytes() == before


def test_the_file_is_byte_identical_to_what_vcrpys_patching_writes(server: ScriptedServer, tmp_path: Path) -> None:
    """The same two requests (OpenAI and Anthropic) recorded by vcrpy's `use_cassette` and by ours."""
    for provider, path, reply in (("openai", CHAT, openai_text), ("anthropic", MESSAGES, anthropic_text)):
        server.push(path, reply("one"), reply("two"), reply("one"), reply("two"))
        theirs, ours = tmp_path / f"vcrpy-{provider}.yaml.xz", tmp_path / f"ours-{provider}.yaml.xz"
        with recorder("once").use_cassette(str(theirs)):
            model = client(server, provider)
            vcr_answers = [ask(model, "first?"), ask(model, "second?")]
        answers, _ = play(ours, "once", server, ["first?", "second?"], provider)
        assert answers == vcr_answers == ["one", "two"]
        assert ours.read_bytes() == theirs.read_bytes()
    server.stop()  # a vcrpy-written cassette replays through our transport
    assert play(tmp_path / "vcrpy-openai.yaml.xz", "none", server, ["first?", "second?"])[0] == ["one", "two"]


def test_two_episodes_at_once_each_keep_their_own_requests(server: ScriptedServer, tmp_path: Path) -> None:
    """Two threads record at the same time, their requests interleaved by a barrier; then both replay
    at the same time with the server stopped."""
    server.push(CHAT, Reply(openai_text("ok").body, forever=True))
    barrier = threading.Barrier(2)
    paths = {name: tmp_path / f"{name}.yaml.xz" for name in ("left", "right")}
    questions = {name: [f"{name} {index}?" for index in range(4)] for name in paths}
    results: dict[str, object] = {}

    def episode(name: str, mode: str) -> None:
        recording = EpisodeRecording(paths[name], mode)
        try:
            with recording.activate():
                model = client(server)
                for question in questions[name]:
                    barrier.wait(timeout=30)  # both threads are inside their episodes at every request
                    ask(model, question)
            results[name] = recording
        except BaseException as error:
            results[name] = error
            barrier.abort()
        finally:
            recording.finish(keep=True)

    for mode in ("once", "none"):
        threads = [threading.Thread(target=episode, args=(name, mode)) for name in paths]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for name in paths:
            assert isinstance(results[name], EpisodeRecording), results[name]
            assert recorded_questions(paths[name]) == questions[name]
        if mode == "once":
            assert sorted(body["messages"][-1]["content"] for body in server.bodies(CHAT)) == sorted(
                questions["left"] + questions["right"])
            server.stop()
        else:
            assert all(results[name].replayed and results[name].play_count == 4 for name in paths)


def play_two_question_episodes(provider: FakeProvider, directory: Path, name: str, count: int) -> None:
    """`count` recorded episodes one after another on this thread, each asking the model twice."""
    settings = ModelSettings("openai", "fake", ModelOptions(base_url=provider.url + "/v1", max_tokens=64))
    for episode in range(count):
        recording = EpisodeRecording(directory / f"{name}-{episode}.yaml.xz", "all")
        with recording.activate():
            model = ModelClient(settings, RetryPolicy(retries=0))
            ask(model, f"{name} {episode}, first?")
            ask(model, f"{name} {episode}, second?")
        recording.finish(keep=True)
        assert len(recorded_questions(recording.path)) == 2


def test_episodes_one_after_another_share_one_live_connection(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The live transports are the process's (one set per thread), not the episode's: a later episode
    reuses the earlier one's connection (and its TLS context) instead of building its own."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeProvider(Behaviour(delay=0.0)) as provider:
        play_two_question_episodes(provider, tmp_path, "episode", 3)
        stats = provider.stats()
    assert (stats.served, stats.connections) == (6, 1)


def test_threads_playing_at_once_reuse_their_connections_across_episodes(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runner threads play three episodes each at the same time over two connections in all: reuse
    across episodes holds with per-thread pools (which thread gets which transport: the test below)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    errors: list[BaseException] = []
    with FakeProvider(Behaviour(delay=0.01)) as provider:

        def runner(name: str) -> None:
            try:
                play_two_question_episodes(provider, tmp_path, name, 3)
            except BaseException as error:
                errors.append(error)

        threads = [threading.Thread(target=runner, args=(name,)) for name in ("left", "right")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        stats = provider.stats()
    assert not errors, errors
    assert (stats.served, stats.connections) == (12, 2)


def test_the_threads_transports_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a TLS context loads and parses the certificate store (~30 ms): one per process, not per
    runner thread."""
    import httpx2

    from pytest_toolsandbox.recording.transport import LiveTransports

    built: list[object] = []
    create = httpx2.create_ssl_context

    def counted_create(*args: object, **kwargs: object) -> object:
        built.append(context := create(*args, **kwargs))
        return context

    monkeypatch.setattr(httpx2, "create_ssl_context", counted_create)
    live = LiveTransports()
    url = httpx2.URL("https://api.example.test/v1/chat/completions")
    transports: list[object] = []
    threads = [threading.Thread(target=lambda: transports.extend([live.for_url(url), live.for_url(url)]))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(transports) == 6 and len({id(transport) for transport in transports}) == 3  # one per thread
    assert len(built) == 1


def test_reading_the_proxy_environment_survives_pytest_changing_it_from_another_thread() -> None:
    """pytest sets and deletes PYTEST_CURRENT_TEST on its main thread while runner threads send live
    requests; urllib's proxy lookup iterates os.environ and, unguarded, raised KeyError about once in
    250 lookups here (it failed a benchmark episode)."""
    import os

    import httpx2

    from pytest_toolsandbox.recording.transport import _proxy_for

    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            os.environ["TOOLSANDBOX_CHURN"] = "x"
            del os.environ["TOOLSANDBOX_CHURN"]

    churner = threading.Thread(target=churn)
    churner.start()
    try:
        # distinct hosts: lookups are cached per host, and every one of these must really read os.environ
        proxies = {_proxy_for(httpx2.URL(f"http://host-{index}.test/v1")) for index in range(3000)}
    finally:
        stop.set()
        churner.join()
    assert proxies == {None}


def test_a_proxy_variable_set_or_cleared_between_runs_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2

    from pytest_toolsandbox.recording.transport import _proxy_for

    url = httpx2.URL("https://api.example.test/v1")
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert _proxy_for(url) is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example.test:3128")
    assert _proxy_for(url) == "http://proxy.example.test:3128"
    monkeypatch.setenv("NO_PROXY", "api.example.test")
    assert _proxy_for(url) is None


def test_the_recording_is_visible_in_the_episode_thread_and_nowhere_else(tmp_path: Path) -> None:
    recording = EpisodeRecording(tmp_path / "episode.yaml.xz", "once")
    seen: list[object] = []
    with recording.activate():
        assert call_with_timeout(active_recording, 5) is recording  # the watchdog's episode thread
        other = threading.Thread(target=lambda: seen.append(active_recording()))
        other.start()
        other.join()
    assert seen == [None]
    assert active_recording() is None


def test_a_replay_never_waits_for_the_rate_limit(server: ScriptedServer, tmp_path: Path,
                                                 limiter_sleeps: Sleeper) -> None:
    path = tmp_path / "episode.yaml.xz"
    questions = [f"question {index}?" for index in range(5)]
    server.push(CHAT, *(openai_text(f"answer {index}") for index in range(5)))
    play(path, "once", server, questions)
    # recording at 1 per minute: the 2nd..5th request waited 1, 2, 3 and 4 minutes (the sleeper only records,
    # so their debts add up), in slices that look for a stop of the episode
    assert sum(limiter_sleeps.waits) == pytest.approx(600, rel=0.01)
    limiter_sleeps.waits.clear()
    server.stop()
    answers, recording = play(path, "none", server, questions)
    assert answers == [f"answer {index}" for index in range(5)] and recording.replayed
    assert limiter_sleeps.waits == []


def test_rapidapi_requests_go_into_the_active_recording(server: ScriptedServer, tmp_path: Path) -> None:
    path = tmp_path / "episode.yaml.xz"
    server.push("/api/v1/convert", Reply({"success": True, "result": {"convertedAmount": 0.9}}))
    backend = RapidAPIBackend(key="rapid-SECRET", base_url=server.url)
    recording = EpisodeRecording(path, "once", environ={"RAPID_API_KEY": "rapid-SECRET"})
    with recording.activate():
        assert backend.currency_rate("EUR") == 0.9
    recording.finish(keep=True)
    server.stop()
    assert "rapid-SECRET" not in xzcat(path)
    replay = EpisodeRecording(path, "none")
    with replay.activate():
        assert RapidAPIBackend(key=None, base_url=server.url).currency_rate("EUR") == 0.9
    assert replay.replayed


def test_a_live_request_counts_as_in_flight_until_its_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool's idle test (running/ahead.py) compares this count with the running episodes."""
    from pytest_toolsandbox.recording.in_flight import IN_FLIGHT

    def live_requests_in_flight() -> int:
        return IN_FLIGHT.count

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeProvider(Behaviour(delay=30.0)) as provider:  # answered at once when the server stops
        settings = ModelSettings("openai", "fake", ModelOptions(base_url=provider.url + "/v1", max_tokens=64))
        recording = EpisodeRecording(tmp_path / "episode.yaml.xz", "all")
        before = live_requests_in_flight()

        def episode() -> None:
            with recording.activate():
                ask(ModelClient(settings, RetryPolicy(retries=0)), "anyone there?")

        thread = threading.Thread(target=episode)
        thread.start()
        while provider.stats().arrived == 0 and thread.is_alive():
            threading.Event().wait(0.01)  # polling until the request reached the server, not timing it
        during = live_requests_in_flight()
    thread.join(30)
    assert (before, during, live_requests_in_flight()) == (0, 1, 0)
