"""The progress line's text (with a fake clock) and how it reaches a terminal (with a small emulated
terminal that interprets the control sequences the emitter writes)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_toolsandbox.report.text.progress import Emitter, Progress, compact, duration, money, plain_every


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def record(outcome: str = "passed", requests: int = 0, input_tokens: int = 0, output_tokens: int = 0,
           spend: float | None = None, replayed: bool | None = None) -> dict[str, Any]:
    agent = {"input_tokens": input_tokens, "output_tokens": output_tokens, "requests": requests} if requests else None
    return {"outcome": outcome, "tokens": {"agent": agent, "user": None},
            "spend_usd": {"agent": spend, "user": None, "total": spend}, "replayed": replayed}


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_offline_line_counts_outcomes_and_leaves_out_model_figures(clock: Clock) -> None:
    progress = Progress(clock)
    progress.expected = 10
    for index, outcome in enumerate(["passed", "failed", "error", "failed", "skipped"]):
        progress.add(f"id{index}", record(outcome))
    assert progress.line() == ("toolsandbox: 5/10 done · 2 failed · 1 error · 1 skipped · 1 running · ETA 0s")
    progress.amend("id0", "error")  # its teardown failed
    assert "· 2 errors ·" in progress.line()


def test_eta_follows_the_observed_rate_once_a_few_items_finished(clock: Clock) -> None:
    progress = Progress(clock)
    progress.expected = 10
    progress.begin()
    clock.now += 4
    progress.add("a", record())
    progress.add("b", record())
    assert "ETA" not in progress.line()
    clock.now += 2
    progress.add("c", record())
    assert progress.line().endswith("· 1 running · ETA 14s")  # 6 s for 3 items, 7 items left
    clock.now += 124
    assert progress.line().endswith("ETA 5m04s")  # 130 s for 3 items, 7 left: 303.3 s, rounded up


def test_model_calls_tokens_and_spend_with_suffixes(clock: Clock) -> None:
    progress = Progress(clock)
    progress.expected = 200
    progress.add("a", record("passed", 300, 900_000, 150_000, 0.5))
    progress.add("b", record("failed", 112, 100_000, 50_000, 0.34))
    progress.add("c", record("passed"))  # an in-process agent in the same run
    line = progress.line()
    assert "· 412 model calls · 1.2M tokens · $0.84 ·" in line
    progress.add("d", record("passed", 1, 10, 2, None))  # a model without a price
    progress.add("e", record("passed", 3, 10, 2, 0.0, replayed=True))
    assert "· 416 model calls · 1.2M tokens · $0.84 + 1 unpriced · 1 replayed ·" in progress.line()


def test_running_count_from_a_scheduler_or_an_honest_bound(clock: Clock) -> None:
    progress = Progress(clock, slots=16)
    progress.expected = 20
    for index in range(17):
        progress.add(str(index), record())
    assert "· up to 3 running ·" in progress.line()  # 16 slots, 3 items left
    progress.running = lambda: None  # a scheduler that has not started yet
    assert "· up to 3 running ·" in progress.line()
    progress.running = lambda: 2
    assert "· 2 running ·" in progress.line()
    for index in range(17, 20):
        progress.add(str(index), record())
    assert "running" not in progress.line() and "ETA" not in progress.line()


def test_final_line_says_how_long_the_run_took(clock: Clock) -> None:
    progress = Progress(clock)
    progress.expected = 3
    progress.begin()
    for name in "abc":
        clock.now += 25
        progress.add(name, record())
    assert progress.line(final=True) == "toolsandbox: 3/3 done · 0 failed · 0 errors · took 1m15s"


@pytest.mark.parametrize(("number", "text"), [(0, "0"), (999, "999"), (1_000, "1.0K"), (9_949, "9.9K"),
                                              (999_960, "1.0M"), (1_234_567, "1.2M"), (3_000_000_000, "3.0B")])
def test_compact_numbers(number: int, text: str) -> None:
    assert compact(number) == text


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (0.2, "1s"), (59, "59s"), (130, "2m10s"),
                                               (3599.5, "1h00m"), (3900, "1h05m")])
def test_durations(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_money_never_shows_a_real_spend_as_zero() -> None:
    assert (money(0.0), money(0.003), money(0.84), money(12.345)) == ("$0.00", "<$0.01", "$0.84", "$12.35")


# --- emission ---------------------------------------------------------------------------------


class Terminal:
    """Enough of a VT100 to check what the user sees: printable text, CR, LF, CSI K, CSI A, CSI n C.
    It also plays pytest's TerminalWriter (`write` tracks the current line; `write_raw` does not)."""

    def __init__(self, width: int = 80) -> None:
        self.fullwidth = width
        self.rows: list[list[str]] = [[]]
        self.row = self.col = 0
        self.current = ""
        self.raw_writes = 0

    @property
    def width_of_current_line(self) -> int:
        return len(self.current)

    def write(self, text: str) -> None:
        self.current = text.rsplit("\n", 1)[-1] if "\n" in text else self.current + text
        self._interpret(text)

    def write_raw(self, msg: str, *, flush: bool = False) -> None:
        self.raw_writes += 1
        self._interpret(msg)

    def _interpret(self, text: str) -> None:
        position = 0
        while position < len(text):
            char = text[position]
            if char == "\x1b":
                end = position + 2
                while not text[end].isalpha():
                    end += 1
                argument, command = text[position + 2:end], text[end]
                if command == "K":
                    del self.rows[self.row][self.col:]
                elif command == "A":
                    self.row -= 1
                elif command == "C":
                    self.col += int(argument or 1)
                position = end + 1
                continue
            if char == "\r":
                self.col = 0
            elif char == "\n":
                self.row, self.col = self.row + 1, 0
                if self.row == len(self.rows):
                    self.rows.append([])
            else:
                line = self.rows[self.row]
                line.extend(" " * (self.col - len(line)))
                line[self.col:self.col + 1] = [char]
                self.col += 1
            position += 1

    def screen(self) -> list[str]:
        return ["".join(row).rstrip() for row in self.rows]


