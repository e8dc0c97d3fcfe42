"""Run data in HTML and on the terminal: invisible format characters are shown, links stay relative."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_toolsandbox.cli import main
from pytest_toolsandbox.report.pages.escaping import escape, relative_href, show_invisible
from pytest_toolsandbox.report.pages.listing import items_table
from pytest_toolsandbox.report.text.terminal import terminal_safe
from tests.test_plugin_support import WIFI_OFF, records_by_id, run, summary, write_suite

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200f\ufeff\U000e0041"
"""Every kind of invisible format character the report must show: embeddings, overrides, isolates,
a zero-width space, a directional mark, the byte-order mark and a tag character."""


def test_invisible_characters_become_visible_escapes() -> None:
    shown = show_invisible(f"ok{BIDI}done")
    assert shown == ("ok\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200b\\u200f\\ufeff"
                     "\\U000e0041done")
    assert escape("<b>\u202e</b>") == "&lt;b&gt;\\u202e&lt;/b&gt;"
    assert terminal_safe("\x1b[2J\u2067x") == "\\x1b[2J\\u2067x"
    assert show_invisible("naïve café 日本 👍") == "naïve café 日本 👍"  # visible text is untouched


@pytest.mark.parametrize("page", ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x",
                                  "//evil.example/x.html", "/etc/passwd", "\\\\evil\\x", " javascript:x",
                                  "java\tscript:x", "\u202ejavascript:x", "x:y/z.html", "", None, 3])
def test_links_from_summary_data_must_be_relative_paths(page: object) -> None:
    assert relative_href(page) is None


def test_relative_report_paths_are_links() -> None:
    assert relative_href("trajectories/scenarios/a/base.html") == "trajectories/scenarios/a/base.html"
    assert relative_href("../b/x.html?a=1&b='2'") == "../b/x.html?a=1&amp;b=&#x27;2&#x27;"


def test_the_listing_does_not_link_a_crafted_page() -> None:
    record = {"scenario": "s", "path": "s.yaml", "variant": "base", "trial": 1, "agent": "a", "outcome": "passed",
              "categories": [], "page": "javascript:alert(document.domain)"}
    table = items_table([record], "")
    assert "javascript" not in table and "<a " not in table


def _crafted_run(directory: Path, page: str, score: float) -> Path:
    """A report directory whose summary's one record links `page`, which exists as a file there."""
    directory.mkdir(parents=True)
    record = {"id": "x", "path": "s/x.yaml", "scenario": "x", "variant": "base", "agent": "a", "trial": 1,
              "categories": ["state_dependency"], "score": score, "passed": score == 1.0,
              "outcome": "passed" if score == 1.0 else "failed", "page": page}
    (directory / "summary.json").write_text(json.dumps({"run": {"options": {"trials": 1}}, "records": [record]}))
    target = directory / page
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("<p>page</p>")
    return directory / "summary.json"


def test_compare_html_never_writes_a_script_link(tmp_path: Path) -> None:
    a = _crafted_run(tmp_path / "a", "javascript:alert(document.domain)", 1.0)
    b = _crafted_run(tmp_path / "b", "javascript:alert(1)//x", 0.0)
    assert main(["compare", str(a), str(b), "--html", str(tmp_path / "a")]) == 0  # the page next to A's file
    text = (tmp_path / "a" / "comparison.html").read_text(encoding="utf-8")
    assert not re.search(r"href=['\"]?\s*javascript", text, re.IGNORECASE)
    assert "javascript" not in text and "<h3>Regressions (passed in A, fail in B) (1)</h3>" in text


def test_compare_html_still_links_real_pages(tmp_path: Path) -> None:
    a = _crafted_run(tmp_path / "a", "trajectories/s/x/base.html", 1.0)
    b = _crafted_run(tmp_path / "b", "trajectories/s/x/base.html", 0.0)
    assert main(["compare", str(a), str(b), "--html", str(tmp_path / "cmp")]) == 0
    text = (tmp_path / "cmp" / "comparison.html").read_text(encoding="utf-8")
    assert "<a href='../a/trajectories/s/x/base.html'>A</a>" in text


AGENT = r'''
from pytest_toolsandbox.roles.base import Turn
from pytest_toolsandbox.world.messages import ToolCall

HIDDEN = "\u202e\u2066evil\u2069\u200b"


class Bidi:
    name = "bidi" + HIDDEN

    def __init__(self, scenario=None):
        self.turns = 0

    def respond(self, messages, tools):
        self.turns += 1
        if self.turns == 1:
            return Turn(tool_calls=(ToolCall(id="c1", name="set_wifi_status", arguments='{"on": true}'),))
        return Turn(text="Wifi is off now." + HIDDEN)
'''

CONFTEST = """
import pytest
import bidi_agent


@pytest.fixture
def toolsandbox_agent(toolsandbox_scenario):
    return bidi_agent.Bidi(scenario=toolsandbox_scenario)
"""


def test_bidi_controls_from_an_agent_never_reach_html_or_the_terminal(pytester: pytest.Pytester) -> None:
    write_suite(pytester, {"scenarios/settings/wifi_off.yaml": WIFI_OFF})
    pytester.makepyfile(bidi_agent=AGENT)
    pytester.makeconftest(CONFTEST)
    pytester.syspathinsert()
    result = run(pytester, "-v", "-rA")
    result.assert_outcomes(failed=1)  # the agent turned wifi on: the milestone is missed
    output = result.stdout.str() + result.stderr.str()
    assert "\\u202e" in output
    assert not re.search("[\u202a-\u202e\u2066-\u2069\u200b]", output)
    report = pytester.path / "toolsandbox-report"
    record = next(iter(records_by_id(summary(pytester)).values()))
    assert record["agent"] == "bidi\u202e\u2066evil\u2069\u200b"  # the data itself is kept
    pages = list(report.rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not re.search("[\u202a-\u202e\u2066-\u2069\u200b]", text), page
    trajectory_page = (report / record["page"]).read_text(encoding="utf-8")
    assert "Wifi is off now.\\u202e\\u2066evil\\u2069\\u200b" in trajectory_page
