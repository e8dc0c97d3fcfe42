"""Size limits: a cassette that decompresses to gigabytes, or a reply of megabytes, errors its own item
and leaves the rest of the run and the report small (`basics/limits.py`)."""

from __future__ import annotations

import gzip
import json
import lzma
import threading
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.basics.limits import LimitExceeded, Limits, read_xz, truncated
from pytest_toolsandbox.recording.episode_recording import EpisodeRecording
from tests.llm_server import CHAT, ScriptedServer, openai_calls, openai_text
from tests.test_plugin_support import WIFI_OFF, records_by_id, run, summary, write_suite

CASSETTE = Path("cassettes/scenarios/settings/wifi_off/openai_test-model--scripted/base-t1.yaml.xz")
MODEL_ITEM = "scenarios/settings/wifi_off.yaml::test_scenario[openai_test_model-base]"
REFERENCE_ITEM = "scenarios/settings/wifi_off.yaml::test_scenario[reference-base]"


def xz_bomb(path: Path, megabytes: int) -> Path:
    """An xz file of a few KB that decompresses to `megabytes` MiB (written without holding them)."""
    compressor = lzma.LZMACompressor(preset=0)
    block = b"interactions: []\n" + b"#" * ((1 << 20) - 17)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as stream:
        for _ in range(megabytes):
            stream.write(compressor.compress(block))
        stream.write(compressor.flush())
    return path


