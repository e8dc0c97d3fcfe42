"""The live progress line of a run, and when and how it reaches the terminal.

An API-bound run spends minutes with nothing on screen but a line of dots; the line tells how far it
is, what it costs and when it will end:

    toolsandbox: 57/200 done · 3 failed · 1 error · 8 running · 412 model calls · 1.2M tokens · $0.84 · ETA 2m10s

`Progress` counts finished items from their records (the plain data the plugin attaches to test
reports, so it works the same on the xdist controller) and formats the line. `Emitter` decides when
to write it: on a terminal as a status line under pytest's current line, redrawn with new figures
at most every `interval` seconds; elsewhere (CI logs) one plain line every few items. Both take the
clock as a parameter so the formatting and the throttling are deterministic under test. Nothing
here imports pytest: the plugin hands over its terminal writer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pytest_toolsandbox.report.results.usage import ROLES, count, record_cost, record_tokens

Clock = Callable[[], float]
SEPARATOR = " · "
ETA_AFTER = 3
"""Items that must have finished before an ETA is shown: one item's time says little about a rate."""


@dataclass(frozen=True)
class _Item:
    """What the line needs from one finished item's record."""

    outcome: str
    calls: int = 0
    tokens: int | None = None
    spend: float | None = None
    replayed: bool = False

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> _Item:
        tokens = record.get("tokens")
        roles = [tokens[role] for role in ROLES if isinstance(tokens.get(role), Mapping)] \
            if isinstance(tokens, Mapping) else []
        calls = sum(count(role_tokens, "requests") for role_tokens in roles)
        return cls(str(record.get("outcome")), calls, record_tokens(dict(record)), record_cost(dict(record)),
                   record.get("replayed") is True)


class Progress:
    """Counts of a run so far and the one-line text that shows them.

    `running` is the hook point for a scheduler that knows how many episodes play right now: set it
    to a no-argument callable returning that number (None while it does not know). Otherwise the
    line shows what is certain:
    one item while items remain when at most one runs at a time (`slots == 1`), else "up to N"
    with N = `slots` (xdist workers × episodes per worker) bounded by the items that remain.
    """

    def __init__(self, clock: Clock = time.monotonic, slots: int = 1) -> None:
        self.clock = clock
        self.slots = slots
        self.expected = 0
        self.running: Callable[[], int | None] | None = None
        self.started: float | None = None
        self._items: dict[str, _Item] = {}

    def begin(self) -> None:
        """The first item started: ETA and elapsed time count from here, not from collection."""
        if self.started is None:
            self.started = self.clock()

    def add(self, nodeid: str, record: Mapping[str, Any]) -> None:
        """An item finished with this record (a later record of the same id replaces it, e.g. a rerun)."""
        self.begin()
        self._items[nodeid] = _Item.of(record)

    def amend(self, nodeid: str, outcome: str) -> None:
        """A finished item changed its outcome (its teardown failed: an error now), or never had a
        record (its xdist worker crashed)."""
        self.begin()
        item = self._items.get(nodeid)
        self._items[nodeid] = _Item(outcome) if item is None else _Item(outcome, item.calls, item.tokens,
                                                                         item.spend, item.replayed)

    @property
    def done(self) -> int:
        return len(self._items)

    def line(self, final: bool = False) -> str:
        """The progress line; `final` replaces the running count and ETA with the time taken."""
        items = list(self._items.values())
        total = max(self.expected, len(items))
        remaining = total - len(items)
        outcomes = [item.outcome for item in items]
        parts = [f"{len(items)}/{total} done", f"{outcomes.count('failed')} failed",
                 _plural(outcomes.count("error"), "error")]
        if outcomes.count("skipped"):
            parts.append(f"{outcomes.count('skipped')} skipped")
        if remaining and not final:
            parts.append(self._running(remaining))
        parts += _usage(items)
        elapsed = self.clock() - self.started if self.started is not None else 0.0
        if final:
            parts.append(f"took {duration(elapsed)}")
        elif remaining and len(items) >= ETA_AFTER:
            parts.append(f"ETA {duration(elapsed / len(items) * remaining)}")
        return "toolsandbox: " + SEPARATOR.join(parts)

    def _running(self, remaining: int) -> str:
        known = self.running() if self.running is not None else None
        if known is not None:
            return f"{max(known, 0)} running"
        if self.slots <= 1:
            return "1 running"
        return f"up to {min(self.slots, remaining)} running"


