"""Shared fixtures for the project's own tests."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import pytest_toolsandbox
from pytest_toolsandbox.world import World
from tests.support import make_world

pytest_plugins = ["pytester"]

# The plugin imports its scoring, scenario and report stack only once a scenario is collected. In-process
# `pytester.runpytest` runs drop the modules they imported when they end, so a module first imported
# there would later be imported again as a second copy (different enum and class identities; numpy
# refuses outright). The test process therefore imports the whole package once, up front.
for module in pkgutil.walk_packages(pytest_toolsandbox.__path__, "pytest_toolsandbox."):
    importlib.import_module(module.name)

TEST_TIMEOUT = 600
"""Seconds one test may take before pytest-timeout fails it with a traceback: a hang (threads deadlocked
on a shared lock, say) must fail its own test, not stall the whole CI run until its budget runs out."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


@pytest.fixture
def world() -> World:
    return make_world()
