"""Score trajectories with the reference implementation's own evaluator (runs in ITS interpreter).

Used by `bench_toolsandbox_agreement.py`; reads a JSON list of cases on stdin, each
`{"id", "scenario", "messages": [...], "snapshots": {table: [{"index", "rows"}]}}` as our trajectories
hold them, rebuilds the reference's execution context from them (message log with tool traces, one
database snapshot per index) and prints `{id: similarity}` as JSON. A case whose agent made a call the
reference's own agent code refuses to turn into code (`openai_tool_call_to_python_code` against the tools
its agent role is offered) scores 0, as the reference's runner records such a crash. Standard library and `tool_sandbox`
only (plus the data-frame library it is built on); the reference's clock is frozen as the importer does,
so its milestone targets are the ones our imported files were written from.
"""

from __future__ import annotations

import copy
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


def crashes(messages, offered, to_code) -> bool:
    """Whether the reference's agent would have raised on one of the agent's calls."""
    from openai.types.chat.chat_completion_message_tool_call import ChatCompletionMessageToolCall, Function

    for message in messages:
        call = message.get("tool_call")
        if message["sender"] != "agent" or not call:
            continue
        converted = ChatCompletionMessageToolCall(id=call["id"], type="function", function=Function(
            name=call["name"], arguments=call.get("arguments") or "{}"))
        try:
            to_code(converted, offered, execution_facing_tool_name=None)
        except Exception:  # KeyError for a tool not offered, a JSON error for arguments that are not JSON
            return True
    return False


def main() -> int:
    reader = _reader()
    import polars as pl
    from tool_sandbox.common import execution_context
    from tool_sandbox.common.execution_context import set_current_context
    from tool_sandbox.common.message_conversion import openai_tool_call_to_python_code
    from tool_sandbox.common.tool_discovery import ToolBackend
    from tool_sandbox.roles.unhelpful_agent import UnhelpfulAgent
    from tool_sandbox.scenarios import named_scenarios

    cases = json.load(sys.stdin)
    reader.freeze_clock(datetime.fromisoformat(os.environ["TOOLSANDBOX_NOW"]))
    scenarios = named_scenarios(preferred_tool_backend=ToolBackend.DEFAULT)
    scores = {}
    for case in cases:
        context = context_from(case, pl, execution_context)
        scenario = scenarios[case["scenario"]]
        set_current_context(copy.deepcopy(scenario.starting_context))
        if crashes(case["messages"], set(UnhelpfulAgent.get_available_tools()), openai_tool_call_to_python_code):
            scores[case["id"]] = 0.0
            continue
        result = scenario.evaluation.evaluate(execution_context=context, max_turn_count=scenario.max_messages)
        scores[case["id"]] = float(result.similarity)
    print(json.dumps(scores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
