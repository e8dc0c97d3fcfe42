"""Size limits on what a run reads and keeps, so one hostile or broken input cannot exhaust memory or disk.

A model reply, a tool API's answer and a cassette are data from outside: a server that streams 50 MB
of text, or a 45 KB cassette that decompresses to gigabytes (an "xz bomb"), once made one run use
several GB of memory and write GB of report. Each is now read with a cap (`--max-response-bytes`,
`--max-cassette-bytes`): past it, reading stops at once and that item alone errors, naming the limit
and the option that raises it. What the report keeps of one message's text is capped too
(`--max-message-chars`), with a marker saying how much was left out. The defaults are far above
anything a real episode produces (docs/plugin.md, Limits: the largest committed cassette; a reply of
`--max-tokens 1024` is a few KB).
"""

from __future__ import annotations

import lzma
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MIB = 1 << 20
DEFAULT_MAX_RESPONSE_BYTES = 8 * MIB
DEFAULT_MAX_CASSETTE_BYTES = 64 * MIB
DEFAULT_MAX_MESSAGE_CHARS = 100_000
_CHUNK = MIB


@dataclass(frozen=True)
class Limits:
    """The run's size limits (options `--max-response-bytes`, `--max-cassette-bytes`, `--max-message-chars`)."""

    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_cassette_bytes: int = DEFAULT_MAX_CASSETTE_BYTES
    max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS


class LimitExceeded(Exception):
    """Input larger than a limit allows; the message names the input, the limit and its option."""


class RequestTooLarge(Exception):
    """A live request estimated over `--max-request-tokens`: it was not sent (recording/ratelimit.py)."""


def size_text(count: int) -> str:
    """A byte count for people: `8 MiB`, `1.5 MiB`, `300 KiB`, `12 bytes`."""
    for unit, size in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} bytes"


def read_response(chunks: Iterable[bytes], limit: int, what: str) -> bytes:
    """The whole body from `chunks` (an HTTP response stream), refusing to hold more than `limit` bytes."""
    parts, total = [], 0
    for chunk in chunks:
        total += len(chunk)
        if total > limit:
            raise LimitExceeded(f"{what}: the response is larger than {size_text(limit)}; reading stopped there "
                                "(raise --max-response-bytes / toolsandbox_max_response_bytes if replies "
                                "are really that long)")
        parts.append(chunk)
    return b"".join(parts)


COMPRESSED_ENCODINGS = ("gzip", "x-gzip", "deflate")
"""The content encodings httpx2 asks for (without the optional brotli and zstandard packages)."""


def decompressed_body(body: bytes, encoding: str, limit: int, what: str) -> bytes:
    """A gzip or deflate `body` decompressed, stopping past `limit` bytes: the compressed body is within
    the limit, but a 1 MB gzip "bomb" expands to a GB (httpx would decode it whole, and so would vcrpy)."""
    wbits = zlib.MAX_WBITS | 16 if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
    try:
        output = zlib.decompressobj(wbits).decompress(body, limit + 1)
    except zlib.error:
        if encoding != "deflate":
            raise
        output = zlib.decompressobj(-zlib.MAX_WBITS).decompress(body, limit + 1)  # raw deflate, as servers send
    if len(output) > limit:
        raise LimitExceeded(f"{what}: the response decompresses ({encoding}) to more than {size_text(limit)}; "
                            "reading stopped there (raise --max-response-bytes / toolsandbox_max_response_bytes "
                            "if replies are really that long)")
    return output


def declared_too_large(content_length: str | None, limit: int) -> bool:
    """Whether a response's `content-length` header already says it is over `limit`."""
    return content_length is not None and content_length.strip().isdigit() and int(content_length) > limit


def read_xz(path: Path, limit: int) -> bytes:
    """The decompressed content of the xz file at `path`, decompressed as a stream that stops as soon as it
    passes `limit` bytes (`lzma.decompress` would expand a bomb whole first). Raises `LimitExceeded`, or
    `lzma.LZMAError` for data that is not xz, like `lzma.decompress`; concatenated streams are read in turn."""
    parts: list[bytes] = []
    total = 0
    decompressor = lzma.LZMADecompressor()
    with path.open("rb") as stream:
        data = stream.read(_CHUNK)
        while True:
            output = decompressor.decompress(data, max_length=limit - total + 1)
            total += len(output)
            if total > limit:
                raise LimitExceeded(f"{path}: the cassette decompresses to more than {size_text(limit)}; it was "
                                    "not loaded (re-record it, or raise --max-cassette-bytes / "
                                    "toolsandbox_max_cassette_bytes if episodes are really that long)")
            parts.append(output)
            if decompressor.eof:  # a stream ended: another may follow (as `xz` and `lzma.decompress` read them)
                data = decompressor.unused_data or stream.read(_CHUNK)
                if not data:
                    return b"".join(parts)
                decompressor = lzma.LZMADecompressor()
            elif decompressor.needs_input:
                data = stream.read(_CHUNK)
                if not data:
                    raise lzma.LZMAError("Compressed data ended before the end-of-stream marker was reached")
            else:  # output pending: the next call takes no new input
                data = b""


def truncated(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, with a marker saying how many were left out (unchanged when it fits).
    Secrets are scrubbed first: a key cut in two would no longer be recognised by the report writers."""
    if len(text) <= limit:
        return text
    from pytest_toolsandbox.recording.secrets import scrub_text

    text = scrub_text(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [truncated: {len(text) - limit:,} more characters not kept; --max-message-chars]"
