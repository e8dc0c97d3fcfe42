"""`--ts-shard i/N`: the items of one machine of an N-machine CI matrix.

A shard holds whole scenario files, each with all its items: every variant, trial and agent, so each
shard's report already has complete tasks (pass^k and the noise-aware gate need all of a task's
trials). The scenario files a run collects are ordered by the sha256 of their paths and dealt out in
turn: shard sizes differ by at most one scenario, domains mix, and every shard decides alone from the
same collection, with no durations file to keep up to date. (Hashing each path straight to a shard
would keep a scenario's shard when other files are added, but leave the sizes to chance.)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

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


def _digest(scenario_path: str) -> str:
    return hashlib.sha256(scenario_path.replace("\\", "/").encode("utf-8", "surrogatepass")).hexdigest()


def shards(scenario_paths: Iterable[str], count: int) -> dict[str, int]:
    """Each scenario file's 1-based shard (paths relative to the rootdir, as in node ids)."""
    ordered = sorted(set(scenario_paths), key=lambda path: (_digest(path), path))
    return {path: position % count + 1 for position, path in enumerate(ordered)}


def scenario_path(nodeid: str) -> str:
    return nodeid.partition("::")[0]
