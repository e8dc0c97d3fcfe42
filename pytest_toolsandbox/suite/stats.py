"""`python -m pytest_toolsandbox stats`: what the suite contains, next to the reference benchmark.

The reference's counts are the ones documented for ToolSandbox's 129 bases × 8 augmentations (the
paper's Table 6); the minimums are issue 9's. `check()` lists every minimum the suite misses.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_toolsandbox.scenario.models import CATEGORIES
from pytest_toolsandbox.suite.features import PATH_TOOLS, SUBSTANTIAL_ROWS, SUBSTANTIAL_SETTINGS, Features
from pytest_toolsandbox.tools.augment import VARIANTS
from pytest_toolsandbox.tools.registry import ToolSpec
from pytest_toolsandbox.world.messages import Role

REFERENCE_BASES: dict[str, int] = {
    "single_tool_call": 19, "multiple_tool_call": 82, "single_user_turn": 73, "multiple_user_turn": 28,
    "state_dependency": 24, "canonicalization": 59, "insufficient_information": 28,
}
REFERENCE_TOTAL_BASES = 129
REFERENCE_MILESTONES = {0: 26, 1: 5, 2: 33, 3: 38, 4: 12, 5: 13, 6: 2}
"""Milestones per base in the reference benchmark."""

MINIMUM_BASES: dict[str, int] = {
    "single_tool_call": 20, "multiple_tool_call": 85, "single_user_turn": 75, "multiple_user_turn": 30,
    "state_dependency": 30, "canonicalization": 60, "insufficient_information": 30,
}
MINIMUMS: dict[str, int] = {
    "bases": 150, "items": 1200, "nested_state_dependency": 8, "paraphrase_pairs": 20,
    "parallel_or_order_dependent": 15, "world_differs": 10,
}


def _distribution(values: Sequence[int]) -> dict[str, Any]:
    if not values:
        return {"histogram": {}, "min": 0, "median": 0, "mean": 0.0, "max": 0}
    return {"histogram": {str(k): v for k, v in sorted(Counter(values).items())}, "min": min(values),
            "median": statistics.median(values), "mean": round(statistics.fmean(values), 2), "max": max(values)}


def compute(scenarios: Sequence[Features], registry: Mapping[str, ToolSpec]) -> dict[str, Any]:
    """Every count `stats` prints, as plain data (the `--json` output)."""
    bases = len(scenarios)
    variants = len(VARIANTS)
    per_category = {category: sum(category in s.categories for s in scenarios) for category in CATEGORIES}
    resolved = {str(Path(s.path).resolve()): s.path for s in scenarios}
    pairs = sorted((s.path, resolved[s.paraphrase_of]) for s in scenarios if s.paraphrase_of in resolved)
    tools = {}
    for name, spec in registry.items():
        tools[name] = {
            "domain": spec.domain,
            "named": sum(name in s.named_tools for s in scenarios),
            "effect": sum(name in s.effect_tools for s in scenarios),
            "milestone_or_minefield": sum(name in s.named_tools | s.effect_tools for s in scenarios),
            "reference": sum(name in s.reference_tools for s in scenarios),
            "user_tool": spec.visible_to is Role.USER,
        }
    paths = {table: {operation: (None if tool is None else sum((table, operation) in s.paths for s in scenarios))
                     for operation, tool in operations.items()} for table, operations in PATH_TOOLS.items()}
    return {
        "bases": bases,
        "items": bases * variants,
        "categories": {category: {"bases": count, "items": count * variants,
                                  "reference_bases": REFERENCE_BASES[category],
                                  "reference_items": REFERENCE_BASES[category] * variants}
                       for category, count in per_category.items()},
        "variants": {variant.category: {"items": bases, "reference_items": REFERENCE_TOTAL_BASES}
                     for variant in VARIANTS.values()},
        "reference_total": {"bases": REFERENCE_TOTAL_BASES, "items": REFERENCE_TOTAL_BASES * variants},
        "milestones_per_scenario": _distribution([s.milestones for s in scenarios]),
        "reference_milestones_per_scenario": {str(k): v for k, v in REFERENCE_MILESTONES.items()},
        "minefields_per_scenario": _distribution([s.minefields for s in scenarios]),
        "reference_dialogue": {"steps": _distribution([s.steps for s in scenarios]),
                               "calls": _distribution([s.calls for s in scenarios]),
                               "user_turns": _distribution([s.user_turns for s in scenarios])},
        "tools": tools,
        "uncovered_tools": sorted(name for name, t in tools.items()
                                  if not t["milestone_or_minefield"] and not t["user_tool"]),
        "nested_state_dependency": sum(s.nested for s in scenarios),
        "paraphrase_pairs": len(pairs),
        "paraphrase_bases": len({path for pair in pairs for path in pair}),
        "pairs": [list(pair) for pair in pairs],
        "parallel": sum(s.parallel for s in scenarios),
        "order_dependent": sum(s.order_dependent for s in scenarios),
        "parallel_or_order_dependent": sum(s.parallel or s.order_dependent for s in scenarios),
        "world_differs": sum(s.world_differs for s in scenarios),
        "world_differs_definition": f"clear: a table, or >= {SUBSTANTIAL_ROWS} added rows, or >= "
                                    f"{SUBSTANTIAL_SETTINGS} settings differing from the default",
        "paths": paths,
    }


def check(stats: Mapping[str, Any]) -> list[str]:
    """Issue 9's minimums the suite does not meet, one line each (empty: all met)."""
    short = []
    for category, minimum in MINIMUM_BASES.items():
        have = stats["categories"][category]["bases"]
        if have < minimum:
            short.append(f"{category}: {have} bases, need {minimum}")
    for key, minimum in MINIMUMS.items():
        if stats[key] < minimum:
            short.append(f"{key}: {stats[key]}, need {minimum}")
    if stats["uncovered_tools"]:
        short.append(f"tools in no milestone or minefield: {', '.join(stats['uncovered_tools'])}")
    for table, operations in stats["paths"].items():
        missing = [operation for operation, count in operations.items() if count == 0]
        if missing:
            short.append(f"{table}: no scenario exercises {', '.join(missing)}")
    return short
