"""The reader's JSON (see `read_toolsandbox.py`) → our scenario files' data, one per base scenario.

Everything is generic over the reference's constructs: tables, comparison kinds, column kinds and
extracted values arrive already classified, and map one to one onto milestone fields
(docs/scenario-format.md). A construct with no counterpart raises `ConversionError` naming the base
scenario and the construct, instead of being dropped silently.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pytest_toolsandbox.basics.vocabulary import CATEGORIES, VARIANT_CATEGORIES
from pytest_toolsandbox.importer.missing import missing_from_denied
from pytest_toolsandbox.importer.times import absolute_time, relative_time
from pytest_toolsandbox.world.clock import FrozenClock

INSUFFICIENT = "insufficient_information"
TABLES = {"setting": "settings", "contact": "contacts", "messaging": "messaging", "reminder": "reminders"}
"""The reference's table namespaces (lower-cased) → ours."""

DEFAULT_COLUMN_KINDS = {("sandbox", "content"): "rouge", ("contacts", "relationship"): "rouge",
                        ("messaging", "content"): "rouge", ("reminders", "content"): "rouge"}
"""Our default comparison per column where it is not `exact` (docs/scoring.md); others are exact."""


class ConversionError(ValueError):
    """A reference construct with no counterpart in our format; the message names scenario and construct."""


@dataclass
class Base:
    """One base scenario with the items (augmentation variants) that share its detail."""

    name: str
    item: dict[str, Any]
    detail: dict[str, Any]
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)  # our variant name → reference item


def _lower(value: Any) -> str:
    return str(value).lower()


def variant_of(item: dict[str, Any]) -> str:
    """Our variant name for a reference item, from the augmentation category it carries."""
    by_category = {category: name for name, category in VARIANT_CATEGORIES.items()}
    categories = [by_category[_lower(c)] for c in item["categories"] if _lower(c) in by_category]
    scrambles = [by_category[_lower(a)] for a in item["augmentations"] if _lower(a) in by_category]
    if scrambles:
        return scrambles[-1]
    if not categories:
        raise ConversionError(f"{item['name']}: no augmentation category among {item['categories']}")
    return categories[-1]


def group_bases(data: dict[str, Any]) -> list[Base]:
    """Items grouped under their base scenario (the item in the no-distraction variant); every other item
    belongs to the base whose name it extends and must share its detail (only tools differ)."""
    bases: dict[str, Base] = {}
    others = []
    for item in data["items"]:
        if variant_of(item) == "base":
            bases[item["name"]] = Base(item["name"], item, data["details"][item["detail"]], {"base": item})
        else:
            others.append(item)
    for item in others:
        owners = [name for name in bases if item["name"].startswith(name + "_")]
        if not owners:
            raise ConversionError(f"{item['name']}: no base scenario whose name it extends")
        base = bases[max(owners, key=len)]
        if item["detail"] != base.item["detail"]:
            raise ConversionError(f"{item['name']}: differs from its base {base.name} in more than its tools")
        base.variants[variant_of(item)] = item
    return sorted(bases.values(), key=lambda base: base.name)


# --------------------------------------------------------------------------------------------- values


def _is_timestamp(name: str) -> bool:
    return "timestamp" in name


def _time_value(value: Any, clock: FrozenClock) -> Any:
    """A time the reader marked relative → a relative expression; an absolute POSIX number in a time
    column or argument → the local date and time it denotes."""
    if isinstance(value, dict) and set(value) == {"seconds_from_now"}:
        return relative_time(value["seconds_from_now"], clock)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return absolute_time(float(value), clock)
    return value


def _cell(column: str, value: Any, clock: FrozenClock) -> Any:
    if _is_timestamp(column) or isinstance(value, dict):
        return _time_value(value, clock)
    if value in ("inf", "-inf"):
        return math.inf if value == "inf" else -math.inf
    return value


def _row(row: dict[str, Any], clock: FrozenClock) -> dict[str, Any]:
    return {column: _cell(column, value, clock) for column, value in row.items()}


# ----------------------------------------------------------------------------------------------- world


def world_patch(detail: dict[str, Any], clock: FrozenClock) -> dict[str, Any]:
    """The reference's starting tables, replacing ours: settings overwritten, other tables cleared and
    refilled with the reference's rows (ids kept, except a repeated id, which is seeded instead)."""
    tables = {TABLES[_lower(name)]: rows for name, rows in detail["tables"].items()}
    patch: dict[str, Any] = {"settings": dict(tables["settings"][0]) if tables.get("settings") else {},
                             "clear": ["contacts", "messaging", "reminders"]}
    keys = {"contacts": "person_id", "messaging": "message_id", "reminders": "reminder_id"}
    for table in ("contacts", "messaging", "reminders"):
        seen: set[str] = set()
        rows = []
        for row in tables.get(table, []):
            row = _row(row, clock)
            key = row.get(keys[table])
            if key is not None and key in seen:
                row.pop(keys[table])
            elif key is not None:
                seen.add(key)
            rows.append(row)
        patch[table] = rows
    return patch


