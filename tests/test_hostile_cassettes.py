"""Hostile cassettes against whole pytest runs (issue 25, point 1).

A cassette is a file from disk: invalid YAML, a refused `!!python` tag, a field of the wrong type. Such
a file must fail its own item with an error naming the file and what is wrong — whether its episode is
played ahead (`--concurrency`, the default for model agents) or in its turn — and every other item
must run. No record mode may take it for an empty cassette and record over it.
"""

from __future__ import annotations

import lzma
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_provider import Behaviour, FakeProvider
from tests.test_plugin_support import records_by_id, run, summary, write_suite

TARGET = "scenarios/settings/half.yaml::test_scenario[base]"
CASSETTE = Path("cassettes/scenarios/settings/half/openai_fake--scripted/base-t1.yaml.xz")

GOOD_INTERACTION = """interactions:
- request: {body: '{}', headers: {}, method: POST, uri: 'http://127.0.0.1:1/v1/chat/completions'}
  response:
    body: {string: '{}'}
    headers: {content-type: [application/json]}
    status: {code: 200, message: OK}
"""

CORRUPT = {
    "invalid YAML": ("interactions: [\n", "invalid YAML at line 2"),
    "python tag": ("interactions: !!python/object/apply:os.system ['echo hacked']\n", "invalid YAML"),
    "interactions an int": ("interactions: 5\n", "`interactions` is int, not a list"),
    "int body": (GOOD_INTERACTION.replace("body: {string: '{}'}", "body: {string: 5}"),
                 "interactions[0].response.body.body is int, not text"),
    "list headers": (GOOD_INTERACTION.replace("headers: {content-type: [application/json]}",
                                              "headers: [content-type, application/json]"),
                     "interactions[0].response.headers is list, not a mapping"),
    "missing status": (GOOD_INTERACTION.replace("    status: {code: 200, message: OK}\n", ""),
                       "interactions[0].response.status is missing"),
    "not xz": (None, "not an xz-compressed UTF-8 cassette"),
}


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    with FakeProvider(Behaviour(delay=0.0)) as server:
        yield server


def model_args(server: FakeProvider, *extra: str) -> tuple[str, ...]:
    return ("--agent", "openai:fake", "--model-base-url", server.url + "/v1", "--llm-retry-delay", "0.01", *extra)


def record(pytester: pytest.Pytester, provider: FakeProvider) -> dict[str, str]:
    """Record the suite's cassettes; each item's outcome."""
    write_suite(pytester)
    result = run(pytester, *model_args(provider, "--ts-record-mode", "all"))
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    outcomes = {nodeid: record["outcome"] for nodeid, record in records_by_id(summary(pytester)).items()}
    assert len(outcomes) == 4 and "error" not in outcomes.values()
    return outcomes


def corrupt(pytester: pytest.Pytester, case: str) -> bytes:
    text, _ = CORRUPT[case]
    data = b"interactions: []\n" if text is None else lzma.compress(text.encode())
    (pytester.path / CASSETTE).write_bytes(data)
    return data


@pytest.mark.parametrize("case", list(CORRUPT))
def test_a_corrupt_cassette_errors_its_item_alone_when_played_ahead(pytester: pytest.Pytester,
                                                                     provider: FakeProvider,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     case: str) -> None:
    monkeypatch.delenv("CI", raising=False)
    recorded = record(pytester, provider)
    corrupt(pytester, case)
    result = run(pytester, *model_args(provider, "--ts-record-mode", "none", "--concurrency", "4"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    records = records_by_id(summary(pytester))
    assert len(records) == 4 and not summary(pytester)["partial"]
    error = records[TARGET]["error"]
    assert str(CASSETTE.parent) in error and CORRUPT[case][1] in error
    assert "Traceback" not in error
    assert {nodeid: record["outcome"] for nodeid, record in records.items()} == {**recorded, TARGET: "error"}


@pytest.mark.parametrize("mode", ["once", "new_episodes"])
@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_corrupt_cassette_is_never_recorded_over(pytester: pytest.Pytester, provider: FakeProvider,
                                                   monkeypatch: pytest.MonkeyPatch, mode: str,
                                                   concurrency: str) -> None:
    monkeypatch.delenv("CI", raising=False)
    recorded = record(pytester, provider)
    data = corrupt(pytester, "interactions an int")
    served = provider.stats().served
    result = run(pytester, *model_args(provider, "--ts-record-mode", mode, "--concurrency", concurrency))
    outcomes = {nodeid: record["outcome"] for nodeid, record in records_by_id(summary(pytester)).items()}
    assert outcomes == {**recorded, TARGET: "error"}
    assert "holds no requests" not in result.stdout.str()
    assert "`interactions` is int, not a list" in records_by_id(summary(pytester))[TARGET]["error"]
    assert (pytester.path / CASSETTE).read_bytes() == data
    assert provider.stats().served == served  # the other items replayed; nothing went live


def test_preparing_an_episode_ahead_that_raises_errors_that_item_alone(pytester: pytest.Pytester,
                                                                       provider: FakeProvider,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Any failure while an item's episode is prepared ahead (here its world) is that item's error."""
    monkeypatch.delenv("CI", raising=False)
    recorded = record(pytester, provider)
    pytester.makeconftest("""
import pytest_toolsandbox.scenario.world_builder as builder

original = builder.build_world
COLLECTED = []


def build_world(scenario, *args, **kwargs):
    if COLLECTED and scenario.name == "half":  # collection builds every world once to check it
        raise MemoryError("no room for this world")
    return original(scenario, *args, **kwargs)


def pytest_collection_finish(session):
    COLLECTED.append(True)


builder.build_world = build_world


def pytest_unconfigure(config):  # pytester runs in this process: later runs build worlds again
    builder.build_world = original
""")
    result = run(pytester, *model_args(provider, "--ts-record-mode", "none", "--concurrency", "4"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED and "INTERNALERROR" not in result.stdout.str()
    records = records_by_id(summary(pytester))
    assert {nodeid: record["outcome"] for nodeid, record in records.items()} == {**recorded, TARGET: "error"}
    error = records[TARGET]["error"]
    assert "preparing the episode raised MemoryError: no room for this world" in error
