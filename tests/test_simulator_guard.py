"""The simulator guard's flags (one case that raises each, one that does not) and their count per run."""

from __future__ import annotations

from pytest_toolsandbox.report.results.summary import group_stats
from pytest_toolsandbox.report.text.table import format_table
from pytest_toolsandbox.roles.simulator_guard import (
    assistant_style,
    echoes,
    reason_code,
    repeated_lines,
    suspicions,
)
from pytest_toolsandbox.world.messages import Message, Role
from tests.support import reference_trajectories, shipped_scenario

SCENARIO = shipped_scenario("scenarios/messaging/send_message_cellular_off.yaml")
ASKED = "I found Fredrik Thordendal. What should the message say?"


def said(*lines: tuple[Role, str]) -> list[Message]:
    return [
        Message(index=i, sender=sender, recipient=Role.AGENT if sender is Role.USER else Role.USER, content=text)
        for i, (sender, text) in enumerate(lines)
    ]


def test_echo_of_the_agents_last_message() -> None:
    echoed = said((Role.USER, "text Fredrik"), (Role.AGENT, ASKED), (Role.USER, ASKED.replace("?", "??")))
    answered = said(
        (Role.USER, "text Fredrik"), (Role.AGENT, ASKED), (Role.USER, "Say: How's the new album coming along")
    )
    short = said((Role.USER, "text Fredrik"), (Role.AGENT, "Thanks!"), (Role.USER, "Thanks!"))
    assert echoes(echoed) == [2]
    assert echoes(answered) == [] and echoes(short) == []


def test_assistant_style_lines() -> None:
    for line in (
        "As an AI, I can help you send that message.",
        "How can I help you today?",
        "Use the send_message_with_phone_number tool.",
        '{"name": "end_conversation"}',
        "I'm sorry, but I can't find that contact.",
        "I've updated your dessert reminder.",
        "Your reminder to return the sweater has been set.",
        "Your cellular service is now on.",
    ):
        assert assistant_style(said((Role.AGENT, ASKED), (Role.USER, line))) == [1], line
    assert assistant_style(said((Role.AGENT, ASKED), (Role.USER, "Ask him how the new album is coming along."))) == []


def test_the_same_line_three_times() -> None:
    looping = said(*[(Role.USER, "Please  send it."), (Role.AGENT, "Sent?")] * 2, (Role.USER, "please send it."))
    twice = said(*[(Role.USER, "Please send it."), (Role.AGENT, "Sent?")] * 2)
    assert repeated_lines(looping) == ["please send it."]
    assert repeated_lines(twice) == []


def test_every_flag_has_a_reason_code_and_the_message_cap_is_one() -> None:
    fine = said((Role.USER, "text Fredrik"), (Role.AGENT, "Your message has been sent."))
    assert suspicions(SCENARIO, fine, milestones_met=True, ended_by_user=True) == []
    assert [
        reason_code(r) for r in suspicions(SCENARIO, fine, milestones_met=True, ended_by_user=False, hit_cap=True)
    ] == ["message_cap"]
    bad = said(
        (Role.USER, "text Fredrik"),
        (Role.AGENT, ASKED),
        (Role.USER, ASKED),
        (Role.AGENT, "Sorry?"),
        (Role.USER, "As an AI, I can help you with that."),
    )
    codes = [reason_code(r) for r in suspicions(SCENARIO, bad, milestones_met=True, ended_by_user=False, hit_cap=True)]
    assert codes == ["echo", "assistant_style", "message_cap"]


def _record(user_model: str | None, suspect: list[str]) -> dict:
    return {
        "path": "s.yaml",
        "variant": "base",
        "outcome": "failed",
        "score": 0.5,
        "passed": False,
        "turn_count": 3,
        "categories": [],
        "agent": "a",
        "agent_spec": "a",
        "user_model": user_model,
        "user_sim_suspect": suspect,
        "tokens": {},
        "trial": 1,
        "id": "s.yaml::x",
    }


def test_the_run_counts_flagged_episodes_and_the_table_shows_them() -> None:
    records = [_record("m", ["echo: …"]), _record("m", []), _record("m", ["message_cap: …", "echo: …"])]
    stats = group_stats(records, trials=1)
    assert (stats["user_sim_checked"], stats["user_sim_suspect"]) == (3, 2)
    aggregates = {"a": {"names": ["a"], "all": stats, "categories": {}, "variants": {}}}
    header, row = format_table(aggregates, 1)[1:3]
    assert "user suspect" in header and row.split()[-2] == "2"
    scripted = group_stats([_record(None, [])], trials=1)
    assert scripted["user_sim_checked"] == 0
    plain = {"a": {"names": ["a"], "all": scripted, "categories": {}, "variants": {}}}
    assert "user suspect" not in format_table(plain, 1)[1]


def test_the_users_of_the_reference_dialogues_raise_no_style_flag() -> None:
    """Echo, assistant-style and repeated-line patterns stay quiet on every scripted user line of the suite."""
    for path, trajectory in reference_trajectories():
        messages = trajectory.messages
        assert (echoes(messages), assistant_style(messages), repeated_lines(messages)) == ([], [], []), path
