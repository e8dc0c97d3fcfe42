"""What the terminal says about the run's models before the first item: which model each spec names
(an alias follows the installed SDK), and, once per run, that a model is deprecated or retired (a
retired one stops a run that would send it requests: `recording/preflight.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from importlib import metadata
from typing import TYPE_CHECKING

from pytest_toolsandbox.recording.preflight import lifecycle_note
from pytest_toolsandbox.roles.model_spec import FAMILY_ALIASES, ModelOptions, ModelSettings, parse_model_spec

if TYPE_CHECKING:
    from pytest_toolsandbox.options import Settings


def run_models(run: Settings) -> dict[str, ModelSettings]:
    """spec → model, for every agent and user of the run that is a model."""
    found = {}
    for spec in (*run.agents, run.user):
        try:
            model = parse_model_spec(spec)
        except ValueError:
            continue
        if model is not None:
            found[spec] = model.with_options((run.model_options or ModelOptions()).for_spec(spec))
    return found


def _sdk(provider: str) -> str:
    try:
        return f"{provider} {metadata.version(provider)}"
    except metadata.PackageNotFoundError:
        return f"{provider} (not installed)"


def header_lines(models: Mapping[str, ModelSettings], today: date) -> list[str]:
    """One line per model spec, and one per deprecated or retired model."""
    lines = []
    for spec, model in models.items():
        if spec in FAMILY_ALIASES:
            family = FAMILY_ALIASES[spec][1].capitalize()
            lines.append(f"toolsandbox: {spec} = {model.label} (the newest current {family} in {_sdk(model.provider)}; "
                         "cassettes recorded with another model replay with theirs)")
        else:
            lines.append(f"toolsandbox: {spec} = {model.label}")
    for model in {model.label: model for model in models.values()}.values():
        note = lifecycle_note(model, today)
        if note:
            lines.append(f"toolsandbox: {note}")
    return lines
