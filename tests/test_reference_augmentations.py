"""Imported scenarios offer the reference's own augmentation sets: its distraction tools, its scrambled names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_toolsandbox.importer.command import build, write
from pytest_toolsandbox.importer.convert import ConversionError, group_bases, reference_augmentations
from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario, parse_scenario
from pytest_toolsandbox.tools.augment import tools_for
from pytest_toolsandbox.tools.registry import all_tools
from pytest_toolsandbox.world.messages import Role
from tests.test_importer import fixture_data

REGISTRY = all_tools()
SCRAMBLED = {"name": "wifi_on_3_distraction_tools_tool_name_scrambled", "deny": [], "detail": "w",
             "augmentations": ["TOOL_NAME_SCRAMBLED"],
             "tools": ["end_conversation", "set_wifi_status", "get_wifi_status", "get_location_service_status",
                       "get_cellular_service_status"],
             "agent_names": {"end_conversation": "user_tools_0", "set_wifi_status": "setting_8",
                             "get_wifi_status": "setting_4", "get_location_service_status": "setting_2",
                             "get_cellular_service_status": "setting_0"},
             "categories": ["SINGLE_TOOL_CALL", "SINGLE_USER_TURN", "STATE_DEPENDENCY", "THREE_DISTRACTION_TOOLS",
                            "TOOL_NAME_SCRAMBLED"]}


def _data() -> dict[str, Any]:
    """The fixture with the reference's tie-break of the wifi bases: a third distraction tool our ranking
    would not pick, and the name-scrambled variant."""
    data = fixture_data()
    three = next(item for item in data["items"] if item["name"] == "wifi_on_3_distraction_tools")
    three["tools"] = SCRAMBLED["tools"]
    data["items"].append(SCRAMBLED)
    return data


def offered(scenario: Any, variant: str) -> list[tuple[str, str]]:
    return sorted((tool.tool, tool.name) for tool in tools_for(Role.AGENT, scenario, REGISTRY, variant))


def test_the_reference_s_distraction_tools_and_names_are_carried_over() -> None:
    base = next(base for base in group_bases(_data()) if base.name == "wifi_on")
    assert reference_augmentations(base) == {
        "distraction_tools": {3: ["get_cellular_service_status", "get_location_service_status", "get_wifi_status"]},
        "scrambled_names": {"get_cellular_service_status": "setting_0", "get_location_service_status": "setting_2",
                            "get_wifi_status": "setting_4", "set_wifi_status": "setting_8"}}


def test_an_imported_file_offers_the_reference_s_set_in_each_variant(tmp_path: Path) -> None:
    write(build(_data(), tmp_path), tmp_path)
    scenario = load_scenario(tmp_path / "wifi_on.yaml")
    three = [(name, name) for name in ("get_cellular_service_status", "get_location_service_status",
                                       "get_wifi_status", "set_wifi_status")]
    assert offered(scenario, "3_distraction_tools") == three
    assert offered(scenario, "tool_name_scrambled") == [
        ("get_cellular_service_status", "setting_0"), ("get_location_service_status", "setting_2"),
        ("get_wifi_status", "setting_4"), ("set_wifi_status", "setting_8")]
    # without the fields, our own ranking and naming: another third tool, named `<domain>_<k>` by our order
    ours = scenario.model_copy(update={"distraction_tools": {}, "scrambled_names": {}})
    assert ("set_cellular_service_status", "set_cellular_service_status") in offered(ours, "3_distraction_tools")
    assert ("set_cellular_service_status", "setting_5") in offered(ours, "tool_name_scrambled")


def test_a_name_scrambled_variant_without_names_stops_the_import() -> None:
    data = _data()
    data["items"][-1] = {**SCRAMBLED, "agent_names": {"set_wifi_status": "setting_8"}}
    base = next(base for base in group_bases(data) if base.name == "wifi_on")
    with pytest.raises(ConversionError, match=r"wifi_on: the name-scrambled variant gives no name for "
                                              r"\['get_cellular_service_status', 'get_location_service_status', "):
        reference_augmentations(base)


@pytest.mark.parametrize(("fields", "message"), [
    ({"distraction_tools": {3: ["get_wifi"]}}, r"field distraction_tools\.3\[0\]: unknown tool 'get_wifi'"),
    ({"scrambled_names": {"set_wifi_status": "setting_8"}, "distraction_tools": {3: ["get_wifi_status"]}},
     r"field scrambled_names: no name for 'get_wifi_status', which the tool_name_scrambled variant offers"),
])
def test_the_loader_names_a_bad_augmentation_field(fields: dict[str, Any], message: str) -> None:
    data = {"name": "wifi", "categories": ["single_tool_call"], "user": {"goal": "Wifi on.", "first_message": "On"},
            "tools": ["set_wifi_status"], **fields}
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(data, Path("scenarios/x/wifi.yaml"), REGISTRY)
