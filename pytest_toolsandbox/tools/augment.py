"""Tool augmentations of the paper as deterministic transformations of an offered-tool list.

Distraction tools are ranked without randomness: tools of the same domain as an allowed tool come
first, then the rest; inside each group by descending name similarity (rapidfuzz WRatio) to the
closest allowed tool, ties broken by domain order and then declaration order in the source
(`registry.declaration_order`), never by how the names happen to sort. Scrambling never touches
what executes: a scrambled name maps back to its registry name through `OfferedTool.tool`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from rapidfuzz import fuzz, utils

from pytest_toolsandbox.basics.vocabulary import VARIANT_CATEGORIES
from pytest_toolsandbox.tools.registry import ToolSpec, declaration_order
from pytest_toolsandbox.tools.schemas import OfferedTool
from pytest_toolsandbox.world.messages import Role

if TYPE_CHECKING:
    from pytest_toolsandbox.scenario.models import Scenario


def distraction_ranking(
    allowed: Iterable[str], registry: Mapping[str, ToolSpec], similar_to: Iterable[str] = ()
) -> list[str]:
    """Every registry tool not in `allowed`, most distracting first.

    Name similarity is measured against `allowed` plus `similar_to`: the reference ranks against the
    scenario's whole allow list, which always holds the user's `end_conversation`.
    """
    allowed = sorted(set(allowed))
    targets = sorted(set(allowed) | set(similar_to))
    declared = declaration_order(registry)
    tools = tuple((name, spec.domain, declared[name]) for name, spec in registry.items())
    return list(_ranking(tuple(allowed), tuple(targets), tools))


@lru_cache(maxsize=1024)
def _ranking(allowed: tuple[str, ...], targets: tuple[str, ...],
             tools: tuple[tuple[str, str, tuple[int, int, str]], ...]) -> tuple[str, ...]:
    """The ranking from names, domains and declaration order alone, so every variant and trial of a
    scenario reuses it (name similarity is most of the cost of offering tools)."""
    domain_of = {name: domain for name, domain, _ in tools}
    declared = {name: order for name, _, order in tools}
    domains = {domain_of[name] for name in allowed if name in domain_of}

    def closeness(name: str) -> float:
        return max((fuzz.WRatio(name, other, processor=utils.default_process) for other in targets),
                   default=0.0)

    candidates = [name for name in domain_of if name not in allowed]
    same_domain = [name for name in candidates if domain_of[name] in domains]
    other = [name for name in candidates if domain_of[name] not in domains]
    return tuple(name for group in (same_domain, other)
                 for name in sorted(group, key=lambda name: (-closeness(name), declared[name])))


def scramble_tool_names(tools: list[OfferedTool], registry: Mapping[str, ToolSpec]) -> list[OfferedTool]:
    """Replace each name by `<domain>_<k>`, k = rank of the tool in its domain by name."""
    by_domain: dict[str, list[str]] = {}
    for name in sorted(registry):
        by_domain.setdefault(registry[name].domain, []).append(name)
    alias = {name: f"{domain}_{rank}" for domain, names in by_domain.items()
             for rank, name in enumerate(names)}
    return [tool.replace(name=alias[tool.tool]) for tool in tools]


def scramble_descriptions(tools: list[OfferedTool], registry: Mapping[str, ToolSpec]) -> list[OfferedTool]:
    """Remove every tool description (argument descriptions stay)."""
    return [tool.replace(description="") for tool in tools]


def scramble_arg_descriptions(tools: list[OfferedTool], registry: Mapping[str, ToolSpec]) -> list[OfferedTool]:
    """Remove every argument description (types stay)."""
    changed = []
    for tool in tools:
        renamed = tool.replace()
        for schema in renamed.parameters["properties"].values():
            schema.pop("description", None)
        changed.append(renamed)
    return changed


def scramble_arg_types(tools: list[OfferedTool], registry: Mapping[str, ToolSpec]) -> list[OfferedTool]:
    """Remove every argument type (and the enum/items that only make sense with it)."""
    changed = []
    for tool in tools:
        renamed = tool.replace()
        for schema in renamed.parameters["properties"].values():
            for key in ("type", "enum", "items"):
                schema.pop(key, None)
        changed.append(renamed)
    return changed


Scrambler = Callable[[list[OfferedTool], Mapping[str, ToolSpec]], list[OfferedTool]]


@dataclass(frozen=True)
class Variant:
    """One tool-augmentation variant of a scenario (the paper's eight)."""

    name: str
    category: str
    distractions: int | None  # None: every tool
    scrambler: Scrambler | None = None


VARIANTS: dict[str, Variant] = {variant.name: variant for variant in (
    Variant("base", VARIANT_CATEGORIES["base"], 0),
    Variant("3_distraction_tools", VARIANT_CATEGORIES["3_distraction_tools"], 3),
    Variant("10_distraction_tools", VARIANT_CATEGORIES["10_distraction_tools"], 10),
    Variant("all_tools", VARIANT_CATEGORIES["all_tools"], None),
    Variant("tool_name_scrambled", VARIANT_CATEGORIES["tool_name_scrambled"], 3, scramble_tool_names),
    Variant("tool_description_scrambled", VARIANT_CATEGORIES["tool_description_scrambled"], 3, scramble_descriptions),
    Variant("arg_description_scrambled", VARIANT_CATEGORIES["arg_description_scrambled"], 3, scramble_arg_descriptions),
    Variant("arg_type_scrambled", VARIANT_CATEGORIES["arg_type_scrambled"], 3, scramble_arg_types),
)}


def offered_tools(
    allowed: Iterable[str],
    registry: Mapping[str, ToolSpec],
    variant: str = "base",
    denied: Iterable[str] = (),
    similar_to: Iterable[str] = (),
    distractions: Mapping[int, list[str]] | None = None,
    names: Mapping[str, str] | None = None,
) -> list[OfferedTool]:
    """The agent-facing tool list of a scenario variant, sorted by agent-facing name. `similar_to` names
    extra tools distractions are ranked against (see `distraction_ranking`). `distractions` (count → tools)
    and `names` (tool → scrambled name) replace our ranking and naming where given (a scenario imported
    from the reference benchmark carries the reference's own)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant '{variant}'; choose one of {sorted(VARIANTS)}")
    spec = VARIANTS[variant]
    allowed = [name for name in dict.fromkeys(allowed)]
    chosen = (distractions or {}).get(spec.distractions) if spec.distractions else None
    if chosen is not None:
        extra = list(chosen)
    else:
        ranking = distraction_ranking(allowed, registry, similar_to)
        extra = ranking if spec.distractions is None else ranking[:spec.distractions]
    denied = set(denied)
    names_offered = [name for name in dict.fromkeys([*allowed, *extra]) if name not in denied]
    tools = [OfferedTool.from_spec(registry[name]) for name in names_offered]
    if spec.scrambler is scramble_tool_names and names:
        tools = [tool.replace(name=names[tool.tool]) for tool in tools]
    elif spec.scrambler is not None:
        tools = spec.scrambler(tools, registry)
    return sorted(tools, key=lambda tool: tool.name)


def tools_for(role: Role, scenario: Scenario, registry: Mapping[str, ToolSpec], variant: str) -> list[OfferedTool]:
    """The tools a role is offered in this scenario variant."""
    visible = {name: spec for name, spec in registry.items() if spec.visible_to is role}
    allowed = [name for name in scenario.tools if name in visible]
    if role is Role.USER:
        return [OfferedTool.from_spec(spec) for spec in visible.values()]
    user_tools = [name for name, spec in registry.items() if spec.visible_to is Role.USER]
    return offered_tools(allowed, visible, variant=variant, denied=scenario.deny, similar_to=user_tools,
                         distractions={count: tools for count, tools in scenario.distraction_tools.items()},
                         names=scenario.scrambled_names)
