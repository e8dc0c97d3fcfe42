"""Shared material for the plugin's pytester tests: a small scenario suite and run helpers.

The suite is four scenario files in three folders. `settings/wifi_off` and `messaging/wifi_status`
pass with the reference agent; `settings/half` meets one of its two milestones (similarity 0.5);
`settings/refuse` meets none (the reference dialogue declines).
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import pytest

WIFI_OFF = """
categories: [single_tool_call, single_user_turn]
user: {goal: Turn wifi off., first_message: Please turn off my wifi.}
tools: [set_wifi_status]
milestones:
  wifi_off: {world: {settings: {wifi: false}}}
reference:
  - set_wifi_status(on=false)
  - agent: Wifi is off now.
"""

WIFI_STATUS = """
categories: [single_tool_call, single_user_turn, canonicalization]
user: {goal: Know whether wifi is on., first_message: "Is my wifi on?"}
tools: [get_wifi_status]
milestones:
  asked: {tool_call: {get_wifi_status: {}}}
reference:
  - get_wifi_status()
  - agent: Yes, your wifi is on.
"""

HALF = """
categories: [multiple_tool_call, state_dependency]
user: {goal: Turn wifi and cellular off., first_message: Turn off wifi and cellular please.}
tools: [set_wifi_status, set_cellular_service_status]
milestones:
  wifi_off: {world: {settings: {wifi: false}}}
  cellular_off: {world: {settings: {cellular: false}}}
reference:
  - set_wifi_status(on=false)
  - agent: Wifi is off.
"""

REFUSE = """
categories: [single_tool_call, state_dependency]
user: {goal: Turn wifi off., first_message: Switch my wifi off.}
tools: [set_wifi_status]
milestones:
  wifi_off: {world: {settings: {wifi: false}}}
reference:
  - agent: I would rather not touch your settings.
"""

SUITE = {
    "scenarios/settings/wifi_off.yaml": WIFI_OFF,
    "scenarios/messaging/wifi_status.yaml": WIFI_STATUS,
    "scenarios/settings/half.yaml": HALF,
    "scenarios/settings/refuse.yaml": REFUSE,
}

# Plugins installed in the environment that these runs do not need (they only slow them down).
QUIET = ("-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:hypothesispytest", "-p", "no:anyio")


def write_suite(pytester: pytest.Pytester, files: dict[str, str] | None = None) -> None:
    """Write scenario files (default: the whole suite) into pytester's directory."""
    for relative, text in (SUITE if files is None else files).items():
        path = pytester.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip(), encoding="utf-8")


def run(pytester: pytest.Pytester, *args: str, cache: bool = False, **options: Any) -> pytest.RunResult:
    """Run pytest in-process on the written suite (`options` go to pytester's inline run)."""
    quiet = QUIET if not cache else QUIET[2:]
    return pytester.runpytest(*quiet, *args, **options)


def summary(pytester: pytest.Pytester, report_dir: str = "toolsandbox-report") -> dict[str, Any]:
    return json.loads((pytester.path / report_dir / "summary.json").read_text(encoding="utf-8"))


def records_by_id(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {record["id"]: record for record in data["records"]}


def xzcat(path: Path) -> str:
    """A compressed cassette's YAML text, as `xzcat PATH` shows it."""
    return lzma.decompress(path.read_bytes()).decode("utf-8")
