"""Shared fixtures for the project's own tests."""

from __future__ import annotations

import pytest

# The plugin imports its scoring, scenario and report stack only when a scenario is collected. In-process
# `pytester.runpytest` runs restore sys.modules afterwards, and numpy (under polars/scipy) cannot be
# imported twice in one process, so the test process loads that stack once, up front.
import pytest_toolsandbox.episode
import pytest_toolsandbox.evaluation
import pytest_toolsandbox.offpolicy
import pytest_toolsandbox.report.collector
import pytest_toolsandbox.roles.scripted
import pytest_toolsandbox.scenario.loader  # noqa: F401
from pytest_toolsandbox.world import World
from tests.support import make_world

pytest_plugins = ["pytester"]


@pytest.fixture
def world() -> World:
    return make_world()
