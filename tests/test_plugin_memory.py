"""What a run keeps in memory per item, and the garbage collector's work over a run's long-lived heap."""

from __future__ import annotations

import gc
import weakref

import pytest

from tests.test_plugin_support import run, write_suite

TRAJECTORIES: list[weakref.ref] = []
"""Weak references to every trajectory the inner runs played (filled by their conftest.py)."""

CONFTEST = """
import gc
import weakref
from pathlib import Path

import pytest

from tests.test_plugin_memory import TRAJECTORIES


@pytest.fixture(autouse=True)
def freeze_count(request):
    Path(request.node.name + ".freeze").write_text(str(gc.get_freeze_count()))
    Path(request.node.name + ".threshold").write_text(str(gc.get_threshold()[2]))


def pytest_runtest_teardown(item):
    trajectory = (item.funcargs or {}).get("toolsandbox_trajectory")
    if trajectory is not None:
        TRAJECTORIES.append(weakref.ref(trajectory))
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    write_suite(pytester)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    return pytester


def test_scenario_runs_freeze_the_collected_heap_and_undo_it_at_the_end(suite: pytest.Pytester) -> None:
    assert gc.get_freeze_count() == 0
    thresholds = gc.get_threshold()
    run(suite, "scenarios/settings/refuse.yaml").assert_outcomes(failed=1)
    assert int((suite.path / "test_scenario[base].freeze").read_text()) > 1000  # modules, scenarios, items
    assert int((suite.path / "test_scenario[base].threshold").read_text()) == max(thresholds[2], 100)
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds  # undone when the session ended
    run(suite, "test_plain.py").assert_outcomes(passed=1)
    assert (suite.path / "test_plain.freeze").read_text() == "0"  # no scenario collected: nothing changes
    assert (suite.path / "test_plain.threshold").read_text() == str(thresholds[2])


def test_what_the_first_item_imported_is_frozen_after_its_report(suite: pytest.Pytester) -> None:
    run(suite, "scenarios/settings/refuse.yaml", "--augment", "base,all_tools").assert_outcomes(failed=2)
    first = int((suite.path / "test_scenario[base].freeze").read_text())
    second = int((suite.path / "test_scenario[all_tools].freeze").read_text())
    # the objects the first item left alive (in a fresh process, the scorer's scipy and nltk among them):
    # without a second freeze the frozen count would not change between items
    assert second > first
    assert gc.get_freeze_count() == 0


EXIT_CONFTEST = """
import atexit
import gc

atexit.register(lambda: open("at_exit.freeze", "w").write(str(gc.get_freeze_count())))
"""


def test_the_heap_is_frozen_once_more_when_the_interpreter_exits(pytester: pytest.Pytester) -> None:
    """Registered before the plugin's exit handler, the conftest's runs after it (atexit is last in, first
    out): the heap it sees is frozen, so finalization's full collections skip it."""
    write_suite(pytester)
    pytester.makeconftest(EXIT_CONFTEST)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "scenarios/settings/refuse.yaml").assert_outcomes(
        failed=1)
    assert int((pytester.path / "at_exit.freeze").read_text()) > 10_000  # modules, scenarios, the scorer
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_plain.py").assert_outcomes(passed=1)
    assert (pytester.path / "at_exit.freeze").read_text() == "0"  # no scenario collected: exit as usual


def test_items_do_not_keep_their_trajectories_after_their_report(suite: pytest.Pytester) -> None:
    """Passing items only: an in-process run keeps every hook call, and a failure's traceback holds
    the frames of its test function (in a real run, only the last failure's, as sys.last_traceback)."""
    TRAJECTORIES.clear()
    run(suite, "scenarios/settings/wifi_off.yaml", "scenarios/messaging", "--augment", "base,all_tools",
        ).assert_outcomes(passed=4)
    assert len(TRAJECTORIES) == 4
    gc.collect()
    alive = [ref for ref in TRAJECTORIES if ref() is not None]
    assert not alive, f"{len(alive)} of {len(TRAJECTORIES)} trajectories are still referenced after the run"

