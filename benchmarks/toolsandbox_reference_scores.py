"""Score trajectories with the reference implementation's own evaluator (runs in ITS interpreter).

Used by `bench_toolsandbox_agreement.py`; reads a JSON list of cases on stdin, each
`{"id", "scenario", "messages": [...], "snapshots": {table: [{"index", "rows"}]}}` as our trajectories
hold them, rebuilds the reference's execution context from them (message log with tool traces, one
database snapshot per index) and prints `{id: similarity}` as JSON. Standard library and `tool_sandbox`
only (plus the data-frame library it is built on); the reference's clock is frozen as the importer does,
so its milestone targets are the ones our imported files were written from.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from datetime import datetime
from pathlib import Path

READER = Path(__file__).resolve().parents[1] / "pytest_toolsandbox" / "importer" / "read_toolsandbox.py"
TABLES = {"settings": "SETTING", "contacts": "CONTACT", "messaging": "MESSAGING", "reminders": "REMINDER"}


def _reader():
    spec = importlib.util.spec_from_file_location("read_toolsandbox", READER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sandbox_rows(messages, role_type):
    rows = []
    for message in messages:
        trace = message.get("tool_trace")
        call = message.get("tool_call")
        content = message.get("content") or ""
        if call:  # the reference keeps the agent's call as code naming the tool
            content = f"{call['name']}(**{call.get('arguments') or '{}'})"
        rows.append({
            "sandbox_message_index": message["index"],
            "sender": role_type[message["sender"].upper()],
            "recipient": role_type[message["recipient"].upper()],
            "content": content,
            "openai_tool_call_id": None, "openai_function_name": None,
            "conversation_active": message.get("conversation_active", True),
            "tool_call_exception": message.get("exception"),
            "tool_trace": None if trace is None else [json.dumps(
                {"tool_name": trace["tool"], "arguments": trace["arguments"], "result": trace["result"]},
                ensure_ascii=False)],
            "visible_to": None,
        })
    return rows


def context_from(case, pl, execution_context):
    """An ExecutionContext holding exactly the case's messages and snapshots."""
    namespace, role_type = execution_context.DatabaseNamespace, execution_context.RoleType
    context = execution_context.ExecutionContext()
    schemas = execution_context.ExecutionContext.dbs_schemas
    by_name = {str(n).upper(): n for n in namespace}
    for ours, theirs in TABLES.items():
        space = by_name[theirs]
        headguard = context._dbs[space].head(1)
        frames = [headguard]
        for snapshot in case["snapshots"][ours]:
            rows = [{**row, "sandbox_message_index": snapshot["index"]} for row in snapshot["rows"]]
            if rows:
                frames.append(pl.DataFrame(rows, schema=schemas[space]))
            else:  # an emptied table: the headguard alone stands for the empty snapshot at this index
                frames.append(headguard.with_columns(pl.lit(snapshot["index"]).cast(pl.Int32)
                                                     .alias("sandbox_message_index")))
        context._dbs[space] = pl.concat(frames, how="vertical")
    sandbox = by_name["SANDBOX"]
    rows = _sandbox_rows(case["messages"], role_type)
    context._dbs[sandbox] = pl.concat([context._dbs[sandbox].head(1), pl.DataFrame(rows, schema=schemas[sandbox])])
    return context


def main() -> int:
    reader = _reader()
    import polars as pl
    from tool_sandbox.common import execution_context
    from tool_sandbox.common.tool_discovery import ToolBackend
    from tool_sandbox.scenarios import named_scenarios

    cases = json.load(sys.stdin)
    reader.freeze_clock(datetime.fromisoformat(os.environ["TOOLSANDBOX_NOW"]))
    scenarios = named_scenarios(preferred_tool_backend=ToolBackend.DEFAULT)
    scores = {}
    for case in cases:
        context = context_from(case, pl, execution_context)
        scenario = scenarios[case["scenario"]]
        result = scenario.evaluation.evaluate(execution_context=context, max_turn_count=scenario.max_messages)
        scores[case["id"]] = float(result.similarity)
    print(json.dumps(scores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
