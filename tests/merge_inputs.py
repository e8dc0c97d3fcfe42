"""Report directories as a pytest run writes them, built in-process, for `merge`'s in-process tests
(tests/test_merge_io.py). A run's episodes are played and scored for real (the scripted reference and
unhelpful agents on the small suite of tests/test_plugin_support.py) and written by the plugin's own
collector, so each directory holds what a run leaves: summary.json, records.jsonl, trajectories and pages;
a "killed" run stops before its summary, leaving the journal. No pytest session runs: mutation testing
only sees code that runs in its own process (tests/conftest.py)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_toolsandbox.basics.item_ids import param_id
from pytest_toolsandbox.evaluation.score import evaluate
from pytest_toolsandbox.report.pages.trajectory_html import PageContext, scenario_context
from pytest_toolsandbox.report.results.fingerprint import run_fingerprint, scenario_digests
from pytest_toolsandbox.report.results.record import evaluation_fields, trajectory_fields
from pytest_toolsandbox.report.results.slug import trajectory_slug
from pytest_toolsandbox.report.writing.collector import RunCollector
from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser, UnhelpfulAgent
from pytest_toolsandbox.running.episode import run_episode
from pytest_toolsandbox.scenario.loader import parse_scenario, read_yaml
from pytest_toolsandbox.scenario.models import Scenario
from tests.test_plugin_support import SUITE

WIFI_OFF, WIFI_STATUS, HALF, REFUSE = SUITE
"""The suite's scenario paths: the reference agent passes the first two and fails the others."""


def write_scenarios(root: Path) -> None:
    """The suite's scenario files under `root` (the directory the runs ran in)."""
    for relative, text in SUITE.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip(), encoding="utf-8")


@dataclass(frozen=True)
class Item:
    """One item a run selected: its scenario, agent spec (`reference` or `unhelpful`) and trial."""

    path: str
    agent: str = "reference"
    trial: int = 1


def nodeid(item: Item, agents: Sequence[str] = ("reference",), trials: int = 1) -> str:
    """The item's id in a run of `agents` with `trials` (as collection names it)."""
    parts = [*([item.agent] if len(agents) > 1 else []), "base", *([f"t{item.trial}"] if trials > 1 else [])]
    return f"{item.path}::test_scenario[{'-'.join(parts)}]"


def _scenario(path: str) -> Scenario:
    return parse_scenario(read_yaml(SUITE[path]), Path(path))


def context(path: str) -> PageContext:
    """The scenario's goal, knowledge and reference dialogue, as the run gives its trajectory pages."""
    shown = scenario_context(_scenario(path))
    return PageContext(shown["goal"], shown["knowledge"], tuple(shown["reference"]))


@functools.cache
def _played(path: str, agent: str) -> tuple[dict[str, Any], str]:
    """The scored record fields and trajectory JSON of `agent` playing the suite's scenario at `path`."""
    scenario = _scenario(path)
    role = ReferenceAgent(scenario) if agent == "reference" else UnhelpfulAgent()
    trajectory = run_episode(scenario, role, ScriptedUser(scenario))
    evaluation = evaluate(scenario, trajectory)
    fields = {"scenario": scenario.name, "path": path, "categories": list(scenario.categories),
              "max_messages": scenario.max_messages, **trajectory_fields(trajectory),
              **evaluation_fields(evaluation, None)}
    return fields, trajectory.to_json()


def record(item: Item, agents: Sequence[str] = ("reference",), trials: int = 1) -> dict[str, Any]:
    """The record a worker sends for `item` (without what the collector adds)."""
    fields, _ = _played(item.path, item.agent)
    return {"id": nodeid(item, agents, trials), **fields, "variant": "base", "trial": item.trial,
            "agent": item.agent, "agent_spec": item.agent, "user": "scripted",
            "outcome": "passed" if fields["passed"] else "failed", "threshold": None,
            "tokens": {"agent": None, "user": None}, "user_sim_suspect": [], "off_policy": None,
            "baseline": None, "change": None, "error": None}


def options(agents: Sequence[str] = ("reference",), trials: int = 1, **changed: Any) -> dict[str, Any]:
    """summary.json's run.options of a run of `agents` (the fields merge and the fingerprint read)."""
    return {"agents": list(agents), "user": "scripted", "augment": ["base"], "trials": trials, "threshold": None,
            "max_messages": None, "tool_backend": "offline", "prompts": "ours", "rules": "ours",
            "report_dir": "toolsandbox-report", "shard": None, "model_options": None, **changed}


def write_run(root: Path, name: str, items: Sequence[Item], *, agents: Sequence[str] = ("reference",),
              trials: int = 1, selected: Sequence[Item] = (), started: str = "2026-01-01T10:00:00+00:00",
              finished: str = "2026-01-01T10:05:00+00:00", killed: bool = False, duration: float = 2.5,
              exit_status: int = 1, workers: int = 0, stop_reason: str | None = None,
              baseline: dict[str, Any] | None = None, **changed: Any) -> Path:
    """Write `root/name` as a run of `agents` that selected `items` and `selected` and finished `items`
    (each in 1.25 s, on worker `gw0`); `killed` stops it before its summary. `changed` overrides options."""
    run_options = options(agents, trials, **changed)
    paths = sorted({item.path for item in (*items, *selected)})
    fingerprint = run_fingerprint(run_options, scenario_digests(root, paths))
    directory = root / name
    collector = RunCollector(directory, trials)
    collector.start_journal({"fingerprint": fingerprint, "started": started})
    collector.expect(len(items) + len(selected), [nodeid(item, agents, trials) for item in (*items, *selected)])
    for item in items:
        data = record(item, agents, trials)
        trajectory = _played(item.path, item.agent)[1]
        slug = trajectory_slug(item.path, param_id(data["id"]))
        collector.add_phase(data["id"], "call", False, 1.25, "gw0", data, trajectory, slug, context(item.path))
        collector.add_phase(data["id"], "teardown", False, 0.0, "gw0", None, None, None)
    if killed:
        collector.journal.close()
        return directory
    collector.stop_reason = stop_reason
    run = {"started": started, "finished": finished, "duration": duration, "exit_status": exit_status,
           "options": run_options, "agents": list(agents), "users": ["scripted"], "workers": workers,
           "fingerprint": fingerprint}
    collector.finish(run, interrupted=False, baseline=baseline)
    return directory


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def edit_summary(directory: Path, change: Any) -> None:
    """Apply `change(summary)` to the directory's summary.json (a hand-edited or older file)."""
    path = directory / "summary.json"
    data = read_json(path)
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