# ------------------------------------------------------------------------------------------ milestones


def _measure(table: str, column: str, spec: dict[str, Any]) -> Any:
    """Our `match` entry for a column, or None when it is our default for that column."""
    kind = spec["kind"]
    if kind == "close":
        return {"close": spec["tolerance"]}
    default = DEFAULT_COLUMN_KINDS.get((table, column), "exact")
    if kind in ("exact", "rouge", "contains", "any"):
        return None if kind == default else kind
    raise ConversionError(f"column {column!r} of table {table!r}: comparison {kind!r} has no counterpart")


def _trace_alternatives(text: str, clock: FrozenClock) -> list[dict[str, dict[str, Any]]]:
    trace = json.loads(text)
    traces = trace if isinstance(trace, list) else [trace]
    return [{entry["tool_name"]: _row(entry["arguments"], clock)} for entry in traces]


@dataclass
class _Event:
    """One milestone being assembled from its constraints."""

    fields: dict[str, Any] = field(default_factory=dict)

    def add_text(self, kind: str, text: str, match: Any) -> None:
        entry = text if match is None else {"text": text, "match": match}
        said = self.fields.get(kind)
        self.fields[kind] = entry if said is None else [*([said] if not isinstance(said, list) else said), entry]


def known_tools() -> set[str]:
    from pytest_toolsandbox.tools.registry import all_tools

    return set(all_tools())


def _sandbox_constraint(event: _Event, constraint: dict[str, Any], names: list[str],
                        clock: FrozenClock, where: str) -> None:
    (row,) = constraint["rows"]
    sender, recipient = _lower(row.get("sender")), _lower(row.get("recipient"))
    columns = constraint["columns"]
    extra = set(row) - {"sender", "recipient", "content", "tool_trace"}
    if extra:
        raise ConversionError(f"{where}: message column(s) {sorted(extra)} have no counterpart")
    if constraint["kind"] not in ("snapshot", "fill") or (constraint["kind"] == "snapshot"
                                                          and constraint["reference"] is not None):
        raise ConversionError(f"{where}: a message compared by {constraint['kind']!r} (reference "
                              f"{constraint['reference']}) has no counterpart")
    loose = [column for column in ("sender", "recipient") if column in row and columns[column]["kind"] != "exact"]
    if loose:
        raise ConversionError(f"{where}: message {loose[0]} compared by {columns[loose[0]]['kind']!r} has no "
                              "counterpart")
    if constraint["kind"] == "fill" and constraint.get("fill_to") not in row:
        raise ConversionError(f"{where}: values filled into {constraint.get('fill_to')!r} have no counterpart")
    if "tool_trace" in row:
        if (sender, recipient) != ("execution_environment", "agent"):
            raise ConversionError(f"{where}: a tool trace on a {sender}→{recipient} message has no counterpart")
        spec = columns["tool_trace"]
        if spec["kind"] != "trace":
            raise ConversionError(f"{where}: tool traces compared by {spec['kind']!r} have no counterpart")
        alternatives = _trace_alternatives(row["tool_trace"], clock)
        call = alternatives[0] if len(alternatives) == 1 else alternatives
        if event.fields.get("tool_call", call) != call:  # several fills of one call repeat its target
            raise ConversionError(f"{where}: two different tool calls on one message have no counterpart")
        event.fields["tool_call"] = call
        # Several constraints on one call (one per filled argument) each bring their own tolerances: all are kept.
        tolerance = event.fields.get("tolerance", {})
        for name, value in spec.get("tolerance", {}).items():
            value = math.inf if value == "inf" else value
            if tolerance.get(name, value) != value:
                raise ConversionError(f"{where}: argument {name!r} has two tolerances ({tolerance[name]}, {value})")
            tolerance[name] = value
        if tolerance:
            event.fields["tolerance"] = tolerance
    if "content" in row and (sender, recipient) == ("agent", "execution_environment"):
        # The agent's call message: the reference holds it as the code of the call, so a `contains`
        # target naming a tool means "the agent tried to call it".
        if columns["content"]["kind"] != "contains" or row["content"] not in known_tools():
            raise ConversionError(f"{where}: a call message compared with {row['content']!r} has no counterpart")
        event.fields["attempted_call"] = {row["content"]: {}}
    elif "content" in row:
        kind = {("agent", "user"): "agent_says", ("user", "agent"): "user_says"}.get((sender, recipient))
        if kind is None:
            raise ConversionError(f"{where}: text on a {sender}→{recipient} message has no counterpart")
        match = _measure("sandbox", "content", columns["content"])
        event.add_text(kind, row["content"], match)
    if constraint["kind"] == "fill":
        fill = {"milestone": names[constraint["reference"]],
                "values": {value["name"]: value["path"] for value in constraint["values"]}}
        formats = [form for value in constraint["values"] for form in value["formats"]]
        if formats:
            fill["formats"] = list(dict.fromkeys(formats))
        fills = event.fields.setdefault("fill_from", [])
        if fill not in fills:  # each text target of a milestone repeats the same fill
            fills.append(fill)


