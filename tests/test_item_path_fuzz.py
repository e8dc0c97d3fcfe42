"""Property-based: hostile agent turns through the whole item path — episode, scoring, report files,
summary — never end a run, never write outside the report directory (issue 7).

Hypothesis generates batches of agent turns (tool calls with hostile names, ids and arguments: deep
JSON, markup, path traversal, control characters, lone surrogates, huge and non-finite numbers; and
texts of the same kind) plus hostile `name`/`model`/`usage` attributes. Each example is one in-process
pytest run of 24 items (4 scenarios × 6 trials) whose agent plays 12 generated turns per item, so
every example plays at least 288 turns and the 8 examples at least 2,304.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_toolsandbox.tools.registry import all_tools
from tests.test_plugin_support import run, write_suite

TRIALS = 6
ITEMS = 4 * TRIALS
TURNS_PER_ITEM = 12
EXAMPLES = 8

NASTY = ["../../../../tmp/owned", "/etc/passwd", "<script>alert(1)</script>", "\x1b]0;t\x07\x1b[2J", "\ud83d",
         "{num.bar}", "{:>300000000}", "__import__('os').system('touch owned')", "nan", "1e999", "\u202e", ""]
DEEP = '{"a": ' + "[" * 1000 + "]" * 1000 + "}"

texts = st.text(max_size=40) | st.sampled_from(NASTY)
scalars = (st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30)
           | st.floats(allow_nan=True, allow_infinity=True) | texts)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(texts, inner, max_size=3), max_leaves=8)
tool_names = st.sampled_from(sorted(all_tools())) | texts
arguments = (st.dictionaries(texts, json_values, max_size=4).map(lambda value: json.dumps(value))
             | json_values.map(json.dumps) | texts | st.just(DEEP))
calls = st.fixed_dictionaries({"id": texts, "name": tool_names, "arguments": arguments})
turns = st.one_of(st.fixed_dictionaries({"calls": st.lists(calls, min_size=1, max_size=20)}),
                  st.fixed_dictionaries({"text": texts}))
item_plans = st.fixed_dictionaries({
    "turns": st.lists(turns, min_size=TURNS_PER_ITEM, max_size=TURNS_PER_ITEM),
    "name": texts, "model": json_values, "usage": json_values,
})

CONFTEST = '''
import json
from pathlib import Path

import pytest

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall

PLANS = json.loads(Path(__file__).with_name("plans.json").read_text())
TRIALS = len(PLANS) // 4


class FuzzAgent:
    """Plays its generated turns (every one, also after text replies), then says goodbye."""

    def __init__(self, plan):
        self.plan = plan
        self.name, self.model, self.usage = plan["name"], plan["model"], plan["usage"]
        self.played = 0

    def respond(self, messages, tools):
        if self.played >= len(self.plan["turns"]):
            return Turn(text="Goodbye.")
        turn = self.plan["turns"][self.played]
        self.played += 1
        if "calls" in turn:
            return Turn(tool_calls=tuple(ToolCall(**call) for call in turn["calls"]))
        return Turn(text=turn["text"])


class EndlessUser:
    """Keeps the conversation going so that every planned agent turn is played."""

    name = "endless-user"

    def respond(self, messages, tools):
        if messages[-1].content == "Goodbye.":
            return Turn(tool_calls=(ToolCall(id="end", name="end_conversation", arguments="{}"),))
        return Turn(text="Go on.")


SCENARIOS = ["half", "refuse", "wifi_off", "wifi_status"]


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario, toolsandbox_case):
    slot = SCENARIOS.index(toolsandbox_scenario.name) * TRIALS + toolsandbox_case.trial - 1
    return FuzzAgent(PLANS[slot])


@pytest.fixture
def toolsandbox_user():
    return EndlessUser()
'''


def _files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def _agent_turns(trajectory: dict[str, Any]) -> int:
    """Agent turns played: agent messages that do not continue a parallel batch."""
    count, previous = 0, None
    for message in trajectory["messages"]:
        if message["sender"] == "agent" and previous != "agent":
            count += 1
        previous = message["sender"]
    return count


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(plans=st.lists(item_plans, min_size=ITEMS, max_size=ITEMS))
def test_hostile_turns_never_end_a_run_nor_escape_the_report(pytester: pytest.Pytester,
                                                             plans: list[dict[str, Any]]) -> None:
    for path in sorted(pytester.path.iterdir(), reverse=True):  # pytester's directory is shared by examples
        if path.name != "plans.json":
            _remove(path)
    write_suite(pytester)
    (pytester.path / "plans.json").write_text(json.dumps(plans))
    pytester.makeconftest(CONFTEST)
    before = _files(pytester.path)
    result = run(pytester, "--trials", str(TRIALS), "--max-messages", "1000", "-p", "no:randomly")
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    # pytester points HOME at its directory, where matplotlib (the report's charts) keeps its font cache
    created = {path for path in _files(pytester.path) - before if not path.startswith((".cache", ".config"))}
    assert all(path.startswith("toolsandbox-report") for path in created), sorted(created)[:5]
    report = pytester.path / "toolsandbox-report"
    data = json.loads((report / "summary.json").read_text(encoding="utf-8"),
                      parse_constant=lambda constant: pytest.fail(f"summary.json holds {constant}"))
    assert data["counts"]["finished"] == ITEMS and not data["partial"]
    played = 0
    for record in data["records"]:
        assert record["outcome"] in ("passed", "failed"), record["error"]
        trajectory = json.loads((report / record["trajectory"]).read_text(encoding="utf-8"))
        played += _agent_turns(trajectory)
        assert (report / record["page"]).is_file()
    assert played >= ITEMS * TURNS_PER_ITEM  # every generated turn was played (plus the goodbye)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        for child in path.iterdir():
            _remove(child)
        path.rmdir()
    else:
        path.unlink()
