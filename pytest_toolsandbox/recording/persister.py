"""Compact cassettes: vcrpy's YAML, compressed with xz (LZMA) into one `.yaml.xz` file per episode.

Every request of an episode repeats the tool schemas and the whole conversation so far, so a plain YAML
cassette grows quadratically with the episode and a suite of recordings reaches tens of megabytes.
LZMA's large dictionary finds those repeats anywhere in the file (gzip's 32 KiB window misses most of
them): the committed local-model cassettes shrink five-fold (2.1 MB of YAML to 0.42 MB), long episodes
far more. The bytes are a pure function of the cassette's
content (xz has no timestamp), so re-saving an unchanged cassette leaves git with nothing to commit.
Inspect one with `xzcat PATH` (xz-utils ships with every common Linux and macOS).
"""

from __future__ import annotations

import lzma
import os
import secrets
from pathlib import Path
from typing import Any

from pytest_toolsandbox.basics.limits import DEFAULT_MAX_CASSETTE_BYTES, read_xz
from pytest_toolsandbox.recording.cassette_check import CassetteError, cassette_problem

SUFFIX = ".yaml.xz"
_PRESET = 3
"""Preset 3 (LZMA's fast match finder) compresses the committed local-model cassettes 6 times faster
than preset 6 with `PRESET_EXTREME` (0.32 ms against 1.96 ms per cassette) into 4.6 % more bytes
(592 KB against 566 KB for 263 cassettes, 6.5 MB of YAML). A concurrent recording saves every episode's
cassette on a runner thread, holding the interpreter lock that the other episodes need to send their next
request; for a run of 200 recorded episodes the faster preset is 0.4 s less CPU. Presets 7 to 9 only
enlarge the dictionary, which `_filters` sizes to the cassette anyway."""
_LARGEST_DICTIONARY = 8 << 20


def _filters(size: int) -> list[dict[str, int]]:
    """LZMA2 at `_PRESET` with a dictionary just large enough for `size` bytes: a larger one finds no
    more repeats in a cassette it already covers (the committed ones compress to the same total
    size) but costs its setup, about a third of a small cassette's compression time."""
    dictionary = min(_LARGEST_DICTIONARY, max(1 << 16, 1 << max(size - 1, 1).bit_length()))
    return [{"id": lzma.FILTER_LZMA2, "preset": _PRESET, "dict_size": dictionary}]


def _parsed(path: Path, text: str, serializer: Any) -> Any:
    """The YAML of a cassette as vcrpy's own `deserialize` returns it, after `cassette_problem` found
    nothing wrong (vcrpy would fail later, mid-replay, on a field of the wrong type)."""
    import yaml
    from vcr.request import Request
    from vcr.serializers import compat

    try:
        data = serializer.deserialize(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise CassetteError(f"cassette {path}: invalid YAML{where}: {what}") from None
    except (ValueError, RecursionError) as error:
        raise CassetteError(f"cassette {path}: not loadable YAML ({error})") from None
    problem = cassette_problem(data)
    if problem is not None:
        raise CassetteError(f"cassette {path}: {problem}; fix or delete the file to record it again")
    requests = [Request._from_dict(interaction["request"]) for interaction in data["interactions"]]
    responses = [compat.convert_to_bytes(interaction["response"]) for interaction in data["interactions"]]
    return (requests, responses, data["metadata"]) if data.get("metadata") else (requests, responses)


class CompressedYamlPersister:
    """A vcrpy persister (register with `VCR.register_persister`) for `.yaml.xz` cassettes."""

    max_bytes = DEFAULT_MAX_CASSETTE_BYTES
    """Largest decompressed cassette loaded: a larger one raises `limits.LimitExceeded` (an error of its
    item; not vcrpy's `CassetteDecodeError`, which vcrpy treats as an empty cassette and re-records)."""

    @classmethod
    def bounded(cls, max_bytes: int) -> type[CompressedYamlPersister]:
        return type(cls.__name__, (cls,), {"max_bytes": max_bytes})

    @classmethod
    def load_cassette(cls, cassette_path: str | Path, serializer: Any) -> Any:
        """The cassette's requests and responses (and metadata); `CassetteError` naming the file when
        it exists but cannot be replayed. Not vcrpy's `CassetteDecodeError`: vcrpy would take such a file
        for an empty cassette, report "no requests" and, where the mode allows, record over it."""
        from vcr.persisters.filesystem import CassetteNotFoundError

        path = Path(cassette_path)
        if not path.is_file():
            raise CassetteNotFoundError()
        try:
            data = read_xz(path, cls.max_bytes).decode("utf-8")
        except (lzma.LZMAError, UnicodeDecodeError) as error:
            raise CassetteError(f"cassette {path}: not an xz-compressed UTF-8 cassette ({error}); delete it "
                                "to record it again") from None
        except OSError as error:
            raise CassetteError(f"cassette {path}: cannot be read ({error.strerror or error})") from None
        if not data.strip():  # written empty on purpose: no recording yet
            raise CassetteNotFoundError()
        return _parsed(path, data, serializer)

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = serialize(cassette_dict, serializer).encode("utf-8")
        data = lzma.compress(text, filters=_filters(len(text)))
        # a name of its own: two runs (or xdist workers) sharing a cassette directory never write into or
        # rename each other's unfinished file
        partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
        try:
            partial.write_bytes(data)
            partial.replace(path)
        except BaseException:  # an interrupt mid-write (Ctrl-C) leaves the old file or none, never a stray one
            partial.unlink(missing_ok=True)
            raise
