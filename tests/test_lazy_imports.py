"""Installing the plugin costs a project nothing while no scenario is collected: a plain test run
must not import the scoring, scenario or report stack, nor their heavy libraries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HEAVY = ("polars", "scipy", "numpy", "rouge_score", "nltk", "pydantic", "yaml", "rapidfuzz", "networkx",
         "pint", "vcr", "matplotlib", "pytest_toolsandbox.evaluation", "pytest_toolsandbox.scenario",
         "pytest_toolsandbox.report", "pytest_toolsandbox.world", "pytest_toolsandbox.tools",
         "pytest_toolsandbox.running.episode", "pytest_toolsandbox.roles.scripted")

CONFTEST = """
import gc, json, sys

def pytest_unconfigure(config):
    with open("modules.json", "w") as out:
        json.dump(sorted(sys.modules), out)
    with open("frozen.json", "w") as out:
        json.dump(gc.get_freeze_count(), out)
"""


def _loaded(pytester: pytest.Pytester, *args: str) -> set[str]:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_plain="""
        import pytest

        @pytest.mark.parametrize("n", range(8))
        def test_number(n):
            assert n + 1 > n
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=8)
    modules = set(json.loads((pytester.path / "modules.json").read_text()))
    assert "pytest_toolsandbox.plugin" in modules  # the plugin was active
    return modules


def _heavy(modules: set[str]) -> list[str]:
    return _heavy_among(modules, HEAVY)


def test_a_plain_test_run_imports_no_scoring_scenario_or_report_module(pytester: pytest.Pytester) -> None:
    assert _heavy(_loaded(pytester)) == []
    assert json.loads((pytester.path / "frozen.json").read_text()) == 0  # its garbage collector is untouched


def test_nor_does_it_with_options_that_need_no_scenario(pytester: pytest.Pytester) -> None:
    modules = _loaded(pytester, "--augment", "all", "--agent", "unhelpful", "--user", "scripted", "--trials", "2")
    assert _heavy(modules) == []
    assert not (pytester.path / "toolsandbox-report").exists()


def test_options_are_still_registered_with_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*ToolSandbox scenario evaluation*", "*--augment*", "*--baseline*"])
    markers = pytester.runpytest_subprocess("--markers")
    markers.stdout.fnmatch_lines(["*insufficient_information*", "*all_tools_available*"])


SCORER = ("nltk", "scipy.optimize", "scipy.stats", "rouge_score.tokenizers", "pytest_toolsandbox.evaluation.score",
          "pytest_toolsandbox.report.writing.collector", "matplotlib")


def test_collecting_scenarios_leaves_the_scorer_unloaded(pytester: pytest.Pytester) -> None:
    """Collection compiles every milestone (to fail early on a bad one) but scores nothing, so the
    scorer's heavy half loads with the first trajectory: an API-bound run sends its first requests
    a second sooner."""
    pytester.makeconftest(CONFTEST)
    shipped = sorted((Path(__file__).parents[1] / "scenarios" / "messaging").glob("*.yaml"))[:3]
    (pytester.path / "scenarios").mkdir()
    for path in shipped:
        (pytester.path / "scenarios" / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only", "-q", "--augment", "all")
    result.stdout.fnmatch_lines([f"*{len(shipped) * 8} tests collected*"])
    modules = set(json.loads((pytester.path / "modules.json").read_text()))
    assert "pytest_toolsandbox.evaluation.constraints" in modules  # the milestones were compiled
    assert _heavy_among(modules, SCORER) == []
    assert json.loads((pytester.path / "frozen.json").read_text()) > 10_000  # collection's objects, see plugin


def _heavy_among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in names))


def test_the_light_vocabulary_names_exactly_the_variants_and_categories_the_engine_knows() -> None:
    from pytest_toolsandbox.basics.vocabulary import CATEGORIES, VARIANT_CATEGORIES
    from pytest_toolsandbox.scenario.models import Scenario
    from pytest_toolsandbox.tools.augment import VARIANTS

    assert {name: variant.category for name, variant in VARIANTS.items()} == VARIANT_CATEGORIES
    accepted = Scenario.model_fields["categories"].annotation.__args__[0].__args__
    assert accepted == CATEGORIES
