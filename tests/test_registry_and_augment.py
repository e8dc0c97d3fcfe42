"""The registry's schemas and the tool augmentations of the paper."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pytest_toolsandbox.tools.augment import VARIANTS, distraction_ranking, offered_tools
from pytest_toolsandbox.tools.registry import all_tools, json_type
from pytest_toolsandbox.world import Role

REGISTRY = all_tools()
AGENT_REGISTRY = {name: spec for name, spec in REGISTRY.items() if spec.visible_to is Role.AGENT}
ALLOWED = ["search_contacts", "send_message_with_phone_number", "set_cellular_service_status"]
EXPECTED_TOOLS = {
    "add_contact", "modify_contact", "remove_contact", "search_contacts", "send_message_with_phone_number",
    "search_messages", "add_reminder", "modify_reminder", "remove_reminder", "search_reminder",
    "get_cellular_service_status", "get_wifi_status", "get_location_service_status",
    "get_low_battery_mode_status", "set_cellular_service_status", "set_wifi_status",
    "set_location_service_status", "set_low_battery_mode_status", "get_current_location",
    "get_current_timestamp", "timestamp_to_datetime_info", "datetime_info_to_timestamp", "shift_timestamp",
    "timestamp_diff", "seconds_to_hours_minutes_seconds", "unit_conversion", "calculate_lat_lon_distance",
    "search_holiday", "convert_currency", "search_lat_lon", "search_location_around_lat_lon", "search_stock",
    "search_weather_around_lat_lon", "end_conversation",
}


def test_registry_has_exactly_the_34_tools() -> None:
    assert set(REGISTRY) == EXPECTED_TOOLS
    assert [name for name, spec in REGISTRY.items() if spec.visible_to is Role.USER] == ["end_conversation"]


def test_action_tools_are_exactly_those_that_write() -> None:
    for spec in REGISTRY.values():
        assert spec.action == bool(spec.writes), spec.name


def test_cli_lists_the_registry_as_json() -> None:
    output = subprocess.run([sys.executable, "-m", "pytest_toolsandbox", "tools", "--json"],
                            capture_output=True, text=True, check=True).stdout
    entries = json.loads(output)
    assert {entry["name"] for entry in entries} == EXPECTED_TOOLS
    send = next(entry for entry in entries if entry["name"] == "send_message_with_phone_number")
    assert send["domain"] == "messaging" and send["action"] is True
    assert send["json_schema"]["required"] == ["phone_number", "content"]
    assert send["openai"]["function"]["parameters"] == send["json_schema"]
    assert send["anthropic"]["input_schema"] == send["json_schema"]


def test_schema_types_from_hints() -> None:
    schema = REGISTRY["add_reminder"].json_schema()
    assert schema["properties"]["reminder_timestamp"] == {
        "type": "number", "description": "When to remind, as a POSIX timestamp."}
    assert schema["properties"]["latitude"]["type"] == "number"  # Optional[float] → number
    assert schema["required"] == ["content", "reminder_timestamp"]
    assert REGISTRY["search_contacts"].json_schema()["properties"]["is_self"]["type"] == "boolean"
    assert json_type(list[str]) == {"type": "array", "items": {"type": "string"}}
    with pytest.raises(TypeError):
        json_type(set)


def test_distraction_ranking_prefers_same_domain_then_similar_names() -> None:
    ranking = distraction_ranking(ALLOWED, AGENT_REGISTRY)
    same_domain = {"add_contact", "modify_contact", "remove_contact", "search_messages",
                   "get_cellular_service_status", "get_wifi_status", "get_location_service_status",
                   "get_low_battery_mode_status", "set_wifi_status", "set_location_service_status",
                   "set_low_battery_mode_status", "get_current_location"}
    assert set(ranking[:len(same_domain)]) == same_domain
    assert len(ranking) == len(AGENT_REGISTRY) - len(ALLOWED)
    assert ranking == distraction_ranking(list(reversed(ALLOWED)), AGENT_REGISTRY)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_is_deterministic(variant: str) -> None:
    first = [tool.as_dict() for tool in offered_tools(ALLOWED, AGENT_REGISTRY, variant)]
    second = [tool.as_dict() for tool in offered_tools(list(reversed(ALLOWED)), AGENT_REGISTRY, variant)]
    assert first == second
    assert {tool["tool"] for tool in first} >= set(ALLOWED)


def test_scramblings_change_only_what_they_name() -> None:
    base = {t.tool: t for t in offered_tools(ALLOWED, AGENT_REGISTRY, "3_distraction_tools")}
    names = {t.tool: t for t in offered_tools(ALLOWED, AGENT_REGISTRY, "tool_name_scrambled")}
    assert names["search_contacts"].name == "contact_3"
    assert names["send_message_with_phone_number"].name == "messaging_1"
    assert all(names[k].description == base[k].description for k in base)
    descriptions = {t.tool: t for t in offered_tools(ALLOWED, AGENT_REGISTRY, "tool_description_scrambled")}
    assert all(t.description == "" and t.parameters == base[k].parameters for k, t in descriptions.items())
    arg_docs = {t.tool: t for t in offered_tools(ALLOWED, AGENT_REGISTRY, "arg_description_scrambled")}
    for key, tool in arg_docs.items():
        assert all("description" not in p and "type" in p for p in tool.parameters["properties"].values())
        assert tool.parameters["required"] == base[key].parameters["required"]
    arg_types = {t.tool: t for t in offered_tools(ALLOWED, AGENT_REGISTRY, "arg_type_scrambled")}
    for tool in arg_types.values():
        assert all("type" not in p and "description" in p for p in tool.parameters["properties"].values())
    assert REGISTRY["set_wifi_status"].json_schema()["properties"]["on"]["type"] == "boolean"  # registry untouched


def test_unknown_variant_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown variant 'scrambled'; choose one of"):
        offered_tools(ALLOWED, AGENT_REGISTRY, "scrambled")


def test_distraction_ties_keep_domain_then_declaration_order_not_name_order() -> None:
    from rapidfuzz import fuzz, utils

    from pytest_toolsandbox.tools.registry import declaration_order

    ranking = distraction_ranking(["set_wifi_status"], AGENT_REGISTRY, ["end_conversation"])
    score = {name: max(fuzz.WRatio(name, other, processor=utils.default_process)
                       for other in ("set_wifi_status", "end_conversation")) for name in ranking}
    tied = [name for name in ranking if score[name] == score["get_cellular_service_status"]]
    # six setting tools tie; they keep the order setting.py declares them in (radio by radio)
    assert tied == ["get_cellular_service_status", "set_cellular_service_status", "get_location_service_status",
                    "set_location_service_status", "get_low_battery_mode_status", "set_low_battery_mode_status"]
    assert tied != sorted(tied)
    assert ranking[:3] == ["get_wifi_status", "get_cellular_service_status", "set_cellular_service_status"]
    order = declaration_order(AGENT_REGISTRY)
    assert order["add_contact"] < order["send_message_with_phone_number"] < order["get_current_timestamp"]
