"""Shared fixtures for the project's own tests."""

from __future__ import annotations

import pytest

from pytest_toolsandbox.world import World
from tests.support import make_world

pytest_plugins = ["pytester"]


@pytest.fixture
def world() -> World:
    return make_world()