def _table_constraint(event: _Event, constraint: dict[str, Any], names: list[str],
                      clock: FrozenClock, where: str) -> None:
    table = TABLES[_lower(constraint["table"])]
    kind = {"snapshot": "world", "addition": "added", "removal": "removed", "update": "updated"}[constraint["kind"]]
    rows = [_row(row, clock) for row in constraint["rows"]]
    value: Any = rows[0] if table == "settings" and kind == "world" and len(rows) == 1 else rows
    event.fields.setdefault(kind, {})[table] = value
    for column, spec in constraint["columns"].items():
        measure = _measure(table, column, spec)
        if measure is not None:
            previous = event.fields.setdefault("match", {}).get(column)
            if previous not in (None, measure):
                raise ConversionError(f"{where}: column {column!r} compared two ways in one milestone")
            event.fields["match"][column] = measure
    if kind != "world":
        reference = constraint["reference"]
        since = "initial" if reference == -1 else names[reference]
        if event.fields.get("since", since) != since:
            raise ConversionError(f"{where}: two reference moments in one milestone")
        event.fields["since"] = since


def _names(events: list[dict[str, Any]], prefix: str) -> list[str]:
    """Stable, readable milestone names: what the milestone is about, numbered when repeated."""
    labels = []
    for event in events:
        constraint = event["constraints"][0] if event["constraints"] else {}
        label = prefix
        if constraint.get("table", "").lower() == "sandbox":
            row = constraint["rows"][0]
            if "tool_trace" in row:
                trace = json.loads(row["tool_trace"])
                label = (trace[0] if isinstance(trace, list) else trace)["tool_name"]
            elif _lower(row.get("recipient")) == "execution_environment":
                label = f"tried_{row['content']}"
            else:
                label = "answer" if _lower(row.get("sender")) == "agent" else "user_reply"
        elif constraint:
            kind = {"snapshot": "state", "addition": "added", "removal": "removed", "update": "updated"}[
                constraint["kind"]]
            table = TABLES[_lower(constraint["table"])]
            label = f"{kind}_{table}"
            if table == "settings" and kind == "state":
                row = constraint["rows"][0]
                label = "_".join(f"{c}_{'on' if v else 'off'}" if isinstance(v, bool) else c for c, v in row.items())
        labels.append(label)
    counts = Counter(labels)
    seen: Counter[str] = Counter()
    names = []
    for label in labels:
        seen[label] += 1
        names.append(label if counts[label] == 1 else f"{label}_{seen[label]}")
    return names


def convert_events(block: dict[str, Any], prefix: str, clock: FrozenClock,
                   where: str) -> dict[str, dict[str, Any]]:
    """A milestone (or minefield) DAG → our named declarations with `after`, `since`, `fill_from`."""
    events = block["events"]
    names = _names(events, prefix)
    after: dict[int, list[str]] = {}
    for source, target in block["edges"]:
        after.setdefault(target, []).append(names[source])
    converted = {}
    for position, event_data in enumerate(events):
        event = _Event()
        here = f"{where}.{names[position]}"
        if position in after:
            event.fields["after"] = after[position]
        for constraint in event_data["constraints"]:
            if constraint["table"].lower() == "sandbox":
                _sandbox_constraint(event, constraint, names, clock, here)
            elif constraint["kind"] == "fill":
                raise ConversionError(f"{here}: values filled into table {constraint['table']!r} have no counterpart")
            else:
                _table_constraint(event, constraint, names, clock, here)
        fills = event.fields.get("fill_from")
        if isinstance(fills, list) and len(fills) == 1:
            event.fields["fill_from"] = fills[0]
        guarded = {TABLES[_lower(t)] for t in event_data["guarded_tables"] if _lower(t) in TABLES}
        excluded = [table for table in TABLES.values() if table not in guarded]
        if excluded:
            event.fields["no_guardrails"] = excluded
        converted[names[position]] = _ordered(event.fields)
    return converted


_FIELD_ORDER = ("after", "world", "added", "removed", "updated", "since", "tool_call", "attempted_call", "tolerance",
                "agent_says", "user_says", "fill_from", "match", "guardrails", "no_guardrails")


def _ordered(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: fields[key] for key in _FIELD_ORDER if key in fields}


# ----------------------------------------------------------------------------------------------- users