def _usage(items: list[_Item]) -> list[str]:
    """Model calls, tokens and spend; nothing when no item used a model (offline runs)."""
    used = [item for item in items if item.calls or item.tokens]
    if not used:
        return []
    calls = sum(item.calls for item in used)
    parts = [_plural(calls, "model call"), f"{compact(sum(item.tokens or 0 for item in used))} tokens"]
    priced = [item.spend for item in used if item.spend is not None]
    unpriced = len(used) - len(priced)
    if priced:
        parts.append(money(sum(priced)) + (f" + {unpriced} unpriced" if unpriced else ""))
    replayed = sum(item.replayed for item in used)
    if replayed:
        parts.append(f"{replayed} replayed")
    return parts


def _plural(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def compact(number: int) -> str:
    """412, 9.9K, 1.2M, 3.0B: three significant figures are all a glance at a progress line needs."""
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(number) >= size * 0.99995:  # 999,960 reads 1.0M, not 1000.0K
            return f"{number / size:.1f}{suffix}"
    return str(number)


def money(dollars: float) -> str:
    """$0.84; amounts under a cent as `<$0.01` rather than a misleading $0.00."""
    return "<$0.01" if 0 < dollars < 0.005 else f"${dollars:.2f}"


def duration(seconds: float) -> str:
    """45s, 2m10s, 1h05m (whole seconds, rounded up: an ETA never promises too early)."""
    whole = math.ceil(max(seconds, 0.0))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


# ---------------------------------------------------------------------------------------------
# When and where the line is written.


class Screen(Protocol):
    """The part of pytest's TerminalWriter the status line uses."""

    @property
    def fullwidth(self) -> int: ...

    @property
    def width_of_current_line(self) -> int: ...

    def write_raw(self, msg: str, *, flush: bool = False) -> None: ...


CLEAR_TO_END = "\x1b[K"
UP = "\x1b[A"


def plain_every(expected: int) -> int:
    """Items between two plain lines: about every 10 % of the run, at least every 50 items."""
    return max(1, min(50, math.ceil(expected / 10)))


class Emitter:
    """Writes the progress line: a status line on a terminal, periodic plain lines otherwise.

    On a terminal the status sits on the row *under* pytest's current line (the dots, or the `-v`
    line of the running test), and the cursor goes back to where pytest left it, so pytest's own
    output and colours are never touched. The plugin calls `hide()` just before pytest writes (the
    status row is cleared, so a newline from pytest lands on an empty row) and `show()` right after.
    `write_line(text, last)` writes a plain line; `last` is the final one.
    `show()` takes new figures at most every `interval` seconds; in between it redraws the same text,
    because the status must not vanish while a long episode runs. When pytest's line fills the
    terminal width (it would wrap and the cursor arithmetic would be wrong) the status waits.
    """

    def __init__(self, progress: Progress, write_line: Callable[[str, bool], None], screen: Screen | None,
                 interval: float = 0.5) -> None:
        self.progress = progress
        self.write_line = write_line
        self.screen = screen
        self.interval = interval
        self.text = ""
        self.drawn_at: float | None = None
        self.shown = False
        self.finished = False

    def show(self) -> None:
        """After pytest wrote: draw the status line (terminal only)."""
        screen = self.screen
        if screen is None or self.finished or self.shown:
            return
        column, width = screen.width_of_current_line, screen.fullwidth
        if column >= width - 1:
            return
        now = self.progress.clock()
        if self.drawn_at is None or now - self.drawn_at >= self.interval:
            self.text, self.drawn_at = self.progress.line(), now
        screen.write_raw("\r\n" + self.text[:width - 1] + CLEAR_TO_END + UP + _back_to(column), flush=True)
        self.shown = True

    def hide(self) -> None:
        """Before pytest writes: clear the status row and put the cursor back on pytest's line."""
        if self.screen is None or not self.shown:
            return
        self.screen.write_raw("\r\n" + CLEAR_TO_END + UP + _back_to(self.screen.width_of_current_line), flush=True)
        self.shown = False

    def item_finished(self) -> None:
        """Not on a terminal: one plain line every `plain_every` items (the last one is `end()`'s)."""
        done, expected = self.progress.done, self.progress.expected
        if self.screen is None and not self.finished and done < expected and done % plain_every(expected) == 0:
            self.write_line(self.progress.line(), False)

    def end(self) -> None:
        """The run is over: remove the status line and leave one final plain line."""
        if self.finished:
            return
        self.hide()
        self.finished = True
        if self.progress.started is not None:
            self.write_line(self.progress.line(final=True), True)


def _back_to(column: int) -> str:
    """Cursor from the start of a row to `column` (CSI 0 C would move one column on some terminals)."""
    return "\r" + (f"\x1b[{column}C" if column else "")
