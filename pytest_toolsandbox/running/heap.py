"""The cyclic garbage collector over a scenario run: the run's long-lived heap is frozen.

By the end of collection the process holds the scenarios, the items and the SDKs, and the first
scored item adds the scoring, report and data stacks (scipy, nltk, polars, matplotlib); all of it lives
to the end of the run. CPython's full collections walk every tracked object, and a run triggers one
every ~100 items: over a whole suite that was ~1.9 ms of CPU per item, more than writing the item's
report. `gc.freeze` (made for this) moves every object alive into a generation no collection visits, so
a collection costs what the items allocated since; it is done once scenarios are collected and again
once the first item has been reported. Cycles that were already garbage then are freed at the thaw.

At interpreter exit the heap is frozen once more: CPython's finalization runs full collections over
every object left (0.7 s of CPU with the SDKs, scipy, nltk and matplotlib loaded, against 0.05 s
frozen); objects are still released as the modules are torn down, and what is left in reference
cycles at exit goes unfinalized, which Python never promised to do at exit anyway.
"""

from __future__ import annotations

import atexit
import gc

import pytest

_FROZEN = pytest.StashKey[bool]()
_SETTLED = pytest.StashKey[bool]()
_THRESHOLDS = pytest.StashKey[tuple[int, int, int]]()

FULL_COLLECTION_EVERY = 100
"""Collections of the middle generation between two full ones while the heap is frozen (CPython's
default is 10). A full collection only runs when the objects that survived since the last one add up
to a quarter of those it kept; with the long-lived heap frozen that brake is gone, and at the default
a concurrent run did a full collection every ~2 s (0.1-0.2 s each, every thread stopped). The
episodes' own garbage dies young and is still freed by the younger generations' collections."""

_exit_freeze_registered = False


def freeze_heap(config: pytest.Config) -> None:
    """Exempt every object alive now from the cyclic garbage collector until the session ends. Not
    done when someone else froze objects (their freeze is theirs to undo) nor twice."""
    if config.stash.get(_FROZEN, False) or gc.get_freeze_count():
        return
    gc.freeze()
    config.stash[_FROZEN] = True
    young, middle, full = config.stash[_THRESHOLDS] = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_COLLECTION_EVERY))
    _freeze_at_exit()


def freeze_settled_heap(config: pytest.Config) -> None:
    """Once per session, when the first item has been reported: freeze what it (or the idle warm-ups of
    a concurrent run) imported since collection, scipy, nltk and matplotlib among them."""
    if config.stash.get(_FROZEN, False) and not config.stash.get(_SETTLED, False):
        config.stash[_SETTLED] = True
        gc.freeze()


def thaw_heap(config: pytest.Config) -> None:
    """Undo `freeze_heap` as the session's last act: registered as a cleanup when the plugin is
    configured, so it runs after pytest's own exit-time collections (which then skip the frozen
    heap too), and in-process runs (pytester) leave the caller's collector as they found it."""
    if config.stash.get(_FROZEN, False):
        gc.unfreeze()
        gc.set_threshold(*config.stash[_THRESHOLDS])
        config.stash[_FROZEN] = config.stash[_SETTLED] = False


def _freeze_at_exit() -> None:
    """Freeze the heap when the interpreter exits (registered once per process)."""
    global _exit_freeze_registered
    if not _exit_freeze_registered:
        _exit_freeze_registered = True
        atexit.register(gc.freeze)