@dataclass(frozen=True)
class Dialogue:
    """A user-simulator system message (instruction + task) and the turns that follow it."""

    instruction: str
    turns: tuple[dict[str, str], ...]


def dialogues(messages: list[dict[str, Any]]) -> tuple[list[Dialogue], Dialogue]:
    """(the demonstrations shown only to the simulated user, the live opening) from the message log."""
    demonstrations: list[Dialogue] = []
    current: list[Any] = []
    live = None
    for message in messages:
        sender, recipient = _lower(message["sender"]), _lower(message["recipient"])
        demo = [_lower(role) for role in (message.get("visible_to") or [])] == ["user"]
        if (sender, recipient) == ("system", "user"):
            current = [message["content"], []]
            if demo:
                demonstrations.append(Dialogue(current[0], ()))
            else:
                live = current
            continue
        if not current:
            continue
        if sender == "user" and recipient == "agent":
            current[1].append({"user": message["content"]})
        elif sender == "agent" and recipient == "user":
            current[1].append({"agent": message["content"]})
        elif sender == "user" and recipient == "execution_environment":
            current[1].append({"user_calls": message["content"].strip()})
        if demo:
            demonstrations[-1] = Dialogue(demonstrations[-1].instruction, tuple(current[1]))
    if live is None:
        raise ConversionError("no instruction for the simulated user (system → user message)")
    return demonstrations, Dialogue(live[0], tuple(live[1]))


def common_prefix(texts: list[str]) -> str:
    """The longest common start of all texts, cut back to the end of a line or sentence."""
    if not texts:
        return ""
    prefix = texts[0]
    for text in texts[1:]:
        while not text.startswith(prefix):
            prefix = prefix[:-1]
    cut = max(prefix.rfind("\n"), prefix.rfind(": "), prefix.rfind(". "))
    return prefix[: cut + 2] if cut >= 0 and prefix[cut] != "\n" else prefix[: cut + 1]


# -------------------------------------------------------------------------------------------- scenario


def reference_augmentations(base: Base) -> dict[str, Any]:
    """The reference's own distraction tools (per count) and scrambled names, so that every variant offers
    the reference's set: its ranking breaks ties in the order its tool discovery happens to produce."""
    found: dict[str, Any] = {}
    counts = {"3_distraction_tools": 3, "10_distraction_tools": 10}
    for variant, count in counts.items():
        if variant in base.variants:
            added = sorted(set(base.variants[variant]["tools"]) - set(base.item["tools"]))
            found.setdefault("distraction_tools", {})[count] = added
    scrambled = base.variants.get("tool_name_scrambled")
    if scrambled is not None:
        offered = set(scrambled["tools"]) - {"end_conversation"} - set(scrambled["deny"])
        names = scrambled.get("agent_names", {})
        missing = sorted(offered - set(names))
        if missing:
            raise ConversionError(f"{base.name}: the name-scrambled variant gives no name for {missing}")
        found["scrambled_names"] = {tool: names[tool] for tool in sorted(offered)}
    return found


def scenario_data(base: Base, prefix: str, shared: list[Dialogue], clock: FrozenClock) -> dict[str, Any]:
    """Our scenario file's data for one base (without its reference dialogue, added by the witness)."""
    detail = base.detail
    demonstrations, live = dialogues(detail["messages"])
    first = [turn["user"] for turn in live.turns if "user" in turn]
    if len(first) != 1 or len(live.turns) != 1:
        raise ConversionError(f"{base.name}: the conversation does not open with exactly one user message")
    own = [demo for demo in demonstrations if demo not in shared]
    user: dict[str, Any] = {"goal": live.instruction.removeprefix(prefix).strip(), "first_message": first[0]}
    if own:
        user["demonstrations"] = [{"goal": demo.instruction.removeprefix(prefix).strip(), "turns": list(demo.turns)}
                                  for demo in own]
    categories = [c for c in (_lower(c) for c in base.item["categories"]) if c in CATEGORIES]
    tools = [tool for tool in base.item["tools"] if tool != "end_conversation"]
    data: dict[str, Any] = {
        "name": base.name,
        "categories": categories,
        "world": world_patch(detail, clock),
        "user": user,
        "tools": tools,
    }
    if base.item["deny"]:
        data["deny"] = base.item["deny"]
        if INSUFFICIENT in categories:  # what the explanation must name: what the withheld tools would give
            data["missing"] = missing_from_denied(base.item["deny"])
    data.update(reference_augmentations(base))
    if detail["max_messages"] != 30:
        data["max_messages"] = detail["max_messages"]
    data["milestones"] = convert_events(detail["milestones"], "milestone", clock, f"{base.name}: milestones")
    minefields = convert_events(detail["minefields"], "minefield", clock, f"{base.name}: minefields")
    if minefields:
        data["minefields"] = minefields
    return data
