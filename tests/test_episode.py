"""Episodes: orchestration, roles, parallel calls, trajectories and determinism."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.human import HumanAgent, HumanUser
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ReplayAgent, ScriptedUser, UnhelpfulAgent
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import load_scenario, parse_scenario
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.tools.execution import ExecutionEnvironment, Toolbox, candidate_orders
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world import Role, Table, ToolCall
from pytest_toolsandbox.world.trajectory import Trajectory

ROOT = Path(__file__).resolve().parents[1]
FREDRIK = ROOT / "scenarios" / "messaging" / "send_message_cellular_off.yaml"


def fredrik_episode() -> Trajectory:
    scenario = load_scenario(FREDRIK)
    return run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario))


def test_reference_dialogue_of_the_seed_example() -> None:
    trajectory = fredrik_episode()
    replies = [m for m in trajectory.messages if m.sender is Role.EXECUTION_ENVIRONMENT and m.recipient is Role.AGENT]
    assert [m.tool_name for m in replies] == [
        "search_contacts", "send_message_with_phone_number", "set_cellular_service_status",
        "send_message_with_phone_number"]
    assert replies[1].exception == "ConnectionError: Cellular service is not enabled"
    assert replies[1].tool_trace is None
    assert replies[3].tool_trace.arguments == {"phone_number": "+12453344098",
                                               "content": "How's the new album coming along"}
    world = trajectory.world()
    sent = world.table(Table.MESSAGING).row(-1, named=True)
    assert (sent["recipient_phone_number"], sent["content"]) == ("+12453344098", "How's the new album coming along")
    assert world.snapshot(Table.SETTINGS, replies[2].index - 1)["cellular"][0] is False
    assert world.snapshot(Table.SETTINGS, replies[2].index)["cellular"][0] is True
    assert trajectory.ended_by == "user"
    assert trajectory.messages[-1].conversation_active is False


def test_same_scenario_twice_gives_identical_bytes() -> None:
    assert fredrik_episode().to_json() == fredrik_episode().to_json()


def test_identical_bytes_across_processes(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "pytest_toolsandbox", "run", str(FREDRIK), "--json"]
    outputs = [subprocess.run(command, capture_output=True, text=True, check=True,
                              env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": seed, "TZ": zone}).stdout
               for seed, zone in (("1", "UTC"), ("2", "Asia/Tokyo"))]
    assert outputs[0] == outputs[1] == fredrik_episode().to_json()


def test_trajectory_round_trips_through_json() -> None:
    trajectory = fredrik_episode()
    again = Trajectory.from_json(trajectory.to_json())
    assert again == trajectory
    world = again.world()
    for table in (Table.SETTINGS, Table.MESSAGING):
        assert [index for index, _ in world.history(table)] == [s.index for s in trajectory.snapshots[str(table)]]


def test_replay_agent_reproduces_a_trajectory() -> None:
    original = fredrik_episode()
    scenario = load_scenario(FREDRIK)
    replayed = run_episode(scenario, ReplayAgent(original.messages), ScriptedUser(scenario))
    strip = lambda t: t.model_copy(update={"agent": ""}).to_json()  # noqa: E731
    assert strip(replayed) == strip(original)


def test_unhelpful_agent_changes_nothing() -> None:
    scenario = load_scenario(FREDRIK)
    trajectory = run_episode(scenario, UnhelpfulAgent(), ScriptedUser(scenario))
    assert [m.sender for m in trajectory.messages[3:]] == [Role.AGENT, Role.USER, Role.EXECUTION_ENVIRONMENT]
    assert all(len(snapshots) == 1 for snapshots in trajectory.snapshots.values())


def test_message_cap_ends_a_chatty_episode() -> None:
    class Chatty:
        name = "chatty"

        def respond(self, messages, tools):
            return Turn(tool_calls=(ToolCall(id="c", name="search_contacts", arguments='{"name": "Sam"}'),))

    scenario = load_scenario(FREDRIK)
    trajectory = run_episode(scenario, Chatty(), ScriptedUser(scenario), max_messages=7)
    assert trajectory.ended_by == "max_messages"
    assert len(trajectory.messages) == 3 + 7


def test_a_crashing_role_keeps_what_was_played() -> None:
    class Crashing:
        name = "crashing"

        def respond(self, messages, tools):
            if len(messages) > 3:
                raise RuntimeError("provider unavailable")
            return Turn(tool_calls=(ToolCall(id="c", name="get_wifi_status"),))

    scenario = load_scenario(FREDRIK)
    trajectory = run_episode(scenario, Crashing(), ScriptedUser(scenario))
    assert trajectory.ended_by == "error"
    assert trajectory.error == "RuntimeError: provider unavailable"
    assert trajectory.messages[-1].tool_name == "get_wifi_status"


def _parallel_episode(first: str, second: str) -> Trajectory:
    calls = {"set": ToolCall(id="a", name="set_cellular_service_status", arguments='{"on": true}'),
             "send": ToolCall(id="b", name="send_message_with_phone_number",
                              arguments='{"phone_number": "+12453344098", "content": "hi"}'),
             "wifi": ToolCall(id="c", name="get_wifi_status"),
             "search": ToolCall(id="d", name="search_contacts", arguments='{"name": "Sam"}')}

    class Parallel:
        name = "parallel"
        done = False

        def respond(self, messages, tools):
            if self.done:
                return Turn(text="done")
            self.done = True
            return Turn(tool_calls=(calls[first], calls[second]))

    scenario = load_scenario(FREDRIK)
    return run_episode(scenario, Parallel(), ScriptedUser(scenario))


def test_order_dependent_parallel_calls_surface_the_failing_order() -> None:
    trajectory = _parallel_episode("set", "send")
    replies = [m for m in trajectory.messages if m.sender is Role.EXECUTION_ENVIRONMENT][:2]
    assert [m.tool_name for m in replies] == ["send_message_with_phone_number", "set_cellular_service_status"]
    assert replies[0].exception == "ConnectionError: Cellular service is not enabled"
    world = trajectory.world()
    assert world.table(Table.SETTINGS)["cellular"][0] is True  # the failing order's effects persist
    assert world.table(Table.MESSAGING).height == 10


def test_independent_parallel_calls_keep_their_order() -> None:
    trajectory = _parallel_episode("wifi", "search")
    replies = [m for m in trajectory.messages if m.sender is Role.EXECUTION_ENVIRONMENT][:2]
    assert [m.tool_name for m in replies] == ["get_wifi_status", "search_contacts"]
    assert candidate_orders([all_tools()["get_wifi_status"], all_tools()["search_contacts"]]) == [[0, 1]]


def test_candidate_orders_grow_quadratically_not_factorially() -> None:
    send = all_tools()["send_message_with_phone_number"]
    assert len(candidate_orders([send] * 6)) == 1 + 15


def test_human_roles_read_from_a_terminal(tmp_path: Path) -> None:
    scenario = load_scenario(FREDRIK)
    agent_lines = iter(['call search_contacts {"name": "Fredrik Thordendal"}', "Sent it."])
    user_lines = iter(["end"])
    transcript = tmp_path / "out.txt"
    with transcript.open("w") as out:
        trajectory = run_episode(scenario, HumanAgent(lambda _: next(agent_lines), out),
                                 HumanUser(lambda _: next(user_lines), out))
    assert trajectory.ended_by == "user"
    assert trajectory.messages[4].tool_trace.result[0]["name"] == "Fredrik Thordendal"
    assert "Text Fredrik Thordendal" in transcript.read_text()


def test_scrambled_names_are_offered_and_mapped_back() -> None:
    scenario = load_scenario(FREDRIK)
    trajectory = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario),
                             variant="tool_name_scrambled")
    offered = {entry["name"]: entry["tool"] for entry in trajectory.tools}
    assert "search_contacts" not in offered and "contact_3" in offered
    replies = [m for m in trajectory.messages if m.sender is Role.EXECUTION_ENVIRONMENT and m.recipient is Role.AGENT]
    assert replies[0].tool_name == "contact_3" and replies[0].tool_trace.tool == "search_contacts"
    assert trajectory.world().table(Table.MESSAGING).height == 11


@pytest.mark.parametrize("variant,count", [("base", 3), ("3_distraction_tools", 6), ("10_distraction_tools", 13),
                                           ("all_tools", 33)])
def test_distraction_variants_offer_the_right_number_of_tools(variant: str, count: int) -> None:
    scenario = load_scenario(FREDRIK)
    trajectory = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario), variant=variant)
    assert len(trajectory.tools) == count
    again = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario), variant=variant)
    assert trajectory.tools == again.tools


def test_denied_tools_are_hidden() -> None:
    data = {"categories": ["insufficient_information"], "user": {"goal": "g", "first_message": "hi"},
            "tools": ["search_lat_lon", "get_current_location"], "deny": ["get_current_location"]}
    scenario = parse_scenario(data, Path("inline.yaml"))
    trajectory = run_episode(scenario, UnhelpfulAgent(), ScriptedUser(scenario))
    assert [entry["name"] for entry in trajectory.tools] == ["search_lat_lon"]
    assert json.loads(trajectory.to_json())["scenario"] == "inline"


def test_malformed_trajectories_are_rejected_with_a_reason() -> None:
    data = json.loads(fredrik_episode().to_json())
    data["messages"][3]["index"] = 7
    with pytest.raises(ValueError, match=r"messages\[3\] has index 7"):
        Trajectory.model_validate(data)
    data = json.loads(fredrik_episode().to_json())
    del data["snapshots"]["reminders"]
    with pytest.raises(ValueError, match=r"snapshots lacks the table\(s\) \['reminders'\]"):
        Trajectory.model_validate(data)


def test_run_command_prints_the_conversation_and_the_world_changes(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_toolsandbox.cli import main

    assert main(["run", str(FREDRIK)]) == 0
    output = capsys.readouterr().out
    assert "✗ ConnectionError: Cellular service is not enabled" in output
    assert "world: settings changed at message(s) 8" in output
    added = next(line for line in output.splitlines() if line.startswith("  + message_id="))
    assert "recipient_phone_number='+12453344098'" in added
    assert "content=\"How's the new album coming along\"" in added


def _batch_episode(*calls: ToolCall) -> Trajectory:
    class Batch:
        name = "batch"
        done = False

        def respond(self, messages, tools):
            if self.done:
                return Turn(text="done")
            self.done = True
            return Turn(tool_calls=calls)

    scenario = load_scenario(FREDRIK)  # cellular is off
    return run_episode(scenario, Batch(), ScriptedUser(scenario))


SET_ON = ToolCall(id="set", name="set_cellular_service_status", arguments='{"on": true}')
SEND = ToolCall(id="send", name="send_message_with_phone_number",
                arguments='{"phone_number": "+12453344098", "content": "hi"}')


@pytest.mark.parametrize("noise", [ToolCall(id="bad", name="send_message", arguments="{}"),
                                   ToolCall(id="bad", name="search_contacts", arguments="{}")])
def test_a_failing_call_in_the_batch_does_not_hide_a_race(noise: ToolCall) -> None:
    """The malformed or always-failing call fails in every order; the race between set and send must
    still be surfaced (it used to be masked because the given order already "failed")."""
    trajectory = _batch_episode(noise, SET_ON, SEND)
    replies = [m for m in trajectory.messages if m.sender is Role.EXECUTION_ENVIRONMENT][:3]
    assert [m.tool_call_id for m in replies] == ["bad", "send", "set"]
    assert replies[1].exception == "ConnectionError: Cellular service is not enabled"


def test_the_same_action_twice_keeps_the_given_order() -> None:
    first, second = SET_ON, SET_ON.model_copy(update={"id": "again"})
    trajectory = _batch_episode(first, second)
    replies = [m for m in trajectory.messages if m.sender is Role.EXECUTION_ENVIRONMENT][:2]
    assert [m.tool_call_id for m in replies] == ["set", "again"]
    assert replies[0].exception is None and replies[1].exception == "ValueError: cellular already enabled"


def test_roles_read_only_what_they_may() -> None:
    """The agent never reads the user simulator's instruction nor the user's tool traffic; the user never
    reads the agent's system prompt nor its tool calls and results."""
    seen: dict[str, list] = {"agent": [], "user": []}

    class Recording(ReferenceAgent):
        def respond(self, messages, tools):
            seen["agent"].extend(messages)
            return super().respond(messages, tools)

    class RecordingUser(ScriptedUser):
        def respond(self, messages, tools):
            seen["user"].extend(messages)
            return super().respond(messages, tools)

    scenario = load_scenario(FREDRIK)
    trajectory = run_episode(scenario, Recording(scenario), RecordingUser(scenario))
    instruction, prompt = trajectory.messages[1], trajectory.messages[0]
    assert instruction.recipient is Role.USER and prompt.recipient is Role.AGENT
    agent_seen = {m.index for m in seen["agent"]}
    user_seen = {m.index for m in seen["user"]}
    assert instruction.index not in agent_seen and prompt.index in agent_seen
    assert prompt.index not in user_seen and instruction.index in user_seen
    for message in trajectory.messages:
        if Role.EXECUTION_ENVIRONMENT in (message.sender, message.recipient):
            caller = message.sender if message.recipient is Role.EXECUTION_ENVIRONMENT else message.recipient
            assert message.index not in (user_seen if caller is Role.AGENT else agent_seen)
    assert any(m.tool_call is not None for m in seen["agent"])
    assert trajectory.messages[-2].tool_call.name == "end_conversation"


