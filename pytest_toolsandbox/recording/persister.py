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

SUFFIX = ".yaml.xz"
_PRESET = 6 | lzma.PRESET_EXTREME
"""Preset 9's 64 MiB dictionary compressed the committed cassettes to exactly the same total size as
preset 6's 8 MiB one but took 40 times longer (43 ms against 1 ms for a 7 KB cassette)."""
_LARGEST_DICTIONARY = 8 << 20


def _filters(size: int) -> list[dict[str, int]]:
    """LZMA2 at `_PRESET` with a dictionary just large enough for `size` bytes: a larger one finds no
    more repeats in a cassette it already covers (the committed ones compress to the same total
    size) but costs its setup, about a third of a small cassette's compression time."""
    dictionary = min(_LARGEST_DICTIONARY, max(1 << 16, 1 << max(size - 1, 1).bit_length()))
    return [{"id": lzma.FILTER_LZMA2, "preset": _PRESET, "dict_size": dictionary}]


class CompressedYamlPersister:
    """A vcrpy persister (register with `VCR.register_persister`) for `.yaml.xz` cassettes."""

    @classmethod
    def load_cassette(cls, cassette_path: str | Path, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteDecodeError, CassetteNotFoundError
        from vcr.serialize import deserialize

        path = Path(cassette_path)
        if not path.is_file():
            raise CassetteNotFoundError()
        try:
            data = lzma.decompress(path.read_bytes()).decode("utf-8")
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
        partial.write_bytes(data)
        partial.replace(path)
