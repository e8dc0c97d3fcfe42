"""Under pytest-xdist with concurrent episodes: keep every worker's queue deep enough to fill its slots.

A worker plays ahead only the items xdist has already sent it (ahead.py reads its queue). xdist's
default `load` scheduling sends each worker a quarter of its share at first, then tops a worker up
only when its queue falls below a quarter of its remaining share, and not at all while it still holds
two items and the last one took over 0.1 s, which every model-played episode does. With 200 items on
two workers at `--concurrency 32`, the workers held at most 25 items and then as few as two: fewer
episodes in flight than the slots they had, and a benchmark phase five times its ideal.

`ConcurrentLoadScheduling` is xdist's `load` scheduling (same order, same handling of a crashed
worker) with one change: a worker is topped up, after every finished item, to the items it can play
ahead (`depth`), but never beyond an even share of those still unsent, so the workers still finish
together. It is used only for `--dist load` (xdist's default under `-n`) when episodes play
concurrently; other `--dist` modes keep their own scheduling.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScheduling

from pytest_toolsandbox.compat import pending_on, send_to, worker_count


class ConcurrentLoadScheduling(LoadScheduling):
    """xdist's `load` scheduling, keeping each worker `depth` items deep while items remain."""

    def __init__(self, config: Any, log: Any, depth: int) -> None:
        super().__init__(config, log)
        self.depth = depth

    def schedule(self) -> None:
        first = self.collection is None
        super().schedule()
        if first and self.collection is not None:
            for node in self.nodes:
                self._top_up(node)

    def check_schedule(self, node: Any, duration: float = 0) -> None:
        if node.shutting_down:
            return
        if not self.pending:
            node.shutdown()  # it finishes what it holds, then stops
            return
        self._top_up(node)

    def _top_up(self, node: Any) -> None:
        if not self.pending or node.shutting_down:
            return
        share = -(-len(self.pending) // worker_count(self))  # ceiling: the last items go somewhere
        wanted = min(self.depth - pending_on(self, node), share)
        if wanted > 0:
            send_to(self, node, wanted)
