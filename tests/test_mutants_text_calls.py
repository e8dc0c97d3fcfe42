"""Calls written as text (docs/agents.md, "Calls written as text"): mutations the rest of the suite
missed (issue 33) — ids that repeat across blocks, and a bare malformed object naming no known tool."""

from __future__ import annotations

from pytest_toolsandbox.roles.text_calls import format_error, parse_text_calls

KNOWN = ("set_wifi_status", "get_wifi_status")


def test_ids_run_on_across_tool_call_blocks_so_they_never_collide() -> None:
    text = ('<tool_call>{"name": "get_wifi_status", "arguments": {}}</tool_call> then '
            '<tool_call>[{"name": "set_wifi_status", "arguments": {"on": false}}, '
            '{"name": "get_wifi_status", "arguments": {}}]</tool_call> and '
            '<tool_call>{"name": "set_wifi_status", "arguments": {"on": True}}</tool_call>')
    calls = parse_text_calls(text, first_number=5, known=KNOWN)
    assert [call.id for call in calls] == ["text_call_5", "text_call_6", "text_call_7", "text_call_8"]
    assert [call.format_error is not None for call in calls] == [False, False, False, True]
    malformed = parse_text_calls('<tool_call>{"name": "get_wifi_status", "arguments": {}}</tool_call>'
                                 '<tool_call>[{"name": "set_wifi_status", "arguments": {"on": True}}, '
                                 '{"name": "get_wifi_status", "arguments": {},}]</tool_call>', known=KNOWN)
    assert [(call.id, call.format_error is not None) for call in malformed] == [
        ("text_call_1", False), ("text_call_2", True), ("text_call_3", True)]


def test_a_bare_malformed_object_is_a_call_only_when_it_names_a_known_tool() -> None:
    """Bare text is the agent talking to the user unless it names a tool: `arguments` alone proves
    nothing there, unlike inside a tag or fence where the model meant a call."""
    unknown = '{"name": "launch_rockets", "arguments": {"now": True}}'
    assert parse_text_calls(unknown, known=KNOWN) == ()
    [tagged] = parse_text_calls(f"<tool_call>{unknown}</tool_call>", known=KNOWN)
    assert tagged.name == "launch_rockets" and tagged.format_error is not None
    [bare] = parse_text_calls('{"name": "set_wifi_status", "arguments": {"on": True}}', known=KNOWN)
    assert bare.name == "set_wifi_status" and bare.arguments == '{"on": true}' and bare.format_error is not None


# Found by mutation testing (benchmarks/README.md, "Mutation testing"): what the suite left unpinned.

def test_valid_json_in_a_tag_is_a_call_as_written_whatever_its_name_and_numbering_starts_at_one() -> None:
    [call] = parse_text_calls('<tool_call>{"name": "launch_rockets", "arguments": {"count": 3}}</tool_call>')
    assert (call.id, call.name, call.arguments, call.format_error) == ("text_call_1", "launch_rockets",
                                                                       '{"count": 3}', None)


def test_arguments_keep_their_text_unescaped_and_a_double_encoded_string_as_sent() -> None:
    [call] = parse_text_calls('{"name": "send", "arguments": {"content": "Grüße 👋"}}', known=["send"])
    assert call.arguments == '{"content": "Grüße 👋"}'
    [encoded] = parse_text_calls('{"name": "send", "arguments": "{\\"content\\": \\"hi\\"}"}', known=["send"])
    assert encoded.arguments == '{"content": "hi"}'
    [broken] = parse_text_calls('{"name": "send", "arguments": "{\'content\': \'Grüße\'}",}', known=["send"])
    assert broken.format_error is not None and broken.arguments == '{"content": "Grüße"}'
    assert '{"name": "send", "arguments": {"content": "Grüße"}}' in broken.format_error


def test_a_bare_object_may_carry_every_envelope_key_and_prose_after_it() -> None:
    [call] = parse_text_calls('{"name": "send", "arguments": {}, "parameters": {}} I sent it.', known=["send"])
    assert call.name == "send" and call.format_error is None


def test_a_reply_that_starts_with_prose_is_text_even_around_a_call_shaped_object() -> None:
    assert parse_text_calls('I would send {"name": "send", "arguments": {"on": True}}', known=["send"]) == ()


def test_in_a_tag_an_unknown_name_without_arguments_is_not_a_call() -> None:
    assert parse_text_calls('<tool_call>{"name": "weather", "city": Paris}</tool_call>', known=["send"]) == ()


def test_the_format_error_names_what_was_left_out_and_cuts_a_long_example() -> None:
    plain = format_error("send", {"to": "Sam"}, ())
    assert "not valid JSON: it does not parse. Nothing was run." in plain and "left out" not in plain
    assert plain.endswith('in the form {"name": "send", "arguments": {"to": "Sam"}}.')
    assert format_error("send", {}, ("expression",)).endswith(
        '{"name": "send", "arguments": {}} (arguments that could not be read are left out).')
    envelope = len('{"name": "send", "arguments": {"to": ""}}')
    exact = format_error("send", {"to": "x" * (400 - envelope)}, ())
    assert exact.endswith('"}}.')  # 400 characters: shown whole
    longer = format_error("send", {"to": "x" * (401 - envelope)}, ())
    assert longer.endswith('x"}….') and len(longer) == len(exact) + 1  # cut to 400 characters, then "…"
