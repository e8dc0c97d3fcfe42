"""The static report's pages: leaderboard, charts, listings, trajectory pages and run comparison."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolsandbox.cli import main
from pytest_toolsandbox.report.pages.charts import heatmap
from pytest_toolsandbox.report.pages.listing import items_table
from tests.test_plugin_support import run, write_suite

REPORT = "toolsandbox-report"
REFUSE_PAGE = "trajectories/scenarios/settings/refuse"


def _cells(index: str, row_label: str) -> list[str]:
    """The <td> openings of one leaderboard row (the row whose first cell links `row_label`)."""
    row = re.search(r"<tr class='kind-[a-z]+'><td><a href='[^']*'>" + re.escape(row_label) + r"</a></td>(.*?)</tr>",
                    index)
    assert row, row_label
    return re.findall(r"<td class='[^']*'[^>]*data-agent='[^']*'", row.group(1))


def _links_resolve(page: Path) -> None:
    for link in re.findall(r"href='([^'#]+)", page.read_text(encoding="utf-8")):
        assert (page.parent / link).resolve().is_file(), (page, link)


@pytest.fixture(scope="module")
def two_agents(pytester_module: Path) -> Path:
    return pytester_module


@pytest.fixture(scope="module")
def pytester_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of the suite with two agents and two trials, shared by the read-only tests below."""
    root = tmp_path_factory.mktemp("site")
    from tests.test_plugin_support import SUITE

    for relative, text in SUITE.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text.lstrip(), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--agent", "reference",
                           "--agent", "unhelpful", "--trials", "2", "--augment", "base,all_tools"],
                          cwd=root, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout[-3000:]  # failures, no errors
    return root / REPORT


def test_leaderboard_has_agents_as_columns_and_highlights_the_best(two_agents: Path) -> None:
    index = (two_agents / "index.html").read_text(encoding="utf-8")
    assert "<th data-agent='reference'>agent reference</th><th data-agent='unhelpful'>agent unhelpful</th>" in index
    all_row = _cells(index, "all")
    assert all_row == ["<td class='cell best' style='background:hsl(60,55%,94%)' data-agent='reference'",
                       "<td class='cell' style='background:hsl(0,55%,94%)' data-agent='unhelpful'"]
    assert index.count("<tr class='kind-category'>") == 5 and index.count("<tr class='kind-variant'>") == 2
    assert "pass^2 " in index  # two trials
    assert "tokens" not in index and "cost" not in index  # offline agents report no usage
    assert re.search(r"<dt>duration</dt><dd>[0-9.]+ s</dd>", index)
    assert "<dt>git</dt><dd>not a git checkout</dd>" in index
    _links_resolve(two_agents / "index.html")


def test_index_embeds_a_heatmap_per_agent_and_the_pass_k_curve(two_agents: Path) -> None:
    index = (two_agents / "index.html").read_text(encoding="utf-8")
    heatmaps = re.findall(r"<figure class='heatmap' data-agent='([^']+)'><svg", index)
    assert heatmaps == ["reference", "unhelpful"]
    assert "<figure class='pass-k'><svg" in index
    assert ">state_dependency<" in index and ">all_tools<" in index  # axis labels are text, not paths
    assert not re.search(r"(src|href)=['\"](https?:)?//", index.replace("http://www.w3.org", ""))


def test_charts_are_deterministic_svg() -> None:
    first = heatmap(["a", "b"], ["base", "all_tools"], [[1.0, 0.5], [None, 0.0]], "t", "x")
    assert first == heatmap(["a", "b"], ["base", "all_tools"], [[1.0, 0.5], [None, 0.0]], "t", "x")
    assert first.startswith("<svg") and ">50%<" in first and ">—<" in first
    assert first != heatmap(["a", "b"], ["base", "all_tools"], [[1.0, 0.5], [None, 0.0]], "t", "y")


def test_listing_rows_carry_their_facets_and_the_script(two_agents: Path) -> None:
    listing = (two_agents / "all.html").read_text(encoding="utf-8")
    assert "<select data-filter='outcome'>" in listing and "<input type='search' data-filter='text'" in listing
    assert "data-code='" in listing and "<option value='premature_end'>PREMATURE_END</option>" in listing
    assert re.search(r"<tr data-outcome='failed' data-category='single_tool_call\|state_dependency' "
                     r"data-variant='base' data-agent='reference' data-code='[^']*'>", listing)
    assert "<script>" in listing and "URLSearchParams" in listing
    assert "<span class='count'>32 items</span>" in listing


def test_tokens_and_cost_columns_appear_only_when_known() -> None:
    record = {"id": "x", "scenario": "s", "path": "s.yaml", "categories": ["single_tool_call"], "variant": "base",
              "trial": 1, "agent": "a", "outcome": "passed", "score": 1.0, "turn_count": 2, "diagnosis": [],
              "tokens": {"agent": None, "user": None}}
    plain = items_table([record], "")
    assert "<th>tokens</th>" not in plain and "<th>cost</th>" not in plain
    known = {**record, "tokens": {"agent": {"input_tokens": 100, "output_tokens": 20, "requests": 2},
                                  "user": {"input_tokens": 25, "output_tokens": 5, "requests": 1}},
             "spend_usd": {"agent": 0.0012, "user": 0.0003, "total": 0.0015}}
    table = items_table([record, known], "")
    assert "<th>tokens</th><th>cost</th>" in table
    assert "data-sort='150'>150</td>" in table and ">$0.0015</td>" in table


