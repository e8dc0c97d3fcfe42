"""Read the installed reference package `tool_sandbox` and print its scenarios as plain JSON.

This file runs inside the reference's own interpreter (`PYTHON -I read_toolsandbox.py`), whose pinned
libraries cannot share an environment with pytest-toolsandbox; it therefore imports nothing of ours,
only the standard library and `tool_sandbox` (and the data-frame library `tool_sandbox` itself is
built on, to feed probe rows to its functions). The JSON layout is ours: `importer/convert.py` reads it.

Nothing here names a scenario, a similarity function or an extractor. Every callable found in a
scenario is classified by calling it on small probe inputs and watching what it answers:

* a snapshot comparison (whole table, rows added, removed or updated since a reference, or the
  automatic "nothing else changed" guardrail) by its answers on five tiny tables;
* a column comparison (exact, ROUGE-like partial credit, substring, always-one, numeric closeness,
  tool-trace argument match) by its answers on probe cells;
* a value extractor (which feeds earlier tool results into a target) by handing it a tool trace whose
  result and arguments record which keys are read, and recognising the returned values, as numbers
  or in which number formats.

The clock is frozen while the scenarios are built, twice, at two moments: a number that moves with the
clock is a time relative to "now" and is reported as an exact offset from `--now` (local time in the
zone of the `TZ` environment variable, which the caller sets); a number that does not move is absolute.
"""

from __future__ import annotations

import argparse
import datetime as _datetime
import functools
import hashlib
import json
import math
import os
import random
import sys
import types
from typing import TYPE_CHECKING, Any

FORMATS = ("{:.0f}", "{:.1f}", "{:.2f}", "{:.3f}", "{:.4f}", "{}")
"""Number formats an extractor's text values are recognised in (and then offered to our `formats`)."""


class ReadError(Exception):
    """Something in the installed package this reader cannot express; the message says what."""


# --------------------------------------------------------------------------------------------- clock


