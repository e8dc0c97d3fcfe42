"""Every command line of the README, run in a fresh clone as a user would type it.

A line runs as written (the cheap ones completely, the others through collection), or it carries a
`# needs …` comment and, without what it needs, stops within 20 s with a message naming exactly that
(the key variable, the server to start, the file to provide). A hosted-model line also runs against a
loopback server standing in for the provider's API (`OPENAI_BASE_URL`, as the SDK reads it). A README
line without an expectation here fails the test, so the page and this file move together.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.clone import ROOT, clone_env, closed_port, make_clone, run_line, shipped_counts
from tests.fake_provider import Behaviour, FakeProvider


@dataclass(frozen=True)
class Expect:
    """How a line is checked: `run` completely, `collect` only, `needs` (stops with `message`), or `ci` (the
    CI script runs it as written)."""

    how: str
    message: str = ""
    status: int = 4


SHIPPED = shipped_counts()

EXPECTED = {
    "python -m pytest": Expect("run", SHIPPED, 0),
    "python -m pytest tests": Expect("collect"),
    "python -m mypy pytest_toolsandbox": Expect("ci"),
    "pytest scenarios/messaging/": Expect("run", "21 xfailed", 0),
    'pytest --agent reference -m "state_dependency and not all_tools" --augment all': Expect("collect"),
    "pytest --agent reference --trials 4": Expect("collect"),
    "pytest --agent reference --agent unhelpful scenarios/messaging/": Expect("collect"),
    "pytest --agent mypkg.agents:MyAgent -n 8": Expect("needs", "cannot load it: No module named 'mypkg'"),
    "pytest --agent=claude -n 8 --ts-record-mode once": Expect("needs", "ANTHROPIC_API_KEY is not set"),
    "pytest --agent=gpt-4o --user=llm --ts-record-mode once": Expect("needs", "OPENAI_API_KEY is not set"),
    "pytest --agent=openai:qwen2.5 --model-base-url http://127.0.0.1:8080/v1 --ts-record-mode once":
        Expect("needs", "start the local model: python scripts/serve_local_model.py"),
    "pytest --agent=gpt-4o --user=reference-history --ts-record-mode once":
        Expect("needs", "OPENAI_API_KEY is not set"),
    "pytest --baseline old/summary.json": Expect("needs", "old/summary.json: cannot read the summary"),
    "pytest --update-baseline baselines/qwen2.5-coder-1.5b-instruct.json": Expect("collect"),
    "python -m pytest_toolsandbox compare old/summary.json toolsandbox-report/summary.json --html cmp/":
        Expect("needs", "old/summary.json: cannot read the summary", 2),
    "python scripts/serve_local_model.py": Expect("marked"),
    "pytest --ts-record-mode once --update-baseline baselines/qwen2.5-coder-1.5b-instruct.json": Expect("collect"),
    "python scripts/serve_local_model.py --stop": Expect("marked"),
}
"""`marked` lines build or stop the local model server: they are only checked for their `needs` comment."""


def readme_lines() -> list[tuple[str, str]]:
    """(command, comment) of every line in the README's bash blocks, except the command-line synopsis;
    `a && b` gives its parts, and `python -m pip install …` parts are the install this test runs in."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    synopsis = text.index("## Command line")
    lines = []
    for block in re.finditer(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        if synopsis < block.start() < text.index("\n## ", synopsis + 1):
            continue
        for line in block.group(1).splitlines():
            command, _, comment = line.partition("  #")
            for part in command.split(" && "):
                if part.strip() and not part.strip().startswith("python -m pip install"):
                    lines.append((part.strip(), comment.strip()))
    return lines


LINES = readme_lines()


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_clone(tmp_path_factory.mktemp("clone"))


def test_every_readme_line_has_an_expectation() -> None:
    assert {command for command, _ in LINES} == set(EXPECTED)
    for command, comment in LINES:
        if EXPECTED[command].how in ("needs", "marked"):  # what stops without help says what it needs
            assert comment.startswith("needs"), command


@pytest.mark.parametrize(("command", "comment"), LINES, ids=[f"line{index}" for index in range(len(LINES))])
def test_the_line_runs_or_says_what_it_needs(clone: Path, command: str, comment: str) -> None:
    expect = EXPECTED[command]
    if expect.how == "marked":
        return
    if expect.how == "ci":  # the CI script runs it as written (a type check of the whole package takes a minute)
        assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        return
    if expect.how == "collect":
        result = run_line(f"{command} --collect-only -q", clone, clone_env())
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        assert re.search(r"\d+ tests? collected", result.stdout)
        return
    typed = command.replace("http://127.0.0.1:8080/v1", f"http://127.0.0.1:{closed_port()}/v1")
    started = time.monotonic()
    result = run_line(typed, clone, clone_env())
    output = result.stdout + result.stderr
    assert result.returncode == expect.status, output[-3000:]
    assert expect.message in output
    if expect.how == "needs":
        assert time.monotonic() - started < 20
        assert "Traceback" not in output


def test_a_hosted_model_line_runs_against_its_api(clone: Path) -> None:
    """The gpt-4o line with its key set, its API played by a loopback server (one scenario, to stay quick)."""
    with FakeProvider(Behaviour(delay=0.0)) as provider:
        env = clone_env(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=provider.url + "/v1")
        result = run_line("pytest --agent=gpt-4o --user=llm --ts-record-mode once "
                          "scenarios/settings/back_online_low_battery.yaml -p no:randomly", clone, env)
        served = provider.stats().served
    assert result.returncode in (0, 1), result.stdout[-3000:] + result.stderr[-3000:]
    assert re.search(r"1 (passed|failed) in", result.stdout) and served > 0
    assert (clone / "cassettes/scenarios/settings/back_online_low_battery/gpt-4o--gpt-4o/base-t1.yaml.xz").is_file()


def test_the_unreachable_openai_api_stops_before_the_first_item(clone: Path) -> None:
    """The acceptance line `OPENAI_API_KEY=sk-x pytest --agent=gpt-4o --ts-record-mode once`, its API a closed port."""
    url = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.monotonic()
    result = run_line("pytest --agent=gpt-4o --ts-record-mode once", clone,
                      clone_env(OPENAI_API_KEY="sk-x", OPENAI_BASE_URL=url))
    assert time.monotonic() - started < 20 and result.returncode == 4
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and f"cannot reach {url} (openai:gpt-4o" in errors[0]
    assert "collected" not in result.stdout


def test_parallel_run_and_a_mistyped_path_after_the_quickstart_install(clone: Path) -> None:
    result = run_line("python -m pytest -n 2", clone, clone_env())
    assert result.returncode == 0 and SHIPPED in result.stdout, result.stdout[-2000:]
    result = run_line("python -m pytest scenarios/mesaging/", clone, clone_env())
    assert result.returncode == 4 and "ERROR: file or directory not found: scenarios/mesaging/" in result.stderr
    assert "ImportError" not in result.stdout + result.stderr
