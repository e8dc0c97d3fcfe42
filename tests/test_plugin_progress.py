"""The live progress line in real pytest runs (pytester output is not a terminal: plain lines)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.llm_server import CHAT, ScriptedServer, openai_calls, openai_text
from tests.test_plugin_support import SUITE, WIFI_OFF, run, write_suite
from tests.test_report_progress import Terminal

PROGRESS = re.compile(r"^toolsandbox: \d+/\d+ done.*$", re.MULTILINE)


def twenty_items(pytester: pytest.Pytester) -> None:
    """The four-file suite five times over: 10 pass, 10 fail (half and refuse)."""
    write_suite(pytester, {path.replace(".yaml", f"_{copy}.yaml"): text
                           for copy in range(5) for path, text in SUITE.items()})


def progress_lines(result: pytest.RunResult) -> list[str]:
    return PROGRESS.findall(result.stdout.str())


def test_plain_lines_every_two_items_with_the_counts_so_far(pytester: pytest.Pytester) -> None:
    twenty_items(pytester)
    result = run(pytester, "--progress", "on")
    result.assert_outcomes(passed=10, failed=10)
    lines = progress_lines(result)
    done = [int(re.match(r"toolsandbox: (\d+)/20 done", line).group(1)) for line in lines]
    assert done == [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
    # files run in order: messaging/wifi_status (pass), settings/half (fail), refuse (fail), wifi_off (pass)
    failed = [int(re.search(r" · (\d+) failed · ", line).group(1)) for line in lines]
    assert failed == [0, 0, 1, 3, 5, 7, 9, 10, 10, 10]
    assert all(" · 0 errors · 1 running" in line for line in lines[:-1])
    assert re.fullmatch(r"toolsandbox: 20/20 done · 10 failed · 0 errors · took \d+s", lines[-1])
    assert "model call" not in result.stdout.str()  # offline: no model figures
    assert re.search(r"^scenarios/\S+ [.F]+ +\[ *\d+%\]$", result.stdout.str(), re.MULTILINE)  # pytest's lines intact


@pytest.mark.parametrize("args", [("--progress", "off"), ("--progress", "on", "-q"), ("--progress", "on", "-qq"),
                                  ()])
def test_no_progress_when_off_quiet_or_a_small_offline_run(pytester: pytest.Pytester, args: tuple[str, ...]) -> None:
    twenty_items(pytester)
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert progress_lines(result) == []


def test_without_the_terminal_plugin_the_run_still_works(pytester: pytest.Pytester) -> None:
    twenty_items(pytester)
    result = run(pytester, "--progress", "on", "-p", "no:terminal")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.stdout.str().strip() == ""


def test_ini_key_and_bad_value(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    pytester.makeini("[pytest]\ntoolsandbox_progress = on\n")
    lines = progress_lines(run(pytester))  # one item, offline: only the ini key turns it on
    assert len(lines) == 1 and lines[0].startswith("toolsandbox: 1/1 done · 0 failed · 0 errors · took ")
    result = run(pytester, "--progress", "sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--progress / toolsandbox_progress: 'sometimes' is not allowed; "
                                 "use one of auto, on, off*"])


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ScriptedServer() as running:
        yield running


def test_a_model_run_shows_model_calls_and_tokens_by_default(pytester: pytest.Pytester, server: ScriptedServer) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    server.push(CHAT, openai_calls(("call_1", "set_wifi_status", {"on": False})), openai_text("Wifi is off now."))
    args = ("--agent", "openai:test-model", "--model-base-url", server.url + "/v1", "--llm-retry-delay", "0")
    recorded = run(pytester, *args)  # --progress auto: a model role turns it on
    recorded.assert_outcomes(passed=1)
    assert re.fullmatch(r"toolsandbox: 1/1 done · 0 failed · 0 errors · 2 model calls · 240 tokens · took \d+s",
                        progress_lines(recorded)[0])
    server.stop()
    replayed = run(pytester, *args, "--ts-record-mode", "none")
    replayed.assert_outcomes(passed=1)
    assert re.fullmatch(r"toolsandbox: 1/1 done · 0 failed · 0 errors · 2 model calls · 240 tokens · \$0\.00 · "
                        r"1 replayed · took \d+s", progress_lines(replayed)[0])


def test_auto_shows_progress_for_runs_of_more_than_fifty_items(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    result = run(pytester, "--trials", "13")  # 52 items, offline, --progress auto
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    done = [line.split(" · ")[0] for line in progress_lines(result)]
    assert done == [f"toolsandbox: {n}/52 done" for n in (6, 12, 18, 24, 30, 36, 42, 48, 52)]


def test_under_xdist_the_running_count_is_a_bound_and_lines_stay_apart_from_the_dots(
        pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    result = run(pytester, "-n", "2", "--progress", "on", "--trials", "2")
    result.assert_outcomes(passed=4, failed=4)
    lines = progress_lines(result)
    assert [line.split(" · ")[0] for line in lines] == [f"toolsandbox: {n}/8 done" for n in range(1, 9)]
    assert all(" · up to 2 running" in line for line in lines[:-2])  # 2 workers, at least 2 items left
    assert " · up to 1 running" in lines[-2]


def on_a_terminal(directory: Path, *args: str) -> str:
    """pytest's output when its stdout is a real terminal (a pseudo-terminal 100 columns wide)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 100, 0, 0))
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    for name in ("NO_COLOR", "PY_COLORS"):  # pytester sets PY_COLORS=0
        env.pop(name, None)
    process = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=directory,
                               stdin=subprocess.DEVNULL, stdout=child, stderr=child, env=env)
    os.close(child)
    output = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed (Linux)
            break
        if not chunk:
            break
        output += chunk
    process.wait(timeout=600)
    os.close(main)
    return output.decode("utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_on_a_terminal_the_status_line_is_drawn_under_pytests_line_and_leaves_a_clean_screen(
        pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    output = on_a_terminal(pytester.path, "--progress", "on", "--trials", "3")
    assert "\x1b[K\x1b[A\r" in output  # the status was drawn below and the cursor went back up
    terminal = Terminal(100)
    terminal.write(output)
    screen = terminal.screen()
    start = next(row for row, line in enumerate(screen) if line.startswith("scenarios/"))
    files = screen[start:start + 4]
    assert [line.split()[0] for line in files] == ["scenarios/messaging/wifi_status.yaml",
                                                   "scenarios/settings/half.yaml", "scenarios/settings/refuse.yaml",
                                                   "scenarios/settings/wifi_off.yaml"]
    assert all(re.fullmatch(r"\S+ [.F]{3} +\[ *\d+%\]", line) for line in files)  # pytest's lines, untouched
    assert re.fullmatch(r"toolsandbox: 12/12 done · 6 failed · 0 errors · took \d+s", screen[start + 4])
    assert screen[start + 5] == "" and screen[start + 6].startswith("=====")
