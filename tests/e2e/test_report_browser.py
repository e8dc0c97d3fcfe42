"""End to end: the static report and the pytest-html report rendered by a real headless Chromium.

Each page is loaded once with --dump-dom (the DOM after scripts ran, so pytest-html's JavaScript
rendered its rows) and --screenshot. Screenshots are kept in the test's directory; set
TOOLSANDBOX_SCREENSHOT_DIR to copy them somewhere to look at.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_plugin_support import run, write_suite

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs the Debian package chromium at "
                                "/usr/bin/chromium (apt-get install chromium); .ci/run installs it")


def render(page: Path, screenshot: Path, profile: Path) -> str:
    """The page's DOM after load, and a screenshot of it."""
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               "--window-size=1280,1600", "--virtual-time-budget=5000", f"--screenshot={screenshot}",
               "--dump-dom", page.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert screenshot.stat().st_size > 10_000, "the screenshot is (nearly) empty"
    keep = os.environ.get("TOOLSANDBOX_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(screenshot, Path(keep) / screenshot.name)
    return done.stdout


def test_static_and_pytest_html_reports_render(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "--html=html/report.html", "--self-contained-html").assert_outcomes(passed=2, failed=2)
    report = pytester.path / "toolsandbox-report"
    shots, profile = pytester.path / "screenshots", pytester.path / "chromium-profile"
    shots.mkdir()

    index = render(report / "index.html", shots / "index.png", profile)
    assert 'class="ts-categories"' in index
    assert "category state_dependency" in index and 'href="categories/state_dependency.html"' in index
    assert "50.0%" in index  # 2 of 4 items pass

    category = render(report / "categories" / "state_dependency.html", shots / "category.png", profile)
    assert 'href="../trajectories/scenarios/settings/refuse/base.html"' in category

    trajectory = render(report / "trajectories/scenarios/settings/refuse/base.html", shots / "trajectory.png",
                        profile)
    assert 'class="ts-conversation"' in trajectory
    assert "Switch my wifi off." in trajectory and "I would rather not touch your settings." in trajectory
    assert "<td>wifi_off</td>" in trajectory  # the milestone table

    html = render(pytester.path / "html" / "report.html", shots / "pytest-html.png", profile)
    assert 'data-column-type="category"' in html
    assert '<td class="col-category">single_tool_call, state_dependency</td>' in html
    assert 'class="ts-trajectory"' in html  # the per-test extra, rendered by pytest-html's script
    assert "ToolSandbox per-category results" in html
