"""Every use of pytest's and pytest-xdist's private or version-dependent internals, in one place.

The plugin needs five things neither project offers as a stable API: whether the terminal reporter
writes to a terminal (`TerminalReporter.isatty`, a bool before pytest 9 and a method since); deciding
the rootdir and ini file again once its own options are known (`_pytest.config.findpaths.determine_setup`
and the private config attributes it sets); reading the items xdist has queued on a worker
(`WorkerInteractor.torun` and `nextitem_index`); and topping a worker's queue up from the `load`
scheduler (`node2pending` and `_send_tests`). A sixth, `ScenarioFile._getobj` (running/items.py), is
an override, not a call.

Supported are pyproject.toml's bounds: pytest >=8.4,<10 (before 8.4, fixture discovery evaluates every
property of a plugin object, so the controller's would load the scorer in every test run) and
pytest-xdist >=3.5,<4. tests/test_compat.py checks each accessor against the installed versions and is
run on the oldest and newest releases within the bounds (benchmarks/README.md). A new major version may
move any of these: raise an upper bound only with those tests green on it.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest


def determine_setup(inifile: str | None, override_ini: Sequence[str] | None, args: Sequence[str],
                    rootdir: str | None, invocation_dir: Path) -> tuple[Path, Path | None, Any, list[str]]:
    """pytest's own choice of rootdir, ini file and ini values for these arguments, plus the config files
    it ignored (pytest ≥ 8.4 reports them; earlier versions take no `override_ini` and report none)."""
    from _pytest.config.findpaths import determine_setup as pytest_determine_setup

    accepted = inspect.signature(pytest_determine_setup).parameters
    given: dict[str, Any] = {"inifile": inifile, "args": args, "rootdir_cmd_arg": rootdir,
                             "invocation_dir": invocation_dir}
    if "override_ini" in accepted:
        given["override_ini"] = override_ini
    root, ini, inicfg, *ignored = pytest_determine_setup(**given)
    return root, ini, inicfg, list(ignored[0]) if ignored else []


def adopt_setup(config: pytest.Config, root: Path, ini: Path | None, inicfg: Any, ignored: list[str]) -> None:
    """Make `config` use this rootdir, ini file and ini values, as if pytest had chosen them itself."""
    config._rootpath, config._inipath = root, ini  # type: ignore[attr-defined]
    if hasattr(config, "_inicfg"):  # pytest ≥ 9 (`inicfg` is a deprecated view of it)
        config._inicfg = inicfg
    else:
        config.inicfg = inicfg  # type: ignore[attr-defined]
    if hasattr(config, "_ignored_config_files"):
        config._ignored_config_files = ignored
    config._inicache.clear()  # type: ignore[attr-defined]


def terminal_is_a_tty(reporter: Any) -> bool:
    """Whether pytest's terminal reporter writes to a terminal: `isatty` is a method from pytest 9 and a
    plain bool before (a method call on pytest 8 is a TypeError)."""
    isatty = reporter.isatty
    return bool(isatty() if callable(isatty) else isatty)


def xdist_worker(config: pytest.Config) -> Any:
    """pytest-xdist's worker loop on this (worker) process, or None outside a worker."""
    for plugin in config.pluginmanager.get_plugins():
        if hasattr(plugin, "torun") and hasattr(plugin, "nextitem_index"):
            return plugin
    return None


def queued_on_worker(worker: Any) -> list[int]:
    """Indices (into session.items) of the items the worker will run next, in order, after the current one."""
    queue = worker.torun
    if hasattr(queue, "lock"):  # pytest-xdist ≥ 3.6: a queue inspected under its own lock
        with queue.lock() as pending:
            waiting = list(pending)
    else:  # earlier: a standard queue.Queue
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
