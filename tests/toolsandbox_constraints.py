"""Print the reference package's milestone and minefield objects as they are (runs in ITS interpreter).

Used by `test_import_fidelity.py`: for every scenario name given on stdin (a JSON list), each
milestone's and minefield's snapshot constraints — guardrails included, as the reference's matcher
adds them — with the name of every similarity function, its partial keywords, the target rows and the
reference index; and the DAG's edges. Nothing is classified here: the test maps the reference's own
names onto our vocabulary. The clock is frozen at `TOOLSANDBOX_NOW` as the importer freezes it.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
from datetime import datetime
from pathlib import Path

READER = Path(__file__).resolve().parents[1] / "pytest_toolsandbox" / "importer" / "read_toolsandbox.py"


def _name(function):
    """A function's name, a partial's function name; with the partial's keywords (functions by name)."""
    if isinstance(function, functools.partial):
        keywords = {key: getattr(value, "__name__", value) for key, value in function.keywords.items()}
        return function.func.__name__, keywords
    return function.__name__, {}


def _plain(value):
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _constraint(constraint):
    similarity, keywords = _name(constraint.snapshot_constraint)
    target = constraint.target_dataframe
    measures = {}
    for column in (target.columns if target is not None else []):
        measure, measure_keywords = _name(constraint.column_similarity_measure[column])
        measures[column] = {"name": measure, **measure_keywords}
    return {"table": str(constraint.database_namespace), "similarity": similarity, "keywords": keywords,
            "reference": constraint.reference_milestone_node_index, "measures": _plain(measures),
            "rows": _plain(target.to_dicts()) if target is not None else []}


def _matcher(matcher):
    return {"events": [[_constraint(c) for c in event.snapshot_constraints] for event in matcher.milestones],
            "edges": [list(edge) for edge in matcher.edge_list or []] if len(matcher.milestones) > 1 else []}


def main() -> int:
    spec = importlib.util.spec_from_file_location("read_toolsandbox", READER)
    reader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reader)
    from tool_sandbox.common.tool_discovery import ToolBackend
    from tool_sandbox.scenarios import named_scenarios

    names = json.load(sys.stdin)
    reader.freeze_clock(datetime.fromisoformat(os.environ["TOOLSANDBOX_NOW"]))
    scenarios = named_scenarios(preferred_tool_backend=ToolBackend.DEFAULT)
    print(json.dumps({name: {"milestones": _matcher(scenarios[name].evaluation.milestone_matcher),
                             "minefields": _matcher(scenarios[name].evaluation.minefield_matcher)}
                      for name in names}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
