"""End to end: the static report and the pytest-html report rendered by a real headless Chromium.

Each page is loaded once with --dump-dom (the DOM after scripts ran, so the listing filter and
pytest-html's JavaScript have done their work) and --screenshot. Screenshots go to
tests/e2e/screenshots/ (ignored by git), or to TOOLSANDBOX_SCREENSHOT_DIR when set, to look at.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.test_plugin_support import run, write_suite

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(os.environ.get("TOOLSANDBOX_SCREENSHOT_DIR") or Path(__file__).parent / "screenshots")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs the Debian package chromium at "
                                "/usr/bin/chromium (apt-get install chromium); .ci/run installs it")


def render(url: str, name: str, profile: Path, height: int = 1600) -> str:
    """The page's DOM after load (scripts ran), and a screenshot of its first screen in SHOTS/name."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    screenshot = SHOTS / name
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               f"--window-size=1280,{height}", "--virtual-time-budget=5000", f"--screenshot={screenshot}",
               "--dump-dom", url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert screenshot.stat().st_size > 10_000, "the screenshot is (nearly) empty"
    return done.stdout


def test_static_and_pytest_html_reports_render(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "--agent", "reference", "--agent", "unhelpful", "--trials", "2", "--augment", "base,all_tools",
        "--html=html/report.html", "--self-contained-html").assert_outcomes(passed=8, failed=24)
    report = pytester.path / "toolsandbox-report"
    profile = pytester.path / "chromium-profile"

    index = render((report / "index.html").as_uri(), "leaderboard.png", profile)
    assert "<th data-agent=\"reference\">agent reference</th><th data-agent=\"unhelpful\">agent unhelpful</th>" in index
    assert 'class="cell best"' in index and 'href="categories/state_dependency.html"' in index
    assert "50.0%" in index  # the reference agent passes 2 of its 4 tasks

    heatmaps = re.findall(r'<figure class="heatmap" data-agent="([^"]+)"><svg', index)
    assert heatmaps == ["reference", "unhelpful"]
    assert '<figure class="pass-k"><svg' in index
    # the charts alone, for a screenshot that shows them whole
    figures = re.findall(r"<figure class='(?:heatmap|pass-k)'.*?</figure>", (report / "index.html").read_text(), re.S)
    charts_page = pytester.path / "charts.html"
    charts_page.write_text(f"<!DOCTYPE html><meta charset='utf-8'><body style='display:flex;flex-wrap:wrap'>"
                           f"{''.join(figures)}</body>", encoding="utf-8")
    charts = render(charts_page.as_uri(), "heatmap.png", profile, height=900)
    assert charts.count("<svg") == 3 and ">all_tools<" in charts

    listing = render((report / "all.html").as_uri() + "#outcome=failed&agent=reference", "listing-filtered.png",
                     profile, height=900)
    rows = re.findall(r"<tr data-outcome=\"(\w+)\"[^>]*data-agent=\"(\w+)\"[^>]*?( hidden=\"\")?>", listing)
    assert len(rows) == 32
    shown = [(outcome, agent) for outcome, agent, hidden in rows if not hidden]
    assert shown == [("failed", "reference")] * 8  # half and refuse, two variants, two trials each
    assert "8 of 32 items" in listing

    page = report / "trajectories/scenarios/settings/refuse/reference-base-t1.html"
    trajectory = render(page.as_uri(), "trajectory-failed.png", profile, height=1300)
    assert 'class="ts-conversation"' in trajectory and "<b>User goal:</b> Turn wifi off." in trajectory
    assert "Switch my wifi off." in trajectory and "I would rather not touch your settings." in trajectory
    assert "<td>settings: wifi=false</td><td><span class=\"ts-bad\">not reached</span>" in trajectory

    html = render((pytester.path / "html" / "report.html").as_uri(), "pytest-html.png", profile)
    assert 'data-column-type="category"' in html
    assert '<td class="col-category">single_tool_call, state_dependency</td>' in html
    assert 'class="ts-trajectory"' in html  # the per-test extra, rendered by pytest-html's script
    assert "ToolSandbox per-category results" in html


def test_comparison_page_renders(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "--trials", "2")
    wifi = pytester.path / "scenarios/settings/wifi_off.yaml"
    wifi.write_text(wifi.read_text().replace("wifi: false", "cellular: false"))  # passed before, fails now
    half = pytester.path / "scenarios/settings/half.yaml"
    half.write_text(half.read_text() + "threshold: 0.5\n")  # failed before, passes now
    run(pytester, "--trials", "2", "--baseline", "toolsandbox-report/summary.json")
    page = pytester.path / "toolsandbox-report" / "comparison.html"
    comparison = render(page.as_uri(), "comparison.png", pytester.path / "chromium-profile", height=1200)
    assert "<h3>Regressions (passed in A, fail in B) (1)</h3>" in comparison
    assert "<h3>Improvements (failed in A, pass in B) (1)</h3>" in comparison
    assert re.search(r'<td class="num delta-down">-1\.000</td>', comparison)
    assert "<th>p sim</th>" in comparison and "<th>verdict</th>" in comparison  # the gate's tests, per group