def test_read_xz_stops_at_the_limit_without_expanding_the_bomb(tmp_path: Path) -> None:
    bomb = xz_bomb(tmp_path / "bomb.yaml.xz", 256)
    assert bomb.stat().st_size < 100_000
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded, match=r"bomb\.yaml\.xz: the cassette decompresses to more than 1 MiB"):
            read_xz(bomb, 1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20  # lzma.decompress would hold all 256 MiB


def test_read_xz_reads_what_fits_like_lzma_decompress(tmp_path: Path) -> None:
    path = tmp_path / "two.xz"
    path.write_bytes(lzma.compress(b"first ") + lzma.compress(b"second"))  # concatenated streams
    assert read_xz(path, 12) == lzma.decompress(path.read_bytes()) == b"first second"
    with pytest.raises(LimitExceeded):
        read_xz(path, 11)
    path.write_bytes(lzma.compress(b"cut short")[:-8])
    with pytest.raises(lzma.LZMAError):
        read_xz(path, 100)


class EndlessChunks(BaseHTTPRequestHandler):
    """Answers with a chunked body and no content-length: 1 MiB chunks until the client stops reading."""

    protocol_version = "HTTP/1.1"
    sent = 0

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        chunk = b"x" * (1 << 20)
        try:
            for _ in range(1000):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                type(self).sent += 1
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client stopped reading
            pass

    def log_message(self, *args: Any) -> None:
        pass


def test_a_streamed_response_stops_being_read_at_the_limit(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EndlessChunks)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        limits = Limits(max_response_bytes=3 << 20)
        recording = EpisodeRecording(tmp_path / "c.yaml.xz", "all", environ={}, limits=limits)
        with recording.http_client(timeout=30) as http, pytest.raises(LimitExceeded, match="larger than 3 MiB"):
            http.get(f"http://127.0.0.1:{server.server_address[1]}/endless")
    finally:
        server.shutdown()
        server.server_close()
    assert len(recording.cassette) == 0  # nothing recorded
    assert EndlessChunks.sent < 100  # of 1000 MiB offered, the client read a few


def _serve_gzip(body: bytes) -> ThreadingHTTPServer:
    """A loopback server answering every GET with `body`, gzip-compressed."""
    compressed = gzip.compress(body, compresslevel=9, mtime=0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-encoding", "gzip")
            self.send_header("content-length", str(len(compressed)))
            self.end_headers()
            self.wfile.write(compressed)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_gzip_bomb_stops_being_decompressed_at_the_limit(tmp_path: Path) -> None:
    server = _serve_gzip(b"0" * (64 << 20))  # 64 MiB in 64 KB
    try:
        recording = EpisodeRecording(tmp_path / "c.yaml.xz", "all", environ={},
                                     limits=Limits(max_response_bytes=1 << 20))
        tracemalloc.start()
        try:
            with recording.http_client(timeout=30) as http, pytest.raises(
                    LimitExceeded, match=r"decompresses \(gzip\) to more than 1 MiB"):
                http.get(f"http://127.0.0.1:{server.server_address[1]}/bomb")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        server.shutdown()
        server.server_close()
    assert peak < 8 << 20 and len(recording.cassette) == 0


def test_a_gzip_response_is_read_and_recorded_plain(tmp_path: Path) -> None:
    server = _serve_gzip(json.dumps({"answer": 42}).encode())
    try:
        recording = EpisodeRecording(tmp_path / "c.yaml.xz", "all", environ={})
        with recording.http_client(timeout=30) as http:
            assert http.get(f"http://127.0.0.1:{server.server_address[1]}/x").json() == {"answer": 42}
    finally:
        server.shutdown()
        server.server_close()
    ((_, response),) = recording.cassette.data
    assert response["body"]["string"] == b'{"answer": 42}'
    assert "content-encoding" not in response["headers"] and response["headers"]["content-length"] == ["14"]


def test_truncated_says_how_much_was_left_out() -> None:
    assert truncated("short", 10) == "short"
    assert truncated("x" * 12_345, 10) == ("x" * 10 + "… [truncated: 12,335 more characters not kept; "
                                           "--max-message-chars]")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-limits-0123456789")
    with ScriptedServer() as running:
        yield running


def _arguments(server: ScriptedServer, *extra: str) -> tuple[str, ...]:
    return ("--agent", "reference", "--agent", "openai:test-model", "--model-base-url", server.url + "/v1",
            "--llm-retry-delay", "0", "-p", "no:randomly", *extra)


def _report_bytes(pytester: pytest.Pytester) -> int:
    return sum(path.stat().st_size for path in (pytester.path / "toolsandbox-report").rglob("*") if path.is_file())


@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_an_xz_bomb_cassette_errors_its_item_and_the_run_goes_on(pytester: pytest.Pytester, server: ScriptedServer,
                                                                 concurrency: str) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    xz_bomb(pytester.path / CASSETTE, 96)  # over the 64 MiB default
    result = run(pytester, *_arguments(server, "--ts-record-mode", "none", "--concurrency", concurrency))
    result.assert_outcomes(passed=1, errors=1)
    output = result.stdout.str()
    assert f"{CASSETTE}: the cassette decompresses to more than 64 MiB; it was not loaded" in output
    assert "Traceback" not in output
    records = records_by_id(summary(pytester))
    assert records[REFERENCE_ITEM]["outcome"] == "passed" and records[MODEL_ITEM]["outcome"] == "error"
    assert "--max-cassette-bytes" in records[MODEL_ITEM]["error"]
    assert server.received == []  # nothing was re-recorded over it
    assert _report_bytes(pytester) < 200_000


def test_an_oversized_reply_errors_its_item_without_being_kept(pytester: pytest.Pytester,
                                                               server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, openai_text("y" * (9 << 20)))  # over the 8 MiB default
    result = run(pytester, *_arguments(server))
    result.assert_outcomes(passed=1, errors=1)
    output = result.stdout.str()
    assert "the response is larger than 8 MiB" in output and "--max-response-bytes" in output
    assert "(not retried)" in output and len(server.received) == 1
    records = records_by_id(summary(pytester))
    assert records[REFERENCE_ITEM]["outcome"] == "passed" and records[MODEL_ITEM]["outcome"] == "error"
    assert not (pytester.path / CASSETTE).exists()
    assert _report_bytes(pytester) < 200_000


def test_a_lower_response_limit_is_an_option(pytester: pytest.Pytester, server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, openai_text("y" * 5000))
    result = run(pytester, *_arguments(server, "--max-response-bytes", "4K"))
    result.assert_outcomes(passed=1, errors=1)
    assert "the response is larger than 4 KiB" in result.stdout.str()
    assert summary(pytester)["run"]["options"]["limits"]["max_response_bytes"] == 4096


def test_a_long_reply_is_scored_whole_but_kept_cut_in_the_report(pytester: pytest.Pytester,
                                                                 server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, openai_calls(("call_1", "set_wifi_status", {"on": False})),
                openai_text("Wifi is off now. " + "z" * 500_000))
    run(pytester, *_arguments(server, "--max-message-chars", "1000")).assert_outcomes(passed=2)
    record = records_by_id(summary(pytester))[MODEL_ITEM]
    assert record["score"] == 1.0
    trajectory = (pytester.path / "toolsandbox-report" / record["trajectory"]).read_text(encoding="utf-8")
    assert "… [truncated: 499,017 more characters not kept; --max-message-chars]" in trajectory
    page = (pytester.path / "toolsandbox-report" / record["page"]).read_text(encoding="utf-8")
    assert "[truncated: 499,017 more characters" in page and "z" * 1001 not in page
    assert _report_bytes(pytester) < 200_000


@pytest.mark.parametrize(("value", "message"), [("0", "is not a size"), ("8X", "is not a size"),
                                                ("-1", "is not a size")])
def test_bad_sizes_are_usage_errors(pytester: pytest.Pytester, value: str, message: str) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    result = run(pytester, "--max-cassette-bytes", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--max-cassette-bytes / toolsandbox_max_cassette_bytes: {value!r} {message}" in result.stderr.str()
