"""Calls written as text (docs/agents.md, "Calls written as text"): mutations the rest of the suite
missed (issue 33) — ids that repeat across blocks, and a bare malformed object naming no known tool."""

from __future__ import annotations

from pytest_toolsandbox.roles.text_calls import parse_text_calls

KNOWN = ("set_wifi_status", "get_wifi_status")


def test_ids_run_on_across_tool_call_blocks_so_they_never_collide() -> None:
    text = ('<tool_call>{"name": "get_wifi_status", "arguments": {}}</tool_call> then '
            '<tool_call>[{"name": "set_wifi_status", "arguments": {"on": false}}, '
            '{"name": "get_wifi_status", "arguments": {}}]</tool_call> and '
            '<tool_call>{"name": "set_wifi_status", "arguments": {"on": True}}</tool_call>')
    calls = parse_text_calls(text, first_number=5, known=KNOWN)
    assert [call.id for call in calls] == ["text_call_5", "text_call_6", "text_call_7", "text_call_8"]
    assert [call.format_error is not None for call in calls] == [False, False, False, True]


def test_a_bare_malformed_object_is_a_call_only_when_it_names_a_known_tool() -> None:
    """Bare text is the agent talking to the user unless it names a tool: `arguments` alone proves
    nothing there, unlike inside a tag or fence where the model meant a call."""
    unknown = '{"name": "launch_rockets", "arguments": {"now": True}}'
    assert parse_text_calls(unknown, known=KNOWN) == ()
    [tagged] = parse_text_calls(f"<tool_call>{unknown}</tool_call>", known=KNOWN)
    assert tagged.name == "launch_rockets" and tagged.format_error is not None
    [bare] = parse_text_calls('{"name": "set_wifi_status", "arguments": {"on": True}}', known=KNOWN)
    assert bare.name == "set_wifi_status" and bare.arguments == '{"on": true}' and bare.format_error is not None
