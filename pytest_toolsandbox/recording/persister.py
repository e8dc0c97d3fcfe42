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
from pathlib import Path
from typing import Any

from pytest_toolsandbox.limits import DEFAULT_MAX_CASSETTE_BYTES, read_xz

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
        from vcr.persisters.filesystem import CassetteDecodeError, CassetteNotFoundError
        from vcr.serialize import deserialize

        path = Path(cassette_path)
        if not path.is_file():
            raise CassetteNotFoundError()
        try:
            data = read_xz(path, cls.max_bytes).decode("utf-8")
        except (lzma.LZMAError, UnicodeDecodeError) as error:
            raise CassetteDecodeError(f"{path}: not an xz-compressed UTF-8 cassette ({error})") from error
        if not data.strip():
            raise CassetteNotFoundError()
        return deserialize(data, serializer)

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = serialize(cassette_dict, serializer).encode("utf-8")
        data = lzma.compress(text, filters=_filters(len(text)))
        partial = path.with_name(path.name + ".partial")
        try:
            partial.write_bytes(data)
            partial.replace(path)
        except BaseException:  # an interrupt mid-write (Ctrl-C) leaves the old file or none, never a stray one
            partial.unlink(missing_ok=True)
            raise
