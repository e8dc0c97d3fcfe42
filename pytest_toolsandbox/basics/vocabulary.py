"""The names pytest needs before any scenario is loaded: scenario categories and tool-augmentation
variants, which become markers at configure time, and the file that marks a folder of imported
reference-benchmark scenarios.

They live apart from the pydantic scenario models and the tool scramblers so that registering the
plugin's markers and validating `--augment` import nothing heavy (a run that collects no scenario
must cost nothing; tests/test_lazy_imports.py checks it).
"""

from __future__ import annotations

CATEGORIES: tuple[str, ...] = (
    "single_tool_call", "multiple_tool_call", "single_user_turn", "multiple_user_turn",
    "state_dependency", "canonicalization", "insufficient_information",
)

VARIANT_CATEGORIES: dict[str, str] = {
    "base": "no_distraction_tools",
    "3_distraction_tools": "three_distraction_tools",
    "10_distraction_tools": "ten_distraction_tools",
    "all_tools": "all_tools_available",
    "tool_name_scrambled": "tool_name_scrambled",
    "tool_description_scrambled": "tool_description_scrambled",
    "arg_description_scrambled": "arg_description_scrambled",
    "arg_type_scrambled": "arg_type_scrambled",
}
"""Variant name (as in `--augment` and item ids) → its category in the paper (also a marker)."""

REFERENCE_PROMPTS_FILE = "reference-prompts.json"
"""Written by `import-toolsandbox` beside the imported scenario files (the reference's own prompts, for
`--prompts reference`); its presence also marks the folder as imported (it runs only when named)."""

SUMMARY_FILE = "summary.json"
"""The run's results in its report directory (report/results/summary.py)."""
JOURNAL_FILE = "records.jsonl"
"""The run's fingerprint and each record as its item ends (report/results/journal.py)."""
INDEX_FILE = "index.html"
"""The report's first page (report/pages/site.py)."""

RULES = ("ours", "reference")
"""The failure rules a run can score by (`--rules`; evaluation/rules.py says how they differ)."""
REFERENCE = "reference"
"""The reference implementation's rules, and its prompts (`--rules reference`, `--prompts reference`)."""
