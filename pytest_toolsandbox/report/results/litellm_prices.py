"""LiteLLM's maintained price table (`model_prices_and_context_window.json`), read before the bundled
prices.json: `--price-table PATH`, else the copy inside an installed `litellm` package (found without
importing litellm, which takes seconds).

An entry gives USD per token (`input_cost_per_token`, `output_cost_per_token`); keys are model ids,
some with a provider prefix (`openai/gpt-4o`, `anthropic/claude-…`). A model is looked up by its id,
then by `<provider>/<id>` for a single provider that lists it; entries without both costs are skipped.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

LITELLM_FILES = ("model_prices_and_context_window_backup.json", "model_prices_and_context_window.json")


class PriceTableError(ValueError):
    """A price table that cannot be read; the message names the file."""


def installed_table() -> Path | None:
    """The price table shipped inside an installed litellm, or None."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for name in LITELLM_FILES:
            if (Path(folder) / name).is_file():
                return Path(folder) / name
    return None


def _rate(entry: dict[str, Any], key: str) -> float | None:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return float(value) * 1e6


def read_litellm(path: Path) -> dict[str, dict[str, float]]:
    """Model → {"input", "output"} in USD per million tokens, as the bundled table has them."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PriceTableError(f"{path}: cannot read the price table: {error.strerror}") from None
    except ValueError as error:
        raise PriceTableError(f"{path}: not a JSON price table: {error}") from None
    if not isinstance(data, dict):
        raise PriceTableError(f"{path}: not LiteLLM's model_prices_and_context_window.json (no object of models)")
    table: dict[str, dict[str, float]] = {}
    for model, entry in data.items():
        if not isinstance(entry, dict):
            continue
        rate_in, rate_out = _rate(entry, "input_cost_per_token"), _rate(entry, "output_cost_per_token")
        if rate_in is not None and rate_out is not None:
            table[model] = {"input": rate_in, "output": rate_out}
    return table


def lookup(table: dict[str, dict[str, float]], model: str) -> dict[str, float] | None:
    """The rates of `model`: its own key, else the one `provider/model` key that names it."""
    if model in table:
        return table[model]
    prefixed = [key for key in table if key.rpartition("/")[2] == model]
    return table[prefixed[0]] if len(prefixed) == 1 else None
