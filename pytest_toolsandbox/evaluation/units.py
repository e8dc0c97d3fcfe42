"""Units written next to numbers: which ones mean the same quantity, and converting between them.

An answer states "14.2°F" or "0.5 degrees Celsius", "€577.02" or "577.02 euros", "6.2 mi" or "10 km".
A number fact that names its unit counts only values written in that unit (or converted correctly
into another unit of the same quantity, "0.5 °C (32.9 °F)"); a value in a different unit of that
quantity is a different claim. Physical units convert with pint (already used by the unit-conversion
tool); currencies are each their own quantity, since no exchange rate is known to the judge.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_PHYSICAL: dict[str, tuple[str, ...]] = {
    "degree_Celsius": ("°c", "° c", "ºc", "degrees celsius", "degree celsius", "celsius", "degrees c", "centigrade"),
    "degree_Fahrenheit": ("°f", "° f", "ºf", "degrees fahrenheit", "degree fahrenheit", "fahrenheit", "degrees f"),
    "kilometer": ("km", "kms", "kilometers", "kilometres", "kilometer", "kilometre"),
    "mile": ("mi", "miles", "mile"),
    "meter": ("m", "meters", "metres", "meter", "metre"),
    "foot": ("ft", "feet", "foot"),
    "inch": ("inches", "inch"),
    "kilogram": ("kg", "kgs", "kilograms", "kilogram", "kilos", "kilo"),
    "gram": ("g", "grams", "gram"),
    "ounce": ("oz", "ounces", "ounce"),
    "liter": ("l", "liters", "litres", "liter", "litre"),
    "milliliter": ("ml", "milliliters", "millilitres", "milliliter", "millilitre"),
    "cup": ("cups", "cup"),
    "tablespoon": ("tbsp", "tablespoons", "tablespoon"),
    "teaspoon": ("tsp", "teaspoons", "teaspoon"),
    "mile_per_hour": ("mph", "miles per hour"),
    "kilometer_per_hour": ("km/h", "kph", "kilometers per hour", "kilometres per hour"),
    "percent": ("%", "percent", "per cent"),
    "hour": ("h", "hr", "hrs", "hours", "hour"),
    "minute": ("min", "mins", "minutes", "minute"),
    "second": ("s", "sec", "secs", "seconds", "second"),
    "day": ("days", "day"),
    "week": ("weeks", "week"),
}
_CURRENCIES: dict[str, tuple[str, ...]] = {
    "EUR": ("€", "eur", "euros", "euro"),
    "USD": ("$", "usd", "us dollars", "dollars", "dollar", "us$", "bucks"),
    "GBP": ("£", "gbp", "pounds sterling", "british pounds", "sterling", "quid"),
    "JPY": ("jpy", "yen"),
    "CAD": ("cad", "c$", "canadian dollars"),
    "AUD": ("aud", "a$", "australian dollars"),
    "CHF": ("chf", "swiss francs", "francs"),
    "INR": ("₹", "inr", "rupees"),
    "CNY": ("cny", "rmb", "yuan", "renminbi", "chinese yuan"),
}
POUND = "pound"
""""pounds" alone: sterling or weight, whichever the fact means (as a weight, pint's name for it)."""
DEGREE = "degree"
""""degrees" alone: a temperature of either scale, or an angle."""
YEN_SIGN = "yen_or_yuan"
""""¥" alone: Japanese yen or Chinese yuan, both written with it."""

_ALIASES: dict[str, str] = {alias: unit for unit, aliases in (*_PHYSICAL.items(), *_CURRENCIES.items())
                            for alias in aliases}
_ALIASES |= {"pounds": POUND, "pound": POUND, "lb": POUND, "lbs": POUND, "degrees": DEGREE, "degree": DEGREE,
             "°": DEGREE, "¥": YEN_SIGN}
_SYMBOLS = "€$£¥₹"

_DETACHED_ONLY = frozenset({"s", "g"})
"""Units that count only after a space: "the 1990s" is a decade and "5G" a network, not seconds or grams."""
UNIT_AFTER = re.compile(
    r"\s?(" + "|".join(r"(?<=\s)" + alias if alias in _DETACHED_ONLY else re.escape(alias)
                        for alias in sorted(_ALIASES, key=len, reverse=True)) + r")(?![^\W\d_])",
    re.IGNORECASE)
"""A unit written right after a number ("5 km", "14.2°F", "577.02 euros")."""
CURRENCY_BEFORE = re.compile(r"(us\$|c\$|a\$|[€$£¥₹]|\b(?:eur|usd|gbp|jpy|cad|aud|chf|inr|cny|rmb))\s?$", re.IGNORECASE)
"""A currency written right before a number ("€577.02", "EUR 577.02")."""


def unit_named(text: str) -> str:
    """The canonical unit of an alias ("°C" → degree_Celsius, "euros" → EUR); a ValueError lists the forms."""
    unit = _ALIASES.get(text.strip().lower())
    if unit is None:
        raise ValueError(f"unknown unit {text!r}; write one of: {', '.join(sorted(set(_ALIASES)))}")
    return unit


def written(unit: str) -> str:
    """A canonical unit as an answer writes it out: its longest alias ("degree_Celsius" → "degrees celsius")."""
    return max((alias for alias, named in _ALIASES.items() if named == unit), key=len, default=unit)


def _is_currency(unit: str) -> bool:
    return unit in _CURRENCIES


@lru_cache(maxsize=1)
def _registry() -> Any:
    import pint  # loaded only when a fact compares units, not when scenarios are collected

    return pint.UnitRegistry()


def _ambiguous_matches(written: str, wanted: str) -> bool:
    """Whether `wanted` is one of the meanings of `written`, an ambiguous unit (POUND, DEGREE or YEN_SIGN)."""
    if written == POUND:
        return wanted in ("GBP", POUND) or _same_dimension(POUND, wanted)  # a currency other than GBP: no
    if written == DEGREE:
        return wanted in ("degree_Celsius", "degree_Fahrenheit", DEGREE)
    return wanted in ("JPY", "CNY", YEN_SIGN)


@lru_cache(maxsize=1024)
def _same_dimension(left: str, right: str) -> bool:
    if _is_currency(left) or _is_currency(right):
        return left == right
    registry = _registry()
    return bool(registry.Unit(left).dimensionality == registry.Unit(right).dimensionality)


def comparable(written: str, wanted: str) -> bool:
    """Whether a value written in unit `written` speaks of the same quantity as one in `wanted`."""
    if written == wanted:
        return True
    if written in (POUND, DEGREE, YEN_SIGN):
        return _ambiguous_matches(written, wanted)
    if wanted in (POUND, DEGREE, YEN_SIGN):
        return _ambiguous_matches(wanted, written)
    return _same_dimension(written, wanted)


def convert(value: float, source: str, target: str) -> float:
    """`value` in unit `source` expressed in `target` (same quantity; an ambiguous unit converts as is)."""
    if source == target or (POUND in (source, target) and "GBP" in (source, target)) or DEGREE in (source, target) \
            or YEN_SIGN in (source, target):
        return value
    registry = _registry()
    return float(registry.Quantity(value, source).to(target).magnitude)
