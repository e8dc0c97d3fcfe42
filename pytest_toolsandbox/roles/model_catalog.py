"""What the installed provider SDK knows about its models: which are current, which are deprecated and
when they reach end-of-life.

The anthropic SDK ships its list of model ids (`anthropic.types.ModelParam`) and the ids it warns about
with their end-of-life dates (`anthropic._data.DEPRECATED_MODELS`). An alias such as `claude` resolves to
the newest model of its family in that list that is not deprecated, so upgrading the SDK moves the
alias the way the provider moves its models, and a run never starts on a model its own SDK flags.
Without the SDK (nothing can then be sent anyway) the alias falls back to `FALLBACK`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import get_args

FALLBACK = {("anthropic", "sonnet"): "claude-sonnet-5-5", ("anthropic", "opus"): "claude-opus-5-5",
            ("anthropic", "haiku"): "claude-haiku-5-5"}
"""Each family's newest current model in anthropic 2.14.0, used only when the SDK is not installed."""

_VERSIONED = re.compile(r"claude-(?P<family>[a-z]+)-(?P<major>\d+)(?:-(?P<minor>\d{1,2}))?(?:-(?P<date>\d{8}))?")
"""`claude-sonnet-4-5-20250929`: family, version and an optional snapshot date."""
_ORDINAL = re.compile(r"(\d+)(st|nd|rd|th)\b")


@dataclass(frozen=True)
class Deprecation:
    """A model the SDK flags: when it reaches end-of-life (None when the SDK's date cannot be read)."""

    model: str
    end_of_life: date | None

    def retired(self, today: date) -> bool:
        return self.end_of_life is not None and today >= self.end_of_life

    @property
    def when(self) -> str:
        return self.end_of_life.isoformat() if self.end_of_life else "a date the SDK does not give"


@cache
def known_models(provider: str) -> tuple[str, ...]:
    """The model ids the provider's installed SDK lists (empty when it lists none or is not installed)."""
    if provider != "anthropic":
        return ()
    try:
        from anthropic.types import ModelParam
    except ImportError:
        return ()
    return tuple(value for member in get_args(ModelParam) for value in get_args(member) if isinstance(value, str))


@cache
def deprecated_models(provider: str) -> dict[str, Deprecation]:
    """Model id → its deprecation, as the installed SDK lists them (its private data: read defensively)."""
    if provider != "anthropic":
        return {}
    try:
        from anthropic._data import DEPRECATED_MODELS
    except ImportError:
        return {}
    try:
        listed = dict(DEPRECATED_MODELS)
    except (TypeError, ValueError):  # another shape in a later SDK: no deprecations known, never a crash
        return {}
    return {model: Deprecation(model, _date(text)) for model, text in listed.items() if isinstance(model, str)}


def _date(text: object) -> date | None:
    """`November 30th, 2026` (the SDK's wording) as a date."""
    try:
        return datetime.strptime(_ORDINAL.sub(r"\1", str(text)).strip(), "%B %d, %Y").date()
    except ValueError:
        return None


def _version(model: str) -> tuple[int, int, int] | None:
    match = _VERSIONED.fullmatch(model)
    if match is None:
        return None
    return int(match["major"]), int(match["minor"] or 0), int(match["date"] or 0)


def family_of(model: str) -> str | None:
    """`sonnet` for `claude-sonnet-4-5-20250929`; None for ids outside the versioned families."""
    match = _VERSIONED.fullmatch(model)
    return match["family"] if match else None


@cache
def resolve_family(provider: str, family: str) -> str:
    """The newest current model of `family`: highest version, a dated snapshot before its undated name."""
    flagged = deprecated_models(provider)
    candidates = [(version, model) for model in known_models(provider)
                  if model not in flagged and family_of(model) == family and (version := _version(model))]
    if not candidates:
        return FALLBACK[(provider, family)]
    return max(candidates)[1]


def deprecation(provider: str, model: str) -> Deprecation | None:
    """The SDK's deprecation of `model`, or None when it does not flag it."""
    return deprecated_models(provider).get(model)


def replacement(provider: str, model: str) -> str | None:
    """The current model of `model`'s family, to name in a message; None when there is none to suggest."""
    family = family_of(model)
    if provider != "anthropic" or family is None or (provider, family) not in FALLBACK:
        return None
    current = resolve_family(provider, family)
    return current if current != model else None
