"""`--ts-shard i/N`: the items of one machine of an N-machine CI matrix.

A scenario file goes to shard `sha256(path) mod N + 1`, with all its items: every variant, trial and
agent. So each shard's report already holds whole tasks (pass^k per task needs all its trials), a
scenario's shard never changes when other scenario files are added or removed, and every shard decides
alone, from the path only, with no durations file to keep up to date. The price is balance by chance:
shards differ in size by a few scenarios (docs/scale-out.md).
"""

from __future__ import annotations

import hashlib
import re

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


class ShardError(ValueError):
    """A --ts-shard value that is not `i/N` with 1 ≤ i ≤ N."""


def parse_shard(text: str) -> tuple[int, int]:
    """`"2/4"` → (2, 4)."""
    match = _SPEC.fullmatch(text)
    if match is None:
        raise ShardError(f"{text!r} is not i/N (e.g. 1/4 for the first of four shards)")
    index, count = int(match[1]), int(match[2])
    if not 1 <= index <= count:
        raise ShardError(f"{text!r}: the shard number must be between 1 and {count or 'N'}, and N at least 1")
    return index, count


def shard_of(scenario_path: str, count: int) -> int:
    """The 1-based shard of a scenario file (its path relative to the rootdir, as in node ids)."""
    digest = hashlib.sha256(scenario_path.replace("\\", "/").encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def in_shard(nodeid: str, shard: tuple[int, int]) -> bool:
    index, count = shard
    return shard_of(nodeid.partition("::")[0], count) == index
