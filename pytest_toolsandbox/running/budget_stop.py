"""`--max-spend` / `--max-run-tokens` inside pytest: the run's `Budget` (budget.py) in the config, and
the hook that stops starting episodes once it is spent.

Light to import: budget.py (and the report stack it prices with) loads only when a cap is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_toolsandbox.running.ahead import ahead_of
from pytest_toolsandbox.running.items import is_scenario_id

if TYPE_CHECKING:
    from pytest_toolsandbox.options import Settings
    from pytest_toolsandbox.running.budget import Budget

_BUDGET = pytest.StashKey["Budget"]()


def configure_budget(config: pytest.Config, run: Settings) -> None:
    """The caps, and the hook that stops starting episodes (nothing when no cap is set)."""
    if run.max_spend is None and run.max_run_tokens is None:
        return
    from pytest_toolsandbox.running.budget import Budget

    budget = Budget(run.max_spend, run.max_run_tokens, run.report_dir)
    config.stash[_BUDGET] = budget
    if not hasattr(config, "workerinput"):
        budget.start()
    config.pluginmanager.register(BudgetStop(config), "toolsandbox-budget")


def run_budget(config: pytest.Config) -> Budget | None:
    return config.stash.get(_BUDGET, None)


def budget_reached(config: pytest.Config) -> str | None:
    """Why no new episode may start (the cap reached), or None."""
    spent = run_budget(config)
    return spent.reached() if spent is not None else None


class BudgetStop:
    """Once the budget is spent, an item whose episode has not started is not run (no report, no record)
    and the session stops: `--resume` runs those items later. A cap that cannot count some answers says
    so on the terminal when it learns it."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        budget = run_budget(self.config)
        notice = budget.take_notice() if budget is not None else None
        reporter = self.config.pluginmanager.get_plugin("terminalreporter") if notice else None
        if notice and reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(notice, yellow=True, bold=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        reason = budget_reached(item.config)
        if reason is None or not is_scenario_id(item.nodeid):
            return None
        ahead = ahead_of(item)
        if ahead is not None and ahead.job is not None and ahead.job.started is not None:
            return None  # its episode is playing: it finishes and keeps its result
        item.session.shouldstop = f"toolsandbox: {reason}"
        return True
