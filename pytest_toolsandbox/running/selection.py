"""Which collected items run: the items of other shards (`--ts-shard`) and those a resumed run already
finished (`--resume`) are deselected, and the roles are probed once so that a role that cannot be built
(a missing API key) is one usage error instead of a traceback per item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_toolsandbox.running.configure import settings
from pytest_toolsandbox.running.errors import RoleError
from pytest_toolsandbox.running.items import Case, is_scenario_id, scenario_and_case
from pytest_toolsandbox.running.prepare import build_role

if TYPE_CHECKING:
    from pytest_toolsandbox.scenario.models import Scenario

_DONE = pytest.StashKey[frozenset[str]]()
"""`--resume`: the items with a finished record in the resumed directory (read by the controller, shipped
to xdist workers so that every worker deselects the same items)."""


def set_done(config: pytest.Config, nodeids: frozenset[str]) -> None:
    config.stash[_DONE] = nodeids


def done(config: pytest.Config) -> frozenset[str]:
    return config.stash.get(_DONE, frozenset())


def deselect(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the items of other shards (`--ts-shard`) and those already done (`--resume`)."""
    run = settings(config)
    finished = done(config)
    if run.shard is None and not finished:
        return
    from pytest_toolsandbox.running.shard import scenario_path, shards

    scenario_items = {item.nodeid for item in items if is_scenario_id(item.nodeid)}
    assigned = shards(map(scenario_path, scenario_items), run.shard[1]) if run.shard else {}
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        scenario = item.nodeid in scenario_items
        outside = scenario and run.shard is not None and assigned[scenario_path(item.nodeid)] != run.shard[0]
        (dropped if outside or (scenario and item.nodeid in finished) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def probe_roles(config: pytest.Config, scenario: Scenario, cases: list[Case]) -> str | None:
    """Build every --agent / --user once before the run; the reason the first one cannot be built (a
    missing API key), so that it is one usage error instead of a traceback per item."""
    from pytest_toolsandbox.roles.resolve import RoleSpecError

    run = settings(config)
    for case in cases:
        for factory in (run.agent_factories[case.agent], run.user_factory):
            try:
                build_role(factory, scenario, case)
            except RoleError as error:
                if not isinstance(error.__context__, RoleSpecError):  # e.g. nothing recorded for one replay item
                    return str(error)
    return None


def probe_collected(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without xdist, probe the roles on the first collected scenario, one case per agent (under xdist the
    controller does, on its first worker's collection)."""
    cases: dict[str, Case] = {}
    scenario = None
    for item in items:
        found = scenario_and_case(item)
        if found is not None:
            scenario = scenario or found[0].scenario
            cases.setdefault(found[1].agent, found[1])
    reason = probe_roles(config, scenario, list(cases.values())) if scenario is not None else None
    if reason is not None:
        raise pytest.UsageError(reason)
