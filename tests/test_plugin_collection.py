"""Collection: node ids, path/-k/--deselect selection, markers with --strict-markers, broken files."""

from __future__ import annotations

import pytest

from tests.test_plugin_support import run, write_suite

ALL_IDS = [
    "scenarios/messaging/wifi_status.yaml::test_scenario[base]",
    "scenarios/settings/half.yaml::test_scenario[base]",
    "scenarios/settings/refuse.yaml::test_scenario[base]",
    "scenarios/settings/wifi_off.yaml::test_scenario[base]",
]


def collected(result: pytest.RunResult) -> list[str]:
    return sorted(line for line in result.outlines if "::test_scenario[" in line)


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    write_suite(pytester)
    return pytester


def test_ids_contain_path_and_variant(suite: pytest.Pytester) -> None:
    assert collected(run(suite, "--co", "-q")) == ALL_IDS


def test_sessions_that_run_no_scenario_write_no_report(suite: pytest.Pytester) -> None:
    """--collect-only, --fixtures and --setup-plan must not replace the last run's summary.json."""
    for arguments in (["--co"], ["--fixtures"], ["--setup-plan"]):
        run(suite, *arguments)
        assert not (suite.path / "toolsandbox-report").exists(), arguments
    suite.makepyfile(test_other="def test_other():\n    pass\n")
    run(suite, "test_other.py").assert_outcomes(passed=1)
    assert not (suite.path / "toolsandbox-report").exists()


def test_scenario_directories_may_contain_spaces_and_commas(suite: pytest.Pytester) -> None:
    (suite.path / "scenarios").rename(suite.path / "my scenarios, v2")
    assert len(collected(run(suite, "--co", "-q", "--scenarios", "my scenarios, v2"))) == 4


def test_ids_with_variants_trials_and_agents(suite: pytest.Pytester) -> None:
    result = run(suite, "--co", "-q", "scenarios/messaging", "--augment", "base,tool_name_scrambled",
                 "--trials", "2", "--agent", "reference", "--agent", "unhelpful")
    assert collected(result) == sorted(
        f"scenarios/messaging/wifi_status.yaml::test_scenario[{agent}-{variant}-t{trial}]"
        for agent in ("reference", "unhelpful") for variant in ("base", "tool_name_scrambled") for trial in (1, 2))


def test_selection_by_path_file_keyword_and_deselect(suite: pytest.Pytester) -> None:
    assert collected(run(suite, "--co", "-q", "scenarios/settings")) == ALL_IDS[1:]
    assert collected(run(suite, "--co", "-q", "scenarios/settings/half.yaml")) == [ALL_IDS[1]]
    assert collected(run(suite, "--co", "-q", "-k", "wifi and not status")) == [ALL_IDS[3]]
    assert collected(run(suite, "--co", "-q", "--deselect", ALL_IDS[2], "scenarios/settings")) == [
        ALL_IDS[1], ALL_IDS[3]]


def test_augment_all_gives_the_eight_variants(suite: pytest.Pytester) -> None:
    ids = collected(run(suite, "--co", "-q", "--augment", "all", "scenarios/messaging"))
    assert len(ids) == 8
    assert ids[0].startswith("scenarios/messaging/wifi_status.yaml::test_scenario[")


def test_markers_select_with_strict_markers(suite: pytest.Pytester) -> None:
    result = run(suite, "--co", "-q", "--strict-markers", "--augment", "base,all_tools",
                 "-m", "state_dependency and not all_tools_available")
    assert collected(result) == [ALL_IDS[1], ALL_IDS[2]]
    result = run(suite, "--co", "-q", "--strict-markers", "--augment", "base,all_tools",
                 "-m", "state_dependency and not all_tools")  # the variant's name works too
    assert collected(result) == [ALL_IDS[1], ALL_IDS[2]]
    result = run(suite, "--co", "-q", "--strict-markers", "-m", "canonicalization")
    assert collected(result) == [ALL_IDS[0]]
    markers = run(suite, "--markers").stdout.str()
    for name in ("toolsandbox:", "state_dependency:", "insufficient_information:", "tool_name_scrambled:"):
        assert f"@pytest.mark.{name}" in markers


def test_yaml_outside_the_scenario_directories_is_ignored(suite: pytest.Pytester) -> None:
    (suite.path / "config").mkdir()
    (suite.path / "config" / "ci.yaml").write_text("jobs: [1, 2]\n")
    assert collected(run(suite, "--co", "-q")) == ALL_IDS


def test_broken_file_is_a_collection_error_naming_file_field_and_fix(suite: pytest.Pytester) -> None:
    write_suite(suite, {"scenarios/settings/broken.yaml": "categories: [state_dependancy]\n"
                        "user: {goal: x, first_message: y}\ntools: [set_wifi_status]\n"})
    result = run(suite, "--co", "-q")
    output = result.stdout.str()
    assert "ERROR collecting scenarios/settings/broken.yaml" in output
    assert "scenarios/settings/broken.yaml: field categories[0]:" in output
    assert "state_dependency" in output  # the allowed values, i.e. the fix
    assert "Traceback" not in output
    assert collected(result) == ALL_IDS  # the other scenarios are still collected

    ran = run(suite, "--continue-on-collection-errors", "scenarios/settings/wifi_off.yaml",
              "scenarios/settings/broken.yaml")
    ran.assert_outcomes(passed=1, errors=1)


def test_option_errors_are_usage_errors(suite: pytest.Pytester) -> None:
    result = run(suite, "--co", "--augment", "sideways")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown variant 'sideways'" in result.stderr.str()
    result = run(suite, "--co", "--agent", "no_such_agent")
    assert "--agent no_such_agent: unknown agent" in result.stderr.str()
