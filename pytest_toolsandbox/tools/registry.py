"""The tool registry: every built-in tool, and the order in which tools are listed.

A tool is declared with the `@tool` decorator of `tools/spec.py`, which derives its `ToolSpec` from
the function's signature and docstring. The tool modules import `spec.py`, not this module, because
this module imports them (through `tools/catalog.py`) to register them. Code that uses tools imports
from here; the names of `spec.py` it needs are re-exported.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_toolsandbox.tools.spec import DECLARED, NOT_GIVEN, ToolSpec, json_type, value_hint

__all__ = ["DOMAINS", "NOT_GIVEN", "ToolSpec", "all_tools", "declaration_order", "json_type", "value_hint"]

DOMAINS = ("contact", "messaging", "reminder", "search", "setting", "user", "utilities")
"""The built-in domains in a fixed order (that of `tools/catalog.py`); ties are broken by it."""


def declaration_order(registry: Mapping[str, ToolSpec]) -> dict[str, tuple[int, int, str]]:
    """A sort key per tool that ignores how convenient its name is: the domain's place in `DOMAINS`
    (other domains after, by name), then the tool's place in its module's source (registration
    order, which within one module does not depend on import order). The name only separates tools
    registered outside the decorator."""
    declared = {name: position for position, name in enumerate(DECLARED)}
    return {name: (DOMAINS.index(spec.domain) if spec.domain in DOMAINS else len(DOMAINS),
                   declared.get(name, len(declared)), name if spec.domain in DOMAINS else f"{spec.domain}.{name}")
            for name, spec in registry.items()}


def all_tools() -> dict[str, ToolSpec]:
    """Every registered tool, sorted by name (importing the tool modules registers them)."""
    import pytest_toolsandbox.tools.catalog  # noqa: F401 - registers the built-in tools

    return dict(sorted(DECLARED.items()))
