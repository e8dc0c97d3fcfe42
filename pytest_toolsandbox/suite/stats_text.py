"""The `stats` numbers as a terminal report (the paper's Table 6 layout, then the suite's other counts)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _histogram(distribution: Mapping[str, Any]) -> str:
    bars = " ".join(f"{value}:{count}" for value, count in distribution["histogram"].items())
    return (f"{bars}  (min {distribution['min']}, median {distribution['median']}, mean {distribution['mean']}, "
            f"max {distribution['max']})")


def render(stats: Mapping[str, Any], shortfalls: list[str] | None = None) -> str:
    """The report; `shortfalls` (from `check`) adds the verdict on issue 9's minimums."""
    total = stats["reference_total"]
    lines = [f"{stats['bases']} bases × 8 variants = {stats['items']} items "
             f"(reference benchmark: {total['bases']} bases, {total['items']} items)", "",
             f"{'category':<28}{'bases':>7}{'items':>7}   {'ref bases':>9}{'ref items':>10}"]
    for category, row in stats["categories"].items():
        lines.append(f"{category:<28}{row['bases']:>7}{row['items']:>7}   {row['reference_bases']:>9}"
                     f"{row['reference_items']:>10}")
    for variant, row in stats["variants"].items():
        lines.append(f"{variant:<28}{'':>7}{row['items']:>7}   {'':>9}{row['reference_items']:>10}")
    lines.append(f"{'total':<28}{stats['bases']:>7}{stats['items']:>7}   {total['bases']:>9}{total['items']:>10}")
    reference = " ".join(f"{k}:{v}" for k, v in stats["reference_milestones_per_scenario"].items())
    dialogue = stats["reference_dialogue"]
    lines += ["", f"milestones per scenario: {_histogram(stats['milestones_per_scenario'])}",
              f"  reference benchmark:   {reference}",
              f"minefields per scenario: {_histogram(stats['minefields_per_scenario'])}",
              f"reference dialogue steps: {_histogram(dialogue['steps'])}",
              f"  tool calls: {_histogram(dialogue['calls'])}",
              f"  user turns: {_histogram(dialogue['user_turns'])}", "",
              "tool coverage, in scenarios: named = a milestone/minefield tool_call or attempted_call names it;",
              "effect = the reference makes this action on a table a milestone checks; covered = either;",
              "reference = the reference calls it",
              f"  {'tool':<34}{'domain':<10}{'named':>6}{'effect':>7}{'covered':>8}{'reference':>10}"]
    for name, row in stats["tools"].items():
        if row["user_tool"]:
            lines.append(f"  {name:<34}{row['domain']:<10}{'—':>6}{'—':>7}{'—':>8}{'—':>10}  the user's tool "
                         "(ends every episode)")
            continue
        flag = "  UNCOVERED" if not row["milestone_or_minefield"] else ""
        lines.append(f"  {name:<34}{row['domain']:<10}{row['named']:>6}{row['effect']:>7}"
                     f"{row['milestone_or_minefield']:>8}{row['reference']:>10}{flag}")
    lines += ["", f"nested state dependency (state_dependency starting in low battery mode): "
                  f"{stats['nested_state_dependency']}",
              f"paraphrase pairs: {stats['paraphrase_pairs']} ({stats['paraphrase_bases']} bases with a sibling)",
              f"parallel calls in the reference: {stats['parallel']} · order-dependent calls (an action milestone "
              f"after another): {stats['order_dependent']} · either: {stats['parallel_or_order_dependent']}",
              f"world differs substantially ({stats['world_differs_definition']}): {stats['world_differs']}", "",
              f"{'paths':<12}{'add':>7}{'modify':>8}{'remove':>8}{'search':>8}"]
    for table, operations in stats["paths"].items():
        cells = "".join(f"{'—' if count is None else count:>{width}}"
                        for (_, count), width in zip(operations.items(), (7, 8, 8, 8), strict=True))
        lines.append(f"{table:<12}{cells}")
    lines.append("  (— : no tool modifies or removes messages, so those paths cannot exist)")
    if shortfalls is not None:
        lines.append("")
        if shortfalls:
            lines.append("issue 9 minimums NOT met:")
            lines.extend(f"  {line}" for line in shortfalls)
        else:
            lines.append("issue 9 minimums: all met")
    return "\n".join(lines)
