"""Property-based: random tool calls never crash the execution environment nor touch the machine.

At least 10,000 calls are thrown (500 examples × 20 calls): names include Python snippets, arguments
are random JSON, random text and wrong types. Every reply must be a well-formed outcome and nothing
may be written to disk.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_toolsandbox.tools.execution import Toolbox, run_call
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world import Role, ToolCall
from tests.support import make_world

REGISTRY = all_tools()
AGENT_TOOLS = [OfferedTool.from_spec(spec) for spec in REGISTRY.values() if spec.visible_to is Role.AGENT]
TOOLBOX = Toolbox(AGENT_TOOLS, REGISTRY)
ARGUMENT_NAMES = sorted({p.name for spec in REGISTRY.values() for p in spec.parameters})
INJECTIONS = [
    "__import__('os').system('touch x')",
    "open('x', 'w').write('pwned')",
    "exec(\"import os; os.system('touch x')\")",
    "eval('1+1')",
    "send_message_with_phone_number); import os; os.system('touch x'",
    "__builtins__",
    "get_wifi_status.__globals__",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30) | st.sampled_from(INJECTIONS),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
names = st.sampled_from(sorted(REGISTRY)) | st.sampled_from(INJECTIONS) | st.text(max_size=40)
argument_objects = st.dictionaries(st.sampled_from(ARGUMENT_NAMES) | st.text(max_size=10), json_values,
                                   max_size=5).map(lambda value: json.dumps(value))
raw_arguments = (argument_objects | json_values.map(json.dumps) | st.text(max_size=60)
                 | st.sampled_from(INJECTIONS))
calls = st.builds(lambda name, arguments: ToolCall(id="fuzz", name=name, arguments=arguments),
                  names, raw_arguments)


@pytest.fixture(autouse=True)
def _inside_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(batch=st.lists(calls, min_size=20, max_size=20))
def test_random_calls_always_come_back_as_replies(batch: list[ToolCall], tmp_path: Path) -> None:
    world = make_world()
    for call in batch:
        outcome = run_call(world, TOOLBOX, call)
        assert isinstance(outcome.content, str)
        if outcome.exception is None:
            assert outcome.trace is not None and outcome.trace.tool in REGISTRY
            assert outcome.trace.tool == call.name
        else:
            assert outcome.trace is None
            assert outcome.content == outcome.exception
            assert ": " in outcome.exception
        if call.name not in TOOLBOX.specs:
            assert outcome.error_code == "IFN"
            assert "Available tools:" in outcome.exception
    assert os.listdir(tmp_path) == []
    assert not Path("x").exists()


def test_feedback_names_what_to_fix() -> None:
    world = make_world()
    reply = run_call(world, TOOLBOX, ToolCall(id="1", name="send_message", arguments="{}"))
    assert reply.error_code == "IFN" and "send_message_with_phone_number" in reply.exception
    reply = run_call(world, TOOLBOX, ToolCall(id="2", name="set_wifi_status", arguments="{on: true"))
    assert reply.error_code == "IFE" and "not valid JSON" in reply.exception
    reply = run_call(world, TOOLBOX, ToolCall(id="3", name="set_wifi_status", arguments="[true]"))
    assert reply.error_code == "IFE" and "must be a JSON object" in reply.exception
    reply = run_call(world, TOOLBOX, ToolCall(id="4", name="set_wifi_status", arguments='{"enabled": true}'))
    assert reply.error_code == "IAN"
    assert "no argument named 'enabled'" in reply.exception
    assert "on (boolean, required): True to turn wifi on" in reply.exception
    reply = run_call(world, TOOLBOX, ToolCall(id="5", name="set_wifi_status", arguments="{}"))
    assert reply.error_code == "IAN" and "missing required argument(s) 'on'" in reply.exception
    reply = run_call(world, TOOLBOX, ToolCall(id="6", name="set_wifi_status", arguments='{"on": "yes"}'))
    assert reply.error_code == "IAT" and "must be of type boolean, got str" in reply.exception
    reply = run_call(world, TOOLBOX, ToolCall(id="7", name="add_reminder",
                                              arguments='{"content": "x", "reminder_timestamp": NaN}'))
    assert reply.error_code == "IAT" and "finite number" in reply.exception


def test_integers_are_accepted_for_numbers_but_not_booleans() -> None:
    world = make_world()
    reply = run_call(world, TOOLBOX, ToolCall(id="1", name="add_reminder",
                                              arguments='{"content": "x", "reminder_timestamp": 1800000000}'))
    assert reply.exception is None
    assert reply.trace.arguments["reminder_timestamp"] == 1800000000.0
    reply = run_call(world, TOOLBOX, ToolCall(id="2", name="set_wifi_status", arguments='{"on": 1}'))
    assert reply.error_code == "IAT"


def test_results_that_are_not_finite_come_back_as_errors() -> None:
    """Strict JSON has no Infinity: a trace holding one would be stored as null and re-score differently."""
    world = make_world()
    reply = run_call(world, TOOLBOX, ToolCall(id="1", name="unit_conversion",
                                              arguments='{"amount": 1e308, "from_unit": "km", "to_unit": "nm"}'))
    assert reply.exception == "OverflowError: unit_conversion produced a number too large to represent"
    assert reply.trace is None
    reply = run_call(world, TOOLBOX, ToolCall(id="2", name="convert_currency", arguments=json.dumps(
        {"amount": 1e308, "from_currency_code": "USD", "to_currency_code": "IDR"})))
    assert reply.exception.startswith("OverflowError: ")


PATHOLOGICAL = {
    "deep-array": ("[" * 100_000 + "]" * 100_000, "IFE"),
    "deep-value": ('{"name": ' + "[" * 995 + "]" * 995 + "}", "IFE"),
    "long-string": ('{"name": "' + "x" * 1_000_000 + '"}', None),
    "huge-integer": ('{"name": 1' + "0" * 5000 + "}", "IFE"),
    "1e400": ('{"name": 1e400}', "IAT"),
    "nan": ('{"name": NaN}', "IAT"),
    "lone-surrogate": ('{"name": "\\ud800"}', None),
}


@pytest.mark.parametrize("case", sorted(PATHOLOGICAL))
def test_pathological_arguments_never_end_an_episode(case: str) -> None:
    """The call is rendered into the bus and validated; neither may raise (deep JSON used to end the
    episode with a RecursionError, counted as an infrastructure error)."""
    from pytest_toolsandbox.roles.base import Turn
    from pytest_toolsandbox.roles.scripted import ScriptedUser
    from pytest_toolsandbox.running.episode import run_episode
    from pytest_toolsandbox.scenario.loader import load_scenario

    arguments, code = PATHOLOGICAL[case]

    class Pathological:
        name = "pathological"
        calls = 0

        def respond(self, messages, tools):
            self.calls += 1
            if self.calls == 1:
                return Turn(tool_calls=(ToolCall(id="p", name="search_contacts", arguments=arguments),))
            return Turn(text="done")

    scenario = load_scenario(Path(__file__).resolve().parents[1] / "scenarios/messaging/send_message_cellular_off.yaml")
    trajectory = run_episode(scenario, Pathological(), ScriptedUser(scenario))
    assert trajectory.ended_by == "user", trajectory.error
    assert trajectory.messages[4].error_code == code


def test_null_for_an_optional_argument_means_not_given() -> None:
    """Models write out every optional argument as null; a required one stays an error, and a null the
    parameter's type accepts (modify_reminder's latitude: "null to remove the location") keeps its meaning."""
    world = make_world()
    reply = run_call(world, TOOLBOX, ToolCall(id="1", name="add_contact", arguments=json.dumps(
        {"name": "Ada Lovelace", "phone_number": "+15550100", "relationship": None, "is_self": None})))
    assert reply.exception is None
    assert reply.trace.arguments == {"name": "Ada Lovelace", "phone_number": "+15550100", "relationship": None,
                                     "is_self": False}
    reply = run_call(world, TOOLBOX, ToolCall(id="2", name="add_contact",
                                              arguments='{"name": "Ada Byron", "phone_number": null}'))
    assert reply.error_code == "IAT" and "phone_number" in reply.exception
    reply = run_call(world, TOOLBOX, ToolCall(id="3", name="search_weather_around_lat_lon",
                                              arguments='{"days": null}'))
    assert reply.exception is None and reply.trace.arguments["days"] == 0
    added = run_call(world, TOOLBOX, ToolCall(id="4", name="add_reminder", arguments=json.dumps(
        {"content": "x", "reminder_timestamp": 1800000000, "latitude": 37.3, "longitude": -122.0})))
    reply = run_call(world, TOOLBOX, ToolCall(id="5", name="modify_reminder", arguments=json.dumps(
        {"reminder_id": added.trace.result, "latitude": None, "longitude": None})))
    assert reply.exception is None and reply.trace.arguments["latitude"] is None


def test_a_malformed_text_call_is_answered_with_its_format_error_and_never_run() -> None:
    world = make_world()
    call = ToolCall(id="1", name="set_wifi_status", arguments='{"on": true}', format_error="Broken: fix it.")
    reply = run_call(world, TOOLBOX, call)
    assert (reply.error_code, reply.exception, reply.trace) == ("IFE", "InvalidFormatError: Broken: fix it.", None)
    reply = run_call(world, TOOLBOX, call.model_copy(update={"name": "set_bluetooth"}))
    assert reply.error_code == "IFE" and "no tool named 'set_bluetooth'" in reply.exception
