"""HTML rendering: agent output is data (escaped), pages are self-contained, links resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from pytest_toolsandbox.report.pages.site import write_site, write_trajectory_page
from pytest_toolsandbox.report.pages.trajectory_html import trajectory_fragment
from pytest_toolsandbox.report.results.summary import build_summary
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.roles.scripted import ScriptedUser
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import parse_scenario
from pytest_toolsandbox.world.messages import ToolCall
from pytest_toolsandbox.world.trajectory import Trajectory

HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)>"

SCENARIO = """
name: hostile
categories: [single_tool_call]
user: {goal: Find a contact., first_message: "Find <b>Ada</b>"}
tools: [search_contacts]
reference:
  - agent: ok
"""


class HostileAgent:
    """Says and calls things that would run in a browser if they were not escaped."""

    name = "<i>hostile</i>"

    def __init__(self) -> None:
        self.turn = 0

    def respond(self, messages, tools):
        self.turn += 1
        if self.turn == 1:
            return Turn(tool_calls=(ToolCall(id="1", name="search_contacts", arguments='{"name": "' + HOSTILE.replace(
                "'", "") + '"}'),))
        if self.turn == 2:
            return Turn(tool_calls=(ToolCall(id="2", name=HOSTILE, arguments="{}"),))
        return Turn(text=HOSTILE)


@pytest.fixture(scope="module")
def trajectory() -> Trajectory:
    scenario = parse_scenario(yaml.safe_load(SCENARIO), Path("scenarios/hostile.yaml"))
    return run_episode(scenario, HostileAgent(), ScriptedUser(scenario))


def record(trajectory: Trajectory) -> dict:
    return {"id": "scenarios/hostile.yaml::test_scenario[base]", "scenario": trajectory.scenario,
            "path": "scenarios/hostile.yaml", "categories": ["single_tool_call"], "variant": "base", "trial": 1,
            "agent": trajectory.agent, "outcome": "failed", "score": 0.25, "passed": False, "threshold": 1.0,
            "turn_count": 5, "error": HOSTILE,
            "milestones": [{"name": HOSTILE, "index": 3, "similarity": 0.25, "constraints": {HOSTILE: 0.25}}],
            "minefields": [], "diagnosis": [{"code": "IFN", "count": 1, "per_call": 0.5, "indices": [5],
                                             "detail": HOSTILE}],
            "page": "trajectories/scenarios/hostile/base.html", "change": None}


def test_everything_from_the_run_is_escaped(trajectory: Trajectory) -> None:
    html = trajectory_fragment(trajectory, record(trajectory))
    assert "<script" not in html and "<img" not in html and "<i>hostile" not in html
    assert html.count("&lt;script&gt;") >= 5  # text, call arguments, tool name, milestone, diagnosis, error
    assert "Find &lt;b&gt;Ada&lt;/b&gt;" in html
    assert "result of" in html or "✗" in html  # tool results and errors are shown
    assert "Milestones" in html and "<a href='#m3'>[3]</a>" in html


def test_site_pages_are_self_contained_and_linked(tmp_path: Path, trajectory: Trajectory) -> None:
    item = record(trajectory)
    write_trajectory_page(tmp_path, item["page"], trajectory, item)
    summary = build_summary({"options": {"trials": 1, "augment": ["base"]}, "agents": [HOSTILE]}, [item],
                            trials=1, expected=2, partial=True, baseline=None)
    index = write_site(tmp_path, summary).read_text()
    assert "Partial run" in index and "1 of 2 items finished" in index
    assert "&lt;i&gt;hostile&lt;/i&gt;" in index
    for page in tmp_path.rglob("*.html"):
        text = page.read_text()
        assert not re.search(r"(src|href)=['\"](https?:)?//", text), page  # no network assets
        for link in re.findall(r"href='([^'#]+)'", text):
            assert (page.parent / link).resolve().is_file(), (page, link)
    category = (tmp_path / "categories" / "single_tool_call.html").read_text()
    assert "href='../trajectories/scenarios/hostile/base.html'" in category
