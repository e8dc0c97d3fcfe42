"""What an imported insufficient-information base lacks, derived from the tools it withholds.

The reference benchmark makes a task impossible by denying the tools it needs (`deny`). The verdict
asks the agent's explanation to name what is missing (evaluation/explanation.py), so each denied
tool becomes the phrases a person would use for it: `get_current_location` → "current location",
"location"; `search_lat_lon` → "coordinates", "latitude", "longitude"; `set_low_battery_mode_status` →
"low battery mode". Derived, not written by hand, so a re-import gives the same list.
"""

from __future__ import annotations

from collections.abc import Iterable

_VERBS = frozenset({"get", "set", "search", "add", "remove", "modify", "send", "convert", "shift", "find", "read",
                    "end", "with", "to", "around", "by", "of", "for", "the", "from", "status", "info"})
"""Words of a tool name that say what it does or how, not what it gives."""

_SYNONYMS = {"coordinates": ("coordinates", "latitude", "longitude"), "timestamp": ("time", "clock"),
             "datetime": ("date", "time"), "holiday": ("holidays",), "stock": ("stocks", "share price")}
"""Abbreviations and technical words of tool names, as people say them."""

_GENERIC = frozenset({"mode", "service", "data", "phone", "number", "current", "low", "new", "with"})
"""Words too common to name the missing thing on their own."""


def _other_number(word: str) -> str:
    """The plural of a singular noun and the singular of a plural one, as tool names spell them."""
    if word.endswith("s"):
        return word[:-1]
    return word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"


def _phrases(tool: str) -> list[str]:
    words = [word for word in tool.replace("lat_lon", "coordinates").split("_") if word and word not in _VERBS]
    spoken = [_SYNONYMS.get(word, (word,))[0] for word in words]
    phrases = [" ".join(spoken)] if spoken else []
    for word in words:
        phrases.extend(_SYNONYMS.get(word, ()))
        if word not in _GENERIC and word not in _SYNONYMS:
            phrases.extend([word, _other_number(word)])
    return phrases


def missing_from_denied(denied: Iterable[str]) -> list[str]:
    """The phrases naming what the denied tools would have given, in the order of the tools, each once."""
    return list(dict.fromkeys(phrase for tool in denied for phrase in _phrases(tool) if phrase))