def freeze_clock(now: _datetime.datetime) -> None:
    """Make `datetime.datetime.now()` inside every loaded `tool_sandbox` module return `now`.

    Only the modules' own reference to the `datetime` module is replaced (by a look-alike whose
    `datetime` class has a fixed `now`), so other libraries keep the real classes.
    """

    class FrozenDatetime(_datetime.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:  # the frozen moment itself, a plain datetime
            return now if tz is None else now.astimezone(tz)

    shim = types.ModuleType("datetime")
    shim.__dict__.update({k: v for k, v in vars(_datetime).items() if not k.startswith("__")})
    vars(shim).update(datetime=FrozenDatetime, frozen=True)
    for name, module in list(sys.modules.items()):
        current = getattr(module, "datetime", None)
        if name.split(".")[0] == "tool_sandbox" and (current is _datetime or getattr(current, "frozen", False)):
            vars(module)["datetime"] = shim


# ------------------------------------------------------------------------------------------ probes


def _values(frame: Any) -> list[float | None]:
    column = frame.get_column(frame.columns[0]).to_list()
    return [None if value is None or (isinstance(value, float) and math.isnan(value)) else round(float(value), 6)
            for value in column]


def classify_column(function: Any, column: str, pl: Any) -> dict[str, Any]:
    """What a column similarity does, from its answers on probe cells (called as the evaluator calls it)."""
    def answer(values: list[Any], value: Any, dtype: Any) -> list[float | None] | None:
        frame = pl.DataFrame({column: values}, schema={column: dtype})
        try:
            return _values(function(dataframe=frame, column_name=column, value=value))
        except Exception:
            return None

    text = answer(["red fox jumps", "red fox", "a red fox jumps high", "blue"], "red fox jumps", pl.String)
    if text == [1.0, 0.0, 0.0, 0.0]:
        return {"kind": "exact"}
    if text == [1.0, 1.0, 1.0, 1.0]:
        return {"kind": "any"}
    if text == [1.0, 0.0, 1.0, 0.0]:
        return {"kind": "contains"}
    if text and text[0] == 1.0 and 0.0 < (text[1] or 0.0) < 1.0 and text[3] == 0.0:
        return {"kind": "rouge"}
    trace = json.dumps({"tool_name": "t", "arguments": {"a": 1}})
    traces = answer([[json.dumps({"tool_name": "t", "arguments": {"a": 1, "b": 2}, "result": None})],
                     [json.dumps({"tool_name": "t", "arguments": {"a": 3}, "result": None})],
                     [json.dumps({"tool_name": "u", "arguments": {"a": 1}, "result": None})]],
                    trace, pl.List(pl.String))
    keywords = getattr(function, "keywords", {}) if isinstance(function, functools.partial) else {}
    tolerance = {name: value for name, value in (keywords.get("atol_dict") or {}).items()}
    if traces == [1.0, 0.0, 0.0]:
        return {"kind": "trace", "tolerance": tolerance}
    numbers = answer([1.0, 1.0 + 1e-9, 5.0], 1.0, pl.Float64)
    if numbers is not None and tolerance.get(column) is not None:
        return {"kind": "close", "tolerance": tolerance[column]}
    raise ReadError(f"column similarity {getattr(function, '__name__', function)!r} on {column!r} answered "
                    f"{text}/{traces}/{numbers} on the probes; no known comparison behaves like that")


def classify_snapshot(function: Any, pl: Any) -> str:
    """snapshot / addition / removal / update / guardrail / fill, from answers on five tiny tables."""
    if isinstance(function, functools.partial) and {"extractor", "fill_to"} <= set(function.keywords):
        return "fill"
    schema = {"sandbox_message_index": pl.Int32, "x": pl.String}

    def table(*cells: str) -> Any:
        return pl.DataFrame({"sandbox_message_index": [1] * len(cells), "x": list(cells)}, schema=schema)

    def exact(dataframe: Any, column_name: str, value: Any, atol_dict: Any = None) -> Any:
        return dataframe.select(pl.col(column_name).eq(value).cast(pl.Float32).alias("similarity"))

    def answer(snapshot: Any, target: Any, reference: Any) -> float | None:
        try:
            return round(float(function(snapshot=snapshot, target_dataframe=target,
                                        column_similarities={"x": exact}, reference_snapshot=reference)), 6)
        except Exception:
            return None

    target = pl.DataFrame({"x": ["c"]})
    before = table("a", "b")
    answers = (
        answer(table("c"), target, before),  # the whole table is the target
        answer(table("a", "b", "c"), target, before),  # c was added
        answer(table("a"), pl.DataFrame({"x": ["b"]}), before),  # b was removed
        answer(table("a", "c"), target, before),  # b became c
        answer(table("a", "b"), None, table("a", "b")),  # nothing changed
    )
    kinds: dict[tuple[float | None, ...], str] = {(1.0, 0.0, 0.0, 0.0): "snapshot", (0.0, 1.0, 0.0, 0.0): "addition",
             (0.0, 0.0, 1.0, 0.0): "removal", (0.0, 0.0, 0.0, 1.0): "update"}
    if answers[:4] in kinds:
        return kinds[answers[:4]]
    if answers[4] == 1.0 and answer(table("a", "b"), None, table("a", "c")) == 0.0:
        return "guardrail"
    raise ReadError(f"snapshot similarity {getattr(function, '__name__', function)!r} answered {answers} on the "
                    "probes; no known comparison behaves like that")


class _Recorder(dict):
    """A mapping that answers every key with a distinct marker number and remembers what was read."""

    def __init__(self, prefix: str, markers: dict[float, str]) -> None:
        super().__init__()
        self.prefix, self.markers = prefix, markers

    def _marker(self, key: Any) -> float:
        path = f"{self.prefix}.{key}"
        for number, known in self.markers.items():
            if known == path:
                return number
        number = 1000.0 + 7.123456 * (len(self.markers) + 1)
        self.markers[number] = path
        return number

    def __getitem__(self, key: Any) -> float:
        return self._marker(key)

    def get(self, key: Any, default: Any = None) -> float:
        return self._marker(key)

    def __contains__(self, key: object) -> bool:
        return True


def classify_extractor(extractor: Any) -> list[dict[str, Any]]:
    """Which trace values an extractor copies into which target names, and in which formats.

    Two probes: the trace's result as a recording mapping (keys read from it), and as a bare number.
    Each returned value is matched to a marker: a number (taken as is) or text in one of FORMATS.
    """
    def recognise(value: Any, markers: dict[float, str]) -> tuple[str, str | None] | None:
        for number, path in markers.items():
            if isinstance(value, bool):
                continue
            if isinstance(value, int | float) and (value == number or value == int(number)):
                return path, None
            if isinstance(value, str):
                for form in FORMATS:
                    if value == form.format(number):
                        return path, form
        return None

    for result_is_mapping in (True, False):
        markers: dict[float, str] = {}
        result: Any = _Recorder("result", markers) if result_is_mapping else 1000.0
        if not result_is_mapping:
            markers[1000.0] = "result"
        trace = {"tool_name": "probe", "arguments": _Recorder("arguments", markers), "result": result}
        try:
            produced = extractor(trace)
        except Exception:
            continue
        if not produced:
            continue
        fills: dict[str, dict[str, Any]] = {}
        for alternative in produced:
            for name, value in alternative.items():
                found = recognise(value, markers)
                if found is None:
                    raise ReadError(f"extractor {getattr(extractor, '__name__', extractor)!r} returned {value!r} "
                                    f"for {name!r}, which is no value of the probe trace")
                path, form = found
                entry = fills.setdefault(name, {"path": path, "formats": []})
                if form is not None and form not in entry["formats"]:
                    entry["formats"].append(form)
        return [{"name": name, **entry} for name, entry in fills.items()]
    raise ReadError(f"extractor {getattr(extractor, '__name__', extractor)!r} extracted nothing from either probe")


# ------------------------------------------------------------------------------------------- reading


def _plain(value: Any) -> Any:
    """Enum members and other str subclasses → str; tuples → lists; recursively."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


if TYPE_CHECKING:  # annotations only: the reference's interpreter may predate `X | Y` at runtime
    Cache = dict[int | tuple[int, str], Any]
    """What a milestone's functions were classified as: by id of a snapshot function, or of a column's
    measure with the column (a measure object is shared by many constraints of a scenario)."""


def read_constraint(constraint: Any, pl: Any, cache: Cache) -> dict[str, Any] | None:
    """One snapshot constraint as JSON (None for an automatic guardrail, which converters re-derive)."""
    function = constraint.snapshot_constraint
    if isinstance(function, functools.partial):  # a partial is made per constraint: nothing to share
        kind = classify_snapshot(function, pl)
    else:
        if id(function) not in cache:
            cache[id(function)] = classify_snapshot(function, pl)
        kind = cache[id(function)]
    if kind == "guardrail":
        return None
    target = constraint.target_dataframe
    rows = _plain(target.to_dicts()) if target is not None else []
    columns = {}
    for column in (target.columns if target is not None else []):
        measure = constraint.column_similarity_measure[column]
        key = (id(measure), column)
        if key not in cache:
            cache[key] = classify_column(measure, column, pl)
        columns[column] = _plain(cache[key])
    entry: dict[str, Any] = {"table": str(constraint.database_namespace), "kind": kind,
                             "reference": constraint.reference_milestone_node_index, "rows": rows,
                             "columns": columns}
    if kind == "fill":
        entry["fill_to"] = str(function.keywords["fill_to"])
        entry["values"] = classify_extractor(function.keywords["extractor"])
    return entry


def read_events(matcher: Any, pl: Any, cache: Cache) -> dict[str, Any]:
    events = []
    for milestone in matcher.milestones:
        constraints = [read_constraint(constraint, pl, cache) for constraint in milestone.snapshot_constraints]
        events.append({"constraints": [c for c in constraints if c is not None],
                       "guarded_tables": sorted(str(t) for t in milestone.guardrail_database_list or [])})
    edges = [[int(a), int(b)] for a, b in (matcher.edge_list or [])] if len(events) > 1 else []
    return {"events": events, "edges": edges}


def read_tables(context: Any, namespace_type: Any) -> dict[str, list[dict[str, Any]]]:
    return {str(namespace): _plain(context.get_database(namespace=namespace).to_dicts())
            for namespace in namespace_type if str(namespace).lower() != "sandbox"}


def mark_times(first: Any, second: Any, now: float) -> Any:
    """Numbers that differ between two readings taken with clocks frozen at different moments are
    relative to now: they become `{"seconds_from_now": x}`. Equal numbers are absolute and stay. Texts
    holding JSON (tool traces) are compared inside."""
    if isinstance(first, dict) and isinstance(second, dict) and first.keys() == second.keys():
        return {key: mark_times(first[key], second[key], now) for key in first}
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        return [mark_times(a, b, now) for a, b in zip(first, second, strict=False)]
    if isinstance(first, str) and isinstance(second, str) and first != second and first[:1] in "[{":
        try:
            return json.dumps(mark_times(json.loads(first), json.loads(second), now), ensure_ascii=False)
        except ValueError:
            return first
    if isinstance(first, float) and isinstance(second, float) and first != second:
        return {"seconds_from_now": round(first - now, 6)}
    return first


def read_scenario(name: str, scenario: Any, pl: Any, namespace_type: Any,
                  cache: Cache) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the item: name, tools, augmentations; the detail shared by every variant of a base)."""
    context = scenario.starting_context
    sandbox = next(n for n in namespace_type if str(n).lower() == "sandbox")
    messages = _plain(context.get_database(namespace=sandbox, get_all_history_snapshots=True)
                      .select("sender", "recipient", "content", "visible_to").to_dicts())
    detail = {
        "max_messages": scenario.max_messages,
        "messages": messages,
        "tables": read_tables(context, namespace_type),
        "milestones": read_events(scenario.evaluation.milestone_matcher, pl, cache),
        "minefields": read_events(scenario.evaluation.minefield_matcher, pl, cache),
    }
    item = {"name": name, "tools": sorted(context.tool_allow_list or []), "deny": sorted(context.tool_deny_list or []),
            "augmentations": [str(a) for a in context.tool_augmentation_list],
            "categories": [str(c) for c in scenario.categories],
            # the names the agent sees (scrambled in the name-scrambled variant)
            "agent_names": {tool: context.get_agent_facing_tool_name(tool) for tool in context.tool_allow_list or []}}
    return item, detail


def package_source(package: Any) -> dict[str, Any]:
    """Version of the installed distribution and, when it is a git checkout, its commit."""
    from importlib import metadata

    try:
        version = metadata.version(package.__name__)
    except metadata.PackageNotFoundError:
        version = "unknown"
    commit = None
    directory = os.path.dirname(os.path.abspath(package.__file__))
    for _ in range(4):
        head = os.path.join(directory, ".git", "HEAD")
        if os.path.isfile(head):
            with open(head, encoding="utf-8") as file:
                ref = file.read().strip()
            if ref.startswith("ref: "):
                path = os.path.join(directory, ".git", *ref[5:].split("/"))
                if os.path.isfile(path):
                    with open(path, encoding="utf-8") as file:
                        commit = file.read().strip()
                else:
                    packed = os.path.join(directory, ".git", "packed-refs")
                    if os.path.isfile(packed):
                        with open(packed, encoding="utf-8") as file:
                            commit = next((line.split()[0] for line in file if line.strip().endswith(ref[5:])), None)
            else:
                commit = ref
            break
        directory = os.path.dirname(directory)
    return {"package": package.__name__, "version": version, "commit": commit}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--now", required=True, help="local ISO time the clock is frozen at")
    args = parser.parse_args()
    try:
        import tool_sandbox
    except ImportError as error:
        print(json.dumps({"error": "missing", "detail": str(error)}))
        return 3
    import polars as pl

    # Importing the scenario modules loads every tool_sandbox module that reads the clock.
    from tool_sandbox.common import execution_context
    from tool_sandbox.common.tool_discovery import ToolBackend
    from tool_sandbox.scenarios import named_scenarios

    now = _datetime.datetime.fromisoformat(args.now)
    readings = []
    for moment in (now, now + _datetime.timedelta(days=3, hours=7, minutes=13, seconds=11)):
        freeze_clock(moment)
        random.seed(42)  # the reference shuffles allow lists; only their order depends on it
        scenarios = named_scenarios(preferred_tool_backend=ToolBackend.DEFAULT)
        cache: Cache = {}
        readings.append([read_scenario(name, scenario, pl, execution_context.DatabaseNamespace, cache)
                         for name, scenario in scenarios.items()])
    items, details = [], {}
    for (item, detail), (_, later) in zip(*readings, strict=False):
        detail = mark_times(detail, later, now.timestamp())
        digest = hashlib.sha256(json.dumps(detail, sort_keys=True).encode()).hexdigest()[:16]
        details[digest] = detail
        items.append({**item, "detail": digest})
    print(json.dumps({"source": package_source(tool_sandbox), "now": args.now, "timezone": os.environ.get("TZ"),
                      "items": items, "details": details}, sort_keys=True, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ReadError as error:
        print(json.dumps({"error": "unreadable", "detail": str(error)}))
        sys.exit(4)
