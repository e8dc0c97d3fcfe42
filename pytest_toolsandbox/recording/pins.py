"""Which model an alias meant when a cassette was recorded, stored next to the cassette.

`claude` follows the installed SDK (`roles/model_catalog.py`), so the model behind it changes when the
SDK is upgraded. A cassette's requests name the model they were recorded with, and a replay must send
the same requests: each cassette recorded through an alias gets a small sidecar,
`<variant>-t<trial>.models.json` = `{"claude": "claude-sonnet-5-5"}`, and a later run plays that item with
the pinned model whatever the alias means now. Re-recording (`--ts-record-mode=all`) pins the current
model. One file per cassette: items of the same folder may be recorded by different xdist workers at once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pytest_toolsandbox.recording.persister import SUFFIX

PINS_SUFFIX = ".models.json"
_LARGEST = 64 << 10
"""A pins file is a few dozen bytes; a larger one is not ours and is ignored."""


def pins_path(cassette: Path) -> Path:
    return cassette.with_name(cassette.name.removesuffix(SUFFIX) + PINS_SUFFIX)


def read_pins(cassette: Path) -> dict[str, str]:
    """alias → model recorded for `cassette`; empty when there is no readable pins file (an item recorded
    before pins existed replays with the alias's current model)."""
    path = pins_path(cassette)
    try:
        if path.stat().st_size > _LARGEST:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    pins = data.get("models") if isinstance(data, dict) else None
    if not isinstance(pins, dict):
        return {}
    return {alias: model for alias, model in pins.items()
            if isinstance(alias, str) and isinstance(model, str) and model.strip() and len(model) <= 256}


def write_pins(cassette: Path, pins: dict[str, str]) -> None:
    """Store the pins of a freshly saved cassette (atomically: a reader never sees half a file)."""
    path = pins_path(cassette)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps({"models": dict(sorted(pins.items()))}, indent=1) + "\n", encoding="utf-8")
    os.replace(temporary, path)
