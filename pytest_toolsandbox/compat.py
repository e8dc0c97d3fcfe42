"""Every use of pytest's and pytest-xdist's private internals, in one place.

The plugin needs three things neither project offers publicly: deciding the rootdir and ini file again
once its own options are known (`_pytest.config.findpaths.determine_setup` and the private config
attributes it sets); reading the items xdist has queued on a worker (`WorkerInteractor.torun` and
`nextitem_index`); and topping a worker's queue up from the `load` scheduler (`node2pending` and
`_send_tests`). A fourth, `ScenarioFile._getobj` (running/items.py), is an override, not a call.

Supported are pyproject.toml's bounds, pytest >=9.1,<10 and pytest-xdist >=3.6.1,<4. Earlier pytest is
not: its fixture closure leaves out what an overridden fixture depends on, so a conftest that wraps
`toolsandbox_episode` (docs/agents.md) loses the agent's model and token counts from its records.
tests/test_compat.py checks each accessor against the installed versions and is run on the oldest and
newest releases within the bounds (benchmarks/README.md). A new major version may move any of these:
raise an upper bound only with those tests green on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest


def determine_setup(inifile: str | None, override_ini: Sequence[str] | None, args: Sequence[str],
                    rootdir: str | None, invocation_dir: Path) -> tuple[Path, Path | None, Any, list[str]]:
    """pytest's own choice of rootdir, ini file and ini values for these arguments, plus the config files
    it ignored."""
    from _pytest.config.findpaths import determine_setup as pytest_determine_setup

    root, ini, inicfg, ignored = pytest_determine_setup(inifile=inifile, override_ini=override_ini, args=args,
                                                        rootdir_cmd_arg=rootdir, invocation_dir=invocation_dir)
    return root, ini, inicfg, list(ignored)


def adopt_setup(config: pytest.Config, root: Path, ini: Path | None, inicfg: Any, ignored: list[str]) -> None:
    """Make `config` use this rootdir, ini file and ini values, as if pytest had chosen them itself."""
    config._rootpath, config._inipath, config._inicfg = root, ini, inicfg
    config._ignored_config_files = ignored
    config._inicache.clear()


def xdist_worker(config: pytest.Config) -> Any:
    """pytest-xdist's worker loop on this (worker) process, or None outside a worker."""
    for plugin in config.pluginmanager.get_plugins():
        if hasattr(plugin, "torun") and hasattr(plugin, "nextitem_index"):
            return plugin
    return None


def queued_on_worker(worker: Any) -> list[int]:
    """Indices (into session.items) of the items the worker will run next, in order, after the current one."""
    queue = worker.torun
    if hasattr(queue, "lock"):  # pytest-xdist ≥ 3.7: a queue inspected under its own lock
        with queue.lock() as pending:
            waiting = list(pending)
    else:  # 3.6: a standard queue.Queue
        with queue.mutex:
            waiting = list(queue.queue)
    queued = [index for index in waiting if isinstance(index, int)]
    following = worker.nextitem_index
    return [following, *queued] if isinstance(following, int) else queued


def pending_on(scheduling: Any, node: Any) -> int:
    """Items the `load` scheduler has sent `node` that it has not finished."""
    return len(scheduling.node2pending[node])


def worker_count(scheduling: Any) -> int:
    """Workers the `load` scheduler is sending items to."""
    return len(scheduling.node2pending)


def send_to(scheduling: Any, node: Any, count: int) -> None:
    """Send `node` the next `count` unsent items (xdist's own order)."""
    scheduling._send_tests(node, count)
