"""Compact cassettes: xz-compressed vcrpy YAML that loads back unchanged, is byte-stable, and is small."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest
from vcr.persisters.filesystem import CassetteNotFoundError
from vcr.request import Request
from vcr.serialize import serialize
from vcr.serializers import yamlserializer

from pytest_toolsandbox.recording.cassette_check import CassetteError
from pytest_toolsandbox.recording.persister import CompressedYamlPersister


def episode_cassette(requests: int) -> dict:
    """A cassette shaped like an episode's: every request repeats the tools and the growing history."""
    tools = [{"type": "function", "function": {"name": f"tool_{index}", "description": "does a thing " * 8,
                                               "parameters": {"type": "object", "properties": {}}}}
             for index in range(10)]
    history: list[dict] = [{"role": "system", "content": "You are a helpful assistant."}]
    cassette: dict[str, list] = {"requests": [], "responses": []}
    for turn in range(requests):
        history.append({"role": "user", "content": f"message number {turn} about the weather in Lisbon"})
        body = json.dumps({"model": "m", "messages": history, "tools": tools})
        cassette["requests"].append(Request("POST", "http://127.0.0.1:8080/v1/chat/completions", body, {}))
        answer = json.dumps({"choices": [{"message": {"content": f"answer {turn}"}}]})
        cassette["responses"].append({"status": {"code": 200, "message": "OK"}, "headers": {},
                                      "body": {"string": answer}})
    return cassette


def test_round_trip_is_lossless_and_byte_stable(tmp_path: Path) -> None:
    cassette = episode_cassette(6)
    first, second = tmp_path / "a.yaml.xz", tmp_path / "b" / "a.yaml.xz"
    CompressedYamlPersister.save_cassette(first, cassette, yamlserializer)
    CompressedYamlPersister.save_cassette(second, cassette, yamlserializer)
    assert first.read_bytes() == second.read_bytes()
    requests, responses = CompressedYamlPersister.load_cassette(first, yamlserializer)
    assert [request.body for request in requests] == [request.body for request in cassette["requests"]]
    assert [response["body"]["string"] for response in responses] == [
        response["body"]["string"].encode() for response in cassette["responses"]]


def test_compression_pays_off_on_repeated_history(tmp_path: Path) -> None:
    cassette = episode_cassette(12)
    path = tmp_path / "c.yaml.xz"
    CompressedYamlPersister.save_cassette(path, cassette, yamlserializer)
    plain = len(serialize(cassette, yamlserializer).encode())
    assert plain / path.stat().st_size > 20


def test_missing_empty_and_damaged_files(tmp_path: Path) -> None:
    with pytest.raises(CassetteNotFoundError):
        CompressedYamlPersister.load_cassette(tmp_path / "none.yaml.xz", yamlserializer)
    empty = tmp_path / "empty.yaml.xz"
    empty.write_bytes(lzma.compress(b"  \n"))
    with pytest.raises(CassetteNotFoundError):
        CompressedYamlPersister.load_cassette(empty, yamlserializer)
    damaged = tmp_path / "damaged.yaml.xz"
    damaged.write_bytes(b"interactions: []\n")
    with pytest.raises(CassetteError, match=r"damaged\.yaml\.xz: not an xz-compressed"):
        CompressedYamlPersister.load_cassette(damaged, yamlserializer)


def test_an_interrupt_mid_save_leaves_the_old_file_and_no_partial_one(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "episode.yaml.xz"
    CompressedYamlPersister.save_cassette(path, episode_cassette(1), yamlserializer)
    before = path.read_bytes()

    def interrupted(self: Path, target: Path) -> Path:
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        CompressedYamlPersister.save_cassette(path, episode_cassette(2), yamlserializer)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(child.name for child in tmp_path.iterdir()) == ["episode.yaml.xz"]


def test_saves_sharing_a_cassette_directory_never_touch_each_others_unfinished_file(tmp_path: Path) -> None:
    path = tmp_path / "episode.yaml.xz"
    others = [tmp_path / "episode.yaml.xz.partial", tmp_path / ".episode.yaml.xz.1.partial"]
    for other in others:  # another run's save in progress
        other.write_bytes(b"another run's cassette, half written")
    CompressedYamlPersister.save_cassette(path, episode_cassette(1), yamlserializer)
    assert CompressedYamlPersister.load_cassette(path, yamlserializer)[0][0].method == "POST"
    assert all(other.read_bytes() == b"another run's cassette, half written" for other in others)
    assert sorted(child.name for child in tmp_path.iterdir()) == sorted(["episode.yaml.xz", *(o.name for o in others)])
