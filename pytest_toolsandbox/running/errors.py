"""The plugin's own failures: an item's failure or error whose message is the whole report.

A `ToolsandboxError` is reported as `str(error)`, never as a traceback: the reader needs to know what
the agent did or which input of the item is broken, not where in the plugin that was found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_toolsandbox.world.trajectory import Trajectory


class ToolsandboxError(Exception):
    """Base of the plugin's own failures: the report shows `str(error)`, never a traceback."""


class ScenarioFailed(ToolsandboxError, pytest.fail.Exception):  # type: ignore[name-defined]  # pytest's public
    # name for its Failed class: mypy cannot take a function's attribute as a base class
    """The agent did not do the task (a milestone not reached, a minefield fired, or the similarity under
    the threshold): the agent's failure.

    Also a `pytest.fail` outcome without traceback (`pytrace=False`): pytest then renders the failure as
    its message instead of formatting the whole traceback with source lines (which the report replaces
    by the message anyway) — that formatting was the largest per-item cost of a run of failing items."""

    def __init__(self, message: str) -> None:
        pytest.fail.Exception.__init__(self, message, pytrace=False)


class EpisodeError(ToolsandboxError):
    """A role crashed during the episode: an infrastructure error, reported as a test error."""

    def __init__(self, message: str, trajectory: Trajectory) -> None:
        super().__init__(message)
        self.trajectory = trajectory


class RoleError(ToolsandboxError):
    """An agent or user simulator could not be created for a scenario."""


class CassetteFileError(ToolsandboxError):
    """The item's cassette exists but cannot be replayed: an error of this item only, never re-recorded."""


class EpisodeTimeoutError(ToolsandboxError):
    """The episode outlived --episode-timeout: an infrastructure error of this item only."""


class InputTooLargeError(ToolsandboxError):
    """An input of this item (its cassette) is over a size limit (`basics/limits.py`): an error of this item only."""


PASSTHROUGH: tuple[type[BaseException], ...] = (KeyboardInterrupt, pytest.skip.Exception, pytest.fail.Exception,
                                                pytest.exit.Exception, pytest.xfail.Exception)
"""Exceptions a role may raise that keep their pytest meaning (Ctrl-C, pytest.skip/fail/xfail/exit);
every other BaseException from a role (SystemExit, GeneratorExit, …) errors its item alone."""
