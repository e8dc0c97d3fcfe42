"""Token usage and spend: per item from the roles' `usage` counts and the price table
(`prices.json`, one file to update), totals per group of records.

An item whose requests were all replayed from its cassette reports the recorded tokens but spends
nothing; a model missing from the price table has unknown spend (null), never a guessed one.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

Record = dict[str, Any]
ROLES = ("agent", "user")
COUNTS = ("input_tokens", "output_tokens", "requests", "retries", "unknown_usage")
"""What a model role counts (roles/usage_counts.py): tokens, answered requests, retried attempts, and
answered requests whose usage was missing or invalid (their tokens are unknown, not zero)."""


@cache
def price_table() -> dict[str, dict[str, float]]:
    text = resources.files("pytest_toolsandbox.report.results").joinpath("prices.json").read_text(encoding="utf-8")
    return json.loads(text)["models"]


_MAINTAINED: dict[str, dict[str, float]] = {}
"""LiteLLM's table (report/results/litellm_prices.py), consulted before prices.json: the one given with
`use_maintained_prices`, else an installed litellm's copy, looked for at the first price asked."""
_LOOKED_FOR_LITELLM: list[bool] = []


def use_maintained_prices(table: dict[str, dict[str, float]]) -> None:
    """Price models from `table` before the bundled table (`--price-table`; set once per process)."""
    _MAINTAINED.clear()
    _MAINTAINED.update(table)
    _LOOKED_FOR_LITELLM[:] = [True]


def _maintained() -> dict[str, dict[str, float]]:
    if not _LOOKED_FOR_LITELLM:
        _LOOKED_FOR_LITELLM.append(True)
        from pytest_toolsandbox.report.results.litellm_prices import PriceTableError, installed_table, read_litellm

        source = installed_table()
        if source is not None:
            with contextlib.suppress(PriceTableError):  # an unreadable copy: the bundled table prices alone
                _MAINTAINED.update(read_litellm(source))
    return _MAINTAINED


def price(model: str | None) -> dict[str, float] | None:
    """USD per million input/output tokens of `model`: the maintained table's entry, else the bundled
    table's exact id, else its longest known prefix."""
    if not model:
        return None
    maintained = _maintained()
    if maintained:
        from pytest_toolsandbox.report.results.litellm_prices import lookup

        found = lookup(maintained, model)
        if found is not None:
            return found
    table = price_table()
    if model in table:
        return table[model]
    prefixes = [name for name in table if model.startswith(name)]
    return table[max(prefixes, key=len)] if prefixes else None


def count(tokens: Mapping[str, Any], key: str) -> int:
    """A count from a role's `usage` (untrusted data): missing, None, text, NaN or negative count 0."""
    value = tokens.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return 0
    return int(value)


def cost(model: str | None, tokens: Mapping[str, int] | None) -> float | None:
    """List-price cost of `tokens` on `model`; None when the model has no price."""
    rates = price(model)
    if tokens is None or rates is None:
        return None
    return (count(tokens, "input_tokens") * rates["input"] + count(tokens, "output_tokens") * rates["output"]) / 1e6


def usage_fields(tokens: Mapping[str, Mapping[str, int] | None], models: Mapping[str, str | None],
                 replayed: bool | None) -> Record:
    """`spend_usd` per role and in total (zero when replayed), and whether the item was replayed."""
    spend: dict[str, float | None] = {}
    for role in ROLES:
        if tokens.get(role) is None:
            spend[role] = None
        else:
            spend[role] = 0.0 if replayed else cost(models.get(role), tokens[role])
    known = [value for role, value in spend.items() if tokens.get(role) is not None]
    priced = [value for value in known if value is not None]
    total = round(sum(priced), 8) if known and len(priced) == len(known) else None
    return {"spend_usd": {**spend, "total": total}, "replayed": replayed}


def usage_totals(records: Sequence[Record]) -> dict[str, Any]:
    """Summed tokens per role, spend (known part), and how many items were replayed."""
    totals: dict[str, Any] = {role: dict.fromkeys(COUNTS, 0) for role in ROLES}
    spend, unpriced, replayed = 0.0, 0, 0
    for record in records:
        for role in ROLES:
            counts = (record.get("tokens") or {}).get(role) or {}
            for key in totals[role]:
                totals[role][key] += count(counts, key)
        item = (record.get("spend_usd") or {}).get("total")
        if item is None and any((record.get("tokens") or {}).get(role) for role in ROLES):
            unpriced += 1
        spend += item or 0.0
        replayed += bool(record.get("replayed"))
    return {"tokens": totals, "spend_usd": round(spend, 8), "unpriced_items": unpriced, "replayed_items": replayed}


def usage_line(totals: Mapping[str, Any]) -> str | None:
    """One terminal line, or None when no role sent a request."""
    tokens = totals["tokens"]
    if not any(count(tokens[role], "requests") or count(tokens[role], "retries") for role in ROLES):
        return None
    parts = [f"{role} {tokens[role]['input_tokens']:,} in / {tokens[role]['output_tokens']:,} out tokens "
             f"({_requests(tokens[role])})" for role in ROLES
             if count(tokens[role], "requests") or count(tokens[role], "retries")]
    spend = f"spend ${totals['spend_usd']:.4f}"
    if totals["unpriced_items"]:
        spend += f" + {totals['unpriced_items']} item(s) on unpriced models"
    if totals["replayed_items"]:
        spend += f"; {totals['replayed_items']} item(s) replayed from cassettes (no spend)"
    return "usage: " + ", ".join(parts) + "; " + spend


def _requests(counts: Mapping[str, Any]) -> str:
    """"12 requests", with the retried attempts and the answers without valid usage when there were any."""
    text = f"{count(counts, 'requests')} requests"
    if count(counts, "retries"):
        text += f", {count(counts, 'retries')} retried"
    if count(counts, "unknown_usage"):
        text += f", {count(counts, 'unknown_usage')} without valid usage, not counted"
    return text


def unknown_usage(record: Record) -> int:
    """Answered requests of an item whose usage the server did not report validly."""
    tokens = record.get("tokens")
    if not isinstance(tokens, Mapping):
        return 0
    return sum(count(tokens[role], "unknown_usage") for role in ROLES if isinstance(tokens.get(role), Mapping))


# --- figures for the report pages: tokens and cost columns appear only when some record knows them ---

def record_tokens(record: Record) -> int | None:
    """Input plus output tokens of the agent and the user of one item; None when no role reported any."""
    tokens = record.get("tokens")
    if not isinstance(tokens, Mapping):
        return None
    counts = [role_tokens for role in ROLES if isinstance(role_tokens := tokens.get(role), Mapping)]
    if not counts:
        return None
    return sum(count(role_tokens, "input_tokens") + count(role_tokens, "output_tokens") for role_tokens in counts)


def record_cost(record: Record) -> float | None:
    """The item's spend in dollars (zero when replayed); None when unknown."""
    total = (record.get("spend_usd") or {}).get("total")
    return float(total) if isinstance(total, int | float) and not isinstance(total, bool) else None


def usage_known(records: Iterable[Record]) -> tuple[bool, bool]:
    """(tokens known for some record, cost known for some record)."""
    records = list(records)
    return (any(record_tokens(r) is not None for r in records), any(record_cost(r) is not None for r in records))


def mean_tokens(records: Iterable[Record]) -> float | None:
    counts = [count for count in map(record_tokens, records) if count is not None]
    return sum(counts) / len(counts) if counts else None


def total_cost(records: Iterable[Record]) -> float | None:
    costs = [cost for cost in map(record_cost, records) if cost is not None]
    return sum(costs) if costs else None
