"""A conftest.py that overrides the `toolsandbox_agent` fixture decides which agent runs; `--agent` on the
command line must then not pretend to choose one.

Without this check, `pytest --agent my_project:Guesser` with the README's override would run the
conftest's agent and report it under the spec's name. An override that reads the spec (it asks for
`toolsandbox_case` and uses `toolsandbox_case.agent`, or builds on the plugin's own `toolsandbox_agent`)
is honoured: the spec still means something there.

An override that does not read the spec builds an agent of its own, so its results are not the spec's:
they are recorded, reported and gated under the agent's own identity (`agent_identity`), never under the
default spec's name, whose baseline would otherwise turn the agent's failures into expected ones.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

MESSAGE_START = "toolsandbox: --agent "
"""How the collection error starts: the controller recognises it (also from an xdist worker) and stops."""
SPEC_READERS = frozenset({"toolsandbox_case", "toolsandbox_agent"})
"""Arguments through which an overriding fixture can see the `--agent` spec."""


def _own_agent_fixture(item: pytest.Item, plugin_module: str) -> Any:
    """The fixture definition overriding `item`'s `toolsandbox_agent` without reading the spec, or None."""
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.get("toolsandbox_agent") if info is not None else None
    if not definitions or getattr(definitions[-1].func, "__module__", None) == plugin_module:
        return None
    override = definitions[-1]
    return None if SPEC_READERS & set(override.argnames) else override


def builds_own_agent(item: pytest.Item, plugin_module: str) -> bool:
    """Whether the agent of `item` comes from an override that does not read the `--agent` spec."""
    return _own_agent_fixture(item, plugin_module) is not None


def agent_identity(agent: object) -> str:
    """The name an agent built by an override is known by: the `name` it declares, else its class name."""
    from pytest_toolsandbox.roles.base import role_name

    return role_name(agent, type(agent).__name__)


def ignored_agent_option(item: pytest.Item, plugin_module: str, agents: tuple[str, ...]) -> str | None:
    """The usage error when `item`'s `toolsandbox_agent` is overridden by a fixture that cannot see the
    `--agent` spec given on the command line; None when the spec is used."""
    override = _own_agent_fixture(item, plugin_module)
    if override is None:
        return None
    try:
        where = f"{inspect.getsourcefile(override.func)}:{inspect.getsourcelines(override.func)[1]}"
    except (OSError, TypeError):
        where = getattr(override.func, "__module__", "a plugin")
    return (f"{MESSAGE_START}{' --agent '.join(agents)} would not be used: the toolsandbox_agent fixture "
            f"is overridden ({where}) and builds its own agent. Drop --agent to run that agent, remove the override "
            "to run the spec, or let the fixture read the spec (ask for toolsandbox_case and use "
            "toolsandbox_case.agent)")