def test_trajectory_page_shows_goal_expected_not_reached_and_neighbours(two_agents: Path) -> None:
    page = two_agents / REFUSE_PAGE / "unhelpful-base-t1.html"
    text = page.read_text(encoding="utf-8")
    assert "<b>User goal:</b> Turn wifi off." in text
    assert "<td>settings: wifi=false</td><td><span class='ts-bad'>not reached</span>" in text
    assert "Reference dialogue (2 steps)" in text and "user: Switch my wifi off." in text
    assert "rel='prev'" in text and "rel='next'" in text
    assert "↑ category state_dependency</a>" in text
    assert "ground truth</th><td>precision n/a" in text  # no calls: n/a, not 1.00
    _links_resolve(page)


PAGES_BEFORE_THE_END = """
import hashlib
import json
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    pages = {str(page): hashlib.sha256(page.read_bytes()).hexdigest()
             for page in Path("toolsandbox-report/trajectories").rglob("*.html")}
    Path("pages-before-the-end.json").write_text(json.dumps(pages))
"""


def _pages(root: Path) -> dict[str, str]:
    import hashlib

    return {str(page.relative_to(root)): hashlib.sha256(page.read_bytes()).hexdigest()
            for page in (root / REPORT / "trajectories").rglob("*.html")}


@pytest.mark.parametrize("workers", [0, 2])
def test_trajectory_pages_are_written_during_the_run_as_the_end_would_write_them(pytester: pytest.Pytester,
                                                                                  workers: int) -> None:
    """A page is written once its item and both neighbours have finished (under xdist, in whatever
    order they do): by the session's end every page exists, and the end rewrites none (a page's links
    were right when it was written)."""
    import json

    write_suite(pytester)
    pytester.makeconftest(PAGES_BEFORE_THE_END)
    if workers:
        pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", str(workers), "--augment", "base,all_tools"
                                      ).assert_outcomes(passed=4, failed=4)
    else:
        run(pytester, "--augment", "base,all_tools").assert_outcomes(passed=4, failed=4)
    before = json.loads((pytester.path / "pages-before-the-end.json").read_text())
    after = _pages(pytester.path)
    assert len(after) == 8 and before == after
    for page in after:
        _links_resolve(pytester.path / page)


def test_a_run_stopped_early_links_its_pages_to_the_items_that_ran(pytester: pytest.Pytester) -> None:
    """-x: the items after the first failure never run, so the page of the last item that ran, written
    at the end, has no next link, and every link resolves."""
    write_suite(pytester)
    run(pytester, "--augment", "base,all_tools", "-x").assert_outcomes(passed=2, failed=1)
    pages = sorted(_pages(pytester.path))
    assert len(pages) == 3
    texts = {page: (pytester.path / page).read_text(encoding="utf-8") for page in pages}
    assert [("rel='prev'" in text, "rel='next'" in text) for text in texts.values()].count((True, False)) == 1
    for page in pages:
        _links_resolve(pytester.path / page)


def test_compare_html_lists_changes_with_links_to_both_runs(pytester: pytest.Pytester,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    write_suite(pytester)
    run(pytester, "--report-dir", "a")
    half = pytester.path / "scenarios/settings/half.yaml"
    half.write_text(half.read_text() + "threshold: 0.5\n")  # half now passes: an improvement
    wifi = pytester.path / "scenarios/settings/wifi_off.yaml"
    wifi.write_text(wifi.read_text().replace("wifi: false", "cellular: false"))  # wifi_off now fails: a regression
    run(pytester, "--report-dir", "b")
    out = pytester.path / "cmp"
    assert main(["compare", "a/summary.json", "b/summary.json", "--html", str(out)]) == 0
    assert f"comparison page: {out / 'comparison.html'}" in capsys.readouterr().out
    text = (out / "comparison.html").read_text(encoding="utf-8")
    assert "<h3>Regressions (passed in A, fail in B) (1)</h3>" in text
    assert re.search(r"wifi_off\.yaml::base</small></td><td>base</td><td class='num'>1\.000</td>"
                     r"<td class='num'>0\.000</td><td class='num delta-down'>-1\.000</td>"
                     r"<td><a href='\.\./a/trajectories/scenarios/settings/wifi_off/base\.html'>A</a> · "
                     r"<a href='\.\./b/trajectories/scenarios/settings/wifi_off/base\.html'>B</a></td>", text)
    assert "<h3>Improvements (failed in A, pass in B) (1)</h3>" in text and "half.yaml::base" in text
    assert "<h2>Per-group deltas (B − A)</h2>" in text and "<th>p sim</th>" in text  # the gate's tests, any trials
    assert "<p class='ts-verdict'>No group regressed.</p>" in text  # one flip each way among 4 tasks
    assert text.count("too few pairs (") == 7  # all, 5 categories and the variant: at most 4 tasks each
    _links_resolve(out / "comparison.html")


def test_baseline_run_writes_the_comparison_page(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester, "--trials", "2")
    wifi = pytester.path / "scenarios/settings/wifi_off.yaml"
    wifi.write_text(wifi.read_text().replace("wifi: false", "cellular: false"))
    result = run(pytester, "--trials", "2", "--baseline", f"{REPORT}/summary.json")
    result.assert_outcomes(passed=2, failed=2, xfailed=4)
    report = pytester.path / REPORT
    text = (report / "comparison.html").read_text(encoding="utf-8")
    assert "<h3>Regressions (passed in A, fail in B) (1)</h3>" in text
    assert "A&#x27;s trajectory pages were replaced by this run" in text or "A's trajectory pages were" in text
    assert "<th>p sim</th><th>pass A</th><th>pass B</th><th>Δpass</th><th>p pass</th><th>verdict</th>" in text
    assert "<a href='comparison.html'>Comparison page</a>" in (report / "index.html").read_text(encoding="utf-8")
    _links_resolve(report / "comparison.html")


def test_loading_the_plugin_imports_no_plotting_library() -> None:
    code = "import sys, pytest_toolsandbox.plugin; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "False"
