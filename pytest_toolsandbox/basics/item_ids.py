"""The parts of a scenario item's id that name its agent: shared by collection and by `merge`, which
gives the items of single-agent runs the ids a run of all their agents together would have."""

from __future__ import annotations

import hashlib
import re


def agent_label(agent: str, agents: tuple[str, ...]) -> str:
    """The agent's part of an id; specs that spell the same label (`gpt-4o`, `gpt_4o`) get a hash of
    the spec, so their items never share an id nor a trajectory file."""
    def label(spec: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.]+", "_", spec)

    mine = label(agent)
    if sum(label(other) == mine for other in agents) > 1:
        mine += "_" + hashlib.sha256(agent.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return mine


def with_agent(nodeid: str, label: str) -> str:
    """`path::test_scenario[base-t1]` → `path::test_scenario[<label>-base-t1]`."""
    head, bracket, rest = nodeid.partition("[")
    return f"{head}[{label}-{rest}" if bracket else nodeid


def param_id(nodeid: str) -> str:
    """The parameter id of a scenario item's node id (what its trajectory file is named after)."""
    return nodeid.partition("[")[2].removesuffix("]")