def test_distractions_are_ranked_against_end_conversation_too() -> None:
    """The reference ranks distraction tools against the whole allow list, which always holds the user's
    end_conversation: unit_conversion (close to it) is among the three distractions of a clock scenario."""
    data = {"categories": ["single_tool_call"], "user": {"goal": "g", "first_message": "What time is it?"},
            "tools": ["get_current_timestamp"]}
    scenario = parse_scenario(data, Path("clock.yaml"))
    trajectory = run_episode(scenario, UnhelpfulAgent(), ScriptedUser(scenario), variant="3_distraction_tools")
    assert [entry["name"] for entry in trajectory.tools] == [
        "get_current_timestamp", "shift_timestamp", "timestamp_diff", "unit_conversion"]


def test_trajectories_with_unknown_tables_or_unordered_snapshots_are_rejected() -> None:
    data = json.loads(fredrik_episode().to_json())
    data["snapshots"]["sandbox"] = data["snapshots"]["settings"]
    with pytest.raises(ValueError, match=r"snapshots has unknown table\(s\) \['sandbox'\]"):
        Trajectory.model_validate(data)
    data = json.loads(fredrik_episode().to_json())
    data["snapshots"]["settings"].reverse()
    with pytest.raises(ValueError, match=r"snapshots.settings has indices \[8, 0\]"):
        Trajectory.model_validate(data)


def test_a_message_to_the_environment_without_a_call_gets_a_reply() -> None:
    scenario = load_scenario(FREDRIK)
    world = build_world(scenario)
    world.post(sender=Role.AGENT, recipient=Role.EXECUTION_ENVIRONMENT, content="no call here")
    ExecutionEnvironment({Role.AGENT: Toolbox([], all_tools())}).respond(world)
    reply = world.messages[-1]
    assert reply.sender is Role.EXECUTION_ENVIRONMENT and reply.error_code == "IFN"
