"""Shared fixtures for the project's own tests."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import pytest_toolsandbox
from pytest_toolsandbox.evaluation.memo import ContentCache
from pytest_toolsandbox.world import World
from tests.support import make_world

pytest_plugins = ["pytester"]

# The plugin imports its scoring, scenario and report stack only once a scenario is collected. In-process
# `pytester.runpytest` runs drop the modules they imported when they end, so a module first imported
# there would later be imported again as a second copy (different enum and class identities; numpy
# refuses outright). The test process therefore imports the whole package once, up front.
#
# A module whose optional dependency is not installed (the model SDKs and vcrpy are extras) is left out
# rather than failing this file: pytest also loads `tests/conftest.py` for a mistyped path at the
# repository root (`pytest scenarios/mesaging/`), and must then print its own usage error, not an
# ImportError from here. The project's tests that need such a module import it themselves.
OPTIONAL_DEPENDENCIES = frozenset({"openai", "anthropic", "vcr", "httpx2", "httpx", "hypothesis"})

for module in pkgutil.walk_packages(pytest_toolsandbox.__path__, "pytest_toolsandbox."):
    try:
        importlib.import_module(module.name)
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] not in OPTIONAL_DEPENDENCIES:
            raise

TEST_TIMEOUT = 600
"""Seconds one test may take before pytest-timeout fails it with a traceback: a hang (threads deadlocked
on a shared lock, say) must fail its own test, not stall the whole CI run until its budget runs out."""


UNDER_MUTMUT = "MUTANT_UNDER_TEST" in os.environ
"""mutmut sets this in the processes it forks. A test that runs a whole pytest session (`pytester`) only
reaches code in that session's own process, which mutmut cannot see, and costs a minute per mutant."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Only the project's own tests: this file is also loaded by runs that collect scenarios."""
    here = Path(__file__).parent
    for item in items:
        if not item.path.is_relative_to(here):
            continue
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))
        if UNDER_MUTMUT and "pytester" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.skip(reason="a pytest session: mutmut's forked runs cannot see it"))


def _per_process_caches() -> list[Callable[[], object]]:
    """The `clear` of every cache the package keeps per process: functions under `lru_cache`, content
    caches, and memoised methods of module-level objects (the stemmer)."""
    found: dict[int, Callable[[], object]] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("pytest_toolsandbox."):
            continue
        for value in vars(module).values():
            ours = type(value).__module__.startswith("pytest_toolsandbox.") and hasattr(value, "__dict__")
            for holder in [value, *vars(value).values()] if ours else [value]:
                if isinstance(holder, ContentCache):
                    found[id(holder)] = holder.clear
                elif callable(getattr(type(holder), "cache_clear", None)):
                    found[id(holder)] = holder.cache_clear
    return list(found.values())


@pytest.fixture(autouse=UNDER_MUTMUT)
def _recompute_cached_work() -> None:
    """Under mutmut, each test starts with empty caches. mutmut runs a mutant only against the tests it
    saw reach the mutated function; a scenario compiled (or a text parsed) by an earlier test is a cache
    hit in every later one, which would credit the compiling code to that first test alone and leave
    the mutants there to tests that never check them."""
    for clear in _per_process_caches():
        clear()


@pytest.fixture
def world() -> World:
    return make_world()
