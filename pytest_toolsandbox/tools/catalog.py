"""Importing this module registers every built-in tool."""

from pytest_toolsandbox.tools import (  # noqa: F401 - imported for registration
    contact,
    messaging,
    reminder,
    search,
    setting,
    user,
    utilities,
)
