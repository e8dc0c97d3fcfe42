"""CI gating against an earlier summary.json.

A task (scenario × variant) of an agent passed in the baseline when every scored baseline record
of it passed; one failing trial makes it a known failure. Infrastructure errors are not evidence
about the agent: they are ignored, and a task that only errored counts as not in the baseline.
Known failures run as expected failures, so only regressions (passed then, fail now) fail the run;
a known failure that passes now is an improvement. Tasks the baseline has not seen are new and gate
normally.

Agents are matched by their `--agent` spec (or, for an agent a conftest.py builds, by the name it gives
itself, report/results/record.py `agent_key`), so a baseline of several agents gates each one against
its own results, and a run's other agents run ungated (the terminal and summary.json say which). A
baseline named on the command line (`--baseline PATH`) that holds one agent also gates a single-agent
run of another spec (the usual CI case: the agent changed, its results should not get worse); the
ini's `toolsandbox_baseline`, a standing project setting, gates only the agent it was recorded for,
so `pytest --agent reference` in a project gated on a model is not compared with that model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_toolsandbox.report.results.record import SCORED_OUTCOMES, Record, agent_key
from pytest_toolsandbox.report.results.summary import task_key


@dataclass(frozen=True)
class Baseline:
    path: str
    passed: dict[str, dict[str, bool]]
    """Baseline agent → task key → passed (plain data: it is shipped to xdist workers)."""
    gates: dict[str, str] = field(default_factory=dict)
    """`--agent` spec of this run → the baseline agent whose results gate it."""
    specs: tuple[str, ...] = ()
    """The run's `--agent` specs; any other agent (one a conftest.py builds, named by its own identity) is
    gated only by baseline results recorded under that same name."""
    rules: str = "ours"
    """The `--rules` the baseline's results were scored by."""

    @property
    def recorded_for(self) -> tuple[str, ...]:
        """The agents the baseline file holds results of."""
        return tuple(self.passed)

    def source(self, agent: str) -> str | None:
        """The baseline agent that gates `agent`, or None: `agent` runs ungated."""
        if agent in self.specs:
            return self.gates.get(agent)
        return agent if agent in self.passed else None

    def status(self, agent: str, scenario_path: str, variant: str) -> bool | None:
        """True: passed in the baseline; False: known failure; None: not in the baseline (or ungated)."""
        source = self.source(agent)
        if source is None:
            return None
        return self.passed[source].get(task_key({"path": scenario_path, "variant": variant}))

    def for_agents(self, agents: Sequence[str], any_spec: bool = True) -> Baseline:
        """The baseline gating a run of `agents`; with `any_spec`, a one-agent baseline gates a one-agent
        run whatever its spec."""
        recorded = self.recorded_for
        if any_spec and len(agents) == 1 and len(recorded) == 1:
            gates = {agents[0]: recorded[0]}
        else:
            gates = {agent: agent for agent in agents if agent in self.passed}
        return Baseline(self.path, self.passed, gates, tuple(agents), self.rules)

    def gated(self, agents: Sequence[str]) -> dict[str, str]:
        """Each of `agents` (the agents that ran) that the baseline gates → its baseline agent."""
        return {agent: source for agent in agents if (source := self.source(agent)) is not None}

    def as_shipped(self) -> dict[str, object]:
        """The plain data xdist workers rebuild the baseline from."""
        return {"path": self.path, "passed": self.passed, "gates": self.gates, "specs": list(self.specs),
                "rules": self.rules}

    def as_json(self, agents: Sequence[str], rules: str) -> dict[str, object]:
        """What summary.json records about the gate for the agents that ran, scored by `rules` (the
        changes are added when the run ends); `differs` names the options the baseline's results were
        scored under that this run's are not, as --resume names them."""
        gates = self.gated(agents)
        return {"path": self.path, "recorded_for": list(self.recorded_for), "gates": gates,
                "ungated": [agent for agent in agents if agent not in gates],
                "differs": [f"rules: {self.rules!r} then, {rules!r} now"] if rules != self.rules else []}


def pass_counts(records: Sequence[Record]) -> dict[str, dict[str, tuple[int, int]]]:
    """Agent spec → task → (passes, scored trials); errors and skips are no evidence either way."""
    counts: dict[str, dict[str, list[int]]] = {}
    for record in records:
        if record.get("outcome") not in SCORED_OUTCOMES or record.get("score") is None:
            continue
        tally = counts.setdefault(agent_key(record), {}).setdefault(task_key(record), [0, 0])
        tally[0] += bool(record.get("passed"))
        tally[1] += 1
    return {agent: {task: (c, n) for task, (c, n) in tasks.items()} for agent, tasks in counts.items()}


def baseline_from_records(path: str, records: list[Record], rules: str = "ours") -> Baseline:
    """A task passed in the baseline when every scored trial of it passed."""
    passed = {agent: {task: passes == trials for task, (passes, trials) in tasks.items()}
              for agent, tasks in pass_counts(records).items()}
    return Baseline(path=path, passed=passed, rules=rules)


def load_baseline(path: str | Path) -> Baseline:
    """Read a baseline file or summary.json (raises SummaryError naming the file)."""
    from pytest_toolsandbox.report.ci.baseline_file import load_baseline_data

    data = load_baseline_data(path)
    return baseline_from_records(str(path), data["records"], data["rules"])


def classify(baseline_passed: bool | None, outcome: str) -> str | None:
    """regression, improvement, known_failure, unchanged or new; None for errors and skips."""
    if outcome not in SCORED_OUTCOMES:
        return None
    if baseline_passed is None:
        return "new"
    passes_now = outcome in ("passed", "xpassed")
    if baseline_passed:
        return "unchanged" if passes_now else "regression"
    return "improvement" if passes_now else "known_failure"
