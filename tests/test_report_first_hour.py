"""Report details a first reader needs: a legend of the diagnosis codes wherever codes show, a banner on
the trajectory page of a baseline regression, no baseline change for an agent the baseline does not gate,
filter presets in any case, and the pass^k legend beside the curves."""

from __future__ import annotations

import re
import shutil

import pytest

from pytest_toolsandbox.report.ci.gate_text import change_counts, plural
from pytest_toolsandbox.report.pages.charts import pass_k_curve
from pytest_toolsandbox.report.text.codes import MEANINGS, diagnosis_codes, legend_html
from tests.test_plugin_support import records_by_id, run, summary, write_suite


def test_counts_are_pluralised() -> None:
    assert [plural(n, "regression") for n in (0, 1, 2)] == ["0 regressions", "1 regression", "2 regressions"]
    assert change_counts({"regression": [], "improvement": ["a"] * 23, "known_failure": ["b"]}) == (
        "0 regressions, 23 improvements, 1 known failure")


def test_the_legend_explains_the_codes_shown_and_only_those() -> None:
    html = legend_html(code for code in ("IAC", "PREMATURE_END"))  # a generator, as the pages pass it
    assert "<dt>IAC</dt>" in html and "<dt>PREMATURE_END</dt>" in html and "<dt>IFE</dt>" not in html
    assert legend_html([]) == ""
    assert all(f"<dt>{code}</dt>" in legend_html() for code in MEANINGS)
    record = {"diagnosis": [{"code": "IAV"}, {"code": "IAC"}, {"code": "IAV"}]}
    assert diagnosis_codes(record) == ["IAV", "IAC"]


def test_listings_and_trajectory_pages_carry_the_legend_and_the_regression(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester)
    shutil.copy(pytester.path / "toolsandbox-report" / "summary.json", pytester.path / "baseline.json")
    run(pytester, "--agent", "unhelpful", "--baseline", "baseline.json")
    report = pytester.path / "toolsandbox-report"
    listing = (report / "all.html").read_text()
    assert "<summary>Diagnosis codes</summary>" in listing and "<dt>IAC</dt>" in listing
    records = records_by_id(summary(pytester))
    regression = records["scenarios/settings/wifi_off.yaml::test_scenario[base]"]
    known = records["scenarios/settings/half.yaml::test_scenario[base]"]
    page = (report / regression["page"]).read_text()
    assert "Baseline regression: this task passed in the baseline and fails now." in page
    assert "<summary>Diagnosis codes</summary>" in page and "<dt>IAC</dt>" in page
    assert "Known failure: this task also failed in the baseline" in (report / known["page"]).read_text()


def test_an_ungated_agent_has_no_baseline_change(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    run(pytester)
    shutil.copy(pytester.path / "toolsandbox-report" / "summary.json", pytester.path / "baseline.json")
    run(pytester, "--agent", "reference", "--agent", "unhelpful", "--baseline", "baseline.json")
    changes = {(r["agent_spec"], r["change"]) for r in summary(pytester)["records"]}
    assert ("unhelpful", None) in changes and not any(agent == "unhelpful" and change for agent, change in changes)
    assert ("reference", "unchanged") in changes


def test_filter_presets_match_in_any_case(pytester: pytest.Pytester) -> None:
    """The preset sets a select's value in lower case, the case of its options' values."""
    write_suite(pytester)
    run(pytester, "--agent", "unhelpful")
    listing = (pytester.path / "toolsandbox-report" / "all.html").read_text()
    assert "<option value='iac'>IAC</option>" in listing
    assert 'control.tagName === "SELECT" ? given.trim().toLowerCase() : given' in listing


def test_the_pass_k_legend_sits_beside_the_axes() -> None:
    """The legend's first line starts right of the axes' frame (patch_2 is the axes background)."""
    svg = pass_k_curve({"agent a": {1: 0.1, 2: 0.05}, "agent b": {1: 0.9, 2: 0.8}}, "pass^k", "t")
    frame = re.search(r'id="patch_2">\s*<path d="M ([\d.]+) [\d.]+ \s*L ([\d.]+)', svg)
    legend = re.search(r'id="legend_1">\s*<g id="line2d_\d+">\s*<path d="M ([\d.]+)', svg)
    assert frame and legend and float(legend.group(1)) > float(frame.group(2)) > float(frame.group(1))