def test_terminal_status_sits_under_pytests_line_and_is_cleared_before_pytest_writes(clock: Clock) -> None:
    progress, terminal = Progress(clock), Terminal()
    progress.expected = 4
    emitter = Emitter(progress, lambda text, last: terminal.write(text + "\n"), terminal)
    progress.begin()
    terminal.write("scenarios/a.yaml ")
    emitter.show()
    assert terminal.screen() == ["scenarios/a.yaml", "toolsandbox: 0/4 done · 0 failed · 0 errors · 1 running"]
    assert (terminal.row, terminal.col) == (0, len("scenarios/a.yaml "))  # the cursor is back where pytest left it
    emitter.hide()
    terminal.write(".")  # pytest's dot lands on its own line, in colour if it likes: the line is never rewritten
    progress.add("a", record())
    emitter.show()
    assert terminal.screen()[0] == "scenarios/a.yaml ."
    emitter.hide()
    terminal.write("\nscenarios/b.yaml ")  # a newline from pytest lands on the cleared row
    assert terminal.screen() == ["scenarios/a.yaml .", "scenarios/b.yaml"]


def test_redraws_take_new_figures_at_most_every_interval(clock: Clock) -> None:
    progress, terminal = Progress(clock), Terminal()
    progress.expected = 10
    emitter = Emitter(progress, lambda text, last: None, terminal, interval=0.5)
    progress.begin()
    terminal.write("x ")
    emitter.show()
    for name in "abc":  # three items finish within 0.3 s: the status keeps its figures
        clock.now += 0.1
        emitter.hide()
        progress.add(name, record())
        emitter.show()
        assert terminal.screen()[1].startswith("toolsandbox: 0/10 done")
    clock.now += 0.25
    emitter.hide()
    emitter.show()
    assert terminal.screen()[1].startswith("toolsandbox: 3/10 done")
    assert terminal.raw_writes == 9  # one draw per show, one clear per hide; never more


def test_no_status_when_pytests_line_fills_the_width_and_a_long_status_is_cut(clock: Clock) -> None:
    progress, terminal = Progress(clock), Terminal(width=30)
    progress.expected = 5
    emitter = Emitter(progress, lambda text, last: None, terminal)
    terminal.write("." * 29)
    emitter.show()
    assert terminal.screen() == ["." * 29] and terminal.raw_writes == 0
    terminal.write("\n..")
    emitter.show()
    assert terminal.screen()[-1] == "toolsandbox: 0/5 done · 0 fai"


def test_final_line_replaces_the_status(clock: Clock) -> None:
    progress, terminal = Progress(clock), Terminal()
    progress.expected = 1
    lines: list[tuple[str, bool]] = []
    emitter = Emitter(progress, lambda text, last: (lines.append((text, last)), terminal.write("\n" + text)), terminal)
    progress.begin()
    terminal.write("a.yaml ")
    emitter.show()
    emitter.hide()
    terminal.write(".")
    progress.add("a", record())
    emitter.end()
    emitter.show()  # pytest's summary follows: nothing more is drawn
    assert terminal.screen() == ["a.yaml .", "toolsandbox: 1/1 done · 0 failed · 0 errors · took 0s"]
    assert lines == [("toolsandbox: 1/1 done · 0 failed · 0 errors · took 0s", True)]


def test_without_a_terminal_a_plain_line_every_tenth_of_the_run(clock: Clock) -> None:
    progress = Progress(clock)
    progress.expected = 20
    lines: list[tuple[str, bool]] = []
    emitter = Emitter(progress, lambda text, last: lines.append((text, last)), None)
    for index in range(20):
        progress.add(str(index), record("failed" if index == 4 else "passed"))
        emitter.item_finished()
        emitter.show()
        emitter.hide()
    emitter.end()
    assert [text.split(" · ")[0] for text, last in lines] == [f"toolsandbox: {n}/20 done" for n in range(2, 21, 2)]
    assert lines[-1] == ("toolsandbox: 20/20 done · 1 failed · 0 errors · took 0s", True)
    assert not any(last for text, last in lines[:-1])


@pytest.mark.parametrize(("expected", "every"), [(1, 1), (20, 2), (200, 20), (1200, 50)])
def test_plain_lines_every_tenth_at_most_fifty_items(expected: int, every: int) -> None:
    assert plain_every(expected) == every
