"""A model no request can reach (retired or unknown: HTTP 404; quota used up) stops the run at its first
such error (`roles/model_stop.py`): later items are not run, and the summary says why (partial, with
`--resume` to complete it once the model is fixed), instead of one error per item.
"""

from __future__ import annotations

import warnings

import pytest

from pytest_toolsandbox.roles.model_stop import reset, stop_reason
from pytest_toolsandbox.running.ahead import ahead_of
from pytest_toolsandbox.running.items import is_scenario_id

STOP_PREFIX = "toolsandbox: model unavailable: "
SDK_DEPRECATION = "ignore:The model '.*' is deprecated:DeprecationWarning"
"""The anthropic SDK warns on every request to a deprecated model (48 times in a 15-item run); the run's
header says it once instead (`model_notes.py`)."""


def configure_model_stop(config: pytest.Config) -> None:
    """A fresh stop state for this session, the SDK's per-request warning silenced, and the stop hook."""
    reset()
    config.addinivalue_line("filterwarnings", SDK_DEPRECATION)
    warnings.filterwarnings("ignore", "The model '.*' is deprecated", DeprecationWarning)  # episode threads too
    config.pluginmanager.register(ModelStop(), "toolsandbox-model-stop")


def stopped_reason(session: pytest.Session) -> str | None:
    """The model stop reason the session stopped with, else None; under xdist a worker's reason reaches
    the controller's xdist session (`dsession`), not pytest's."""
    dsession = session.config.pluginmanager.get_plugin("dsession")
    for shouldstop in (session.shouldstop, getattr(dsession, "shouldstop", None)):
        if isinstance(shouldstop, str) and shouldstop.startswith(STOP_PREFIX):
            return shouldstop.removeprefix(STOP_PREFIX)
    return stop_reason()  # the stop came with the last item: no later item was there to set shouldstop


class ModelStop:
    """Once a model is known to be unavailable, no further scenario item runs (no report, no record)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        reason = stop_reason()
        if reason is None or not is_scenario_id(item.nodeid):
            return None
        ahead = ahead_of(item)
        if ahead is not None and ahead.job is not None and ahead.job.started is not None:
            return None  # its episode is already playing (or done): it keeps its result
        item.session.shouldstop = STOP_PREFIX + reason
        return True
