"""Where an item's files go: a stable, safe relative stem from its scenario path and parameter id.

Its own module because collection needs it (report links, cassette paths) long before any item is
scored, and the record module beside it imports the scorer.
"""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
MAX_COMPONENT = 120
"""Longest path component a stem holds: file systems refuse names over 255 bytes, and a stem gets a
suffix (`.json`, `-t1.yaml.xz`); a longer one (a 300-character model id) is cut and given a hash of
itself, so it stays unique and the same from run to run."""


def bounded(component: str) -> str:
    """`component` when it is at most `MAX_COMPONENT` characters, else its start and a hash of all of it."""
    if len(component) <= MAX_COMPONENT:
        return component
    digest = hashlib.sha256(component.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{component[:MAX_COMPONENT - 17]}~{digest}"


def trajectory_slug(scenario_path: str, param_id: str) -> str:
    """A stable relative file stem for an item's trajectory: `<scenario path>/<parameter id>`.

    Path segments are kept so the report mirrors the scenario tree; anything that could escape
    the report directory (`..`, absolute roots, odd characters) is neutralised. When the stem does
    not spell the path exactly (`.yml`, replaced characters), a hash of the path is appended, so
    different scenario files never share a stem: `x.yaml`, `x.yml` and `x y.yaml` stay apart. Every
    component is `bounded`.
    """
    stem = scenario_path.removesuffix(".yaml").removesuffix(".yml")
    parts = [_UNSAFE.sub("_", part) for part in stem.replace("\\", "/").split("/") if part not in ("", ".")]
    parts = ["_up_" if part == ".." else part for part in parts] or ["_"]
    if "/".join(parts) + ".yaml" != scenario_path:
        parts[-1] += "~" + hashlib.sha256(scenario_path.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return "/".join(bounded(part) for part in [*parts, _UNSAFE.sub("_", param_id) or "item"])
