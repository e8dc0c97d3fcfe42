"""What the terminal says about the run's models before the first item: which model each spec names
(an alias follows the installed SDK), and, once per run, that a model is deprecated or retired (a
retired one stops a run that would send it requests: `recording/preflight.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from difflib import get_close_matches
from importlib import metadata
from typing import TYPE_CHECKING, Any

from pytest_toolsandbox.recording.preflight import lifecycle_note
from pytest_toolsandbox.roles.model_catalog import known_models
from pytest_toolsandbox.roles.model_spec import FAMILY_ALIASES, PROVIDERS, ModelOptions, ModelSettings, parse_model_spec

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
    """One line per model spec, and one per deprecated, retired or unlisted model."""
    lines = []
    for spec, model in models.items():
        if spec in FAMILY_ALIASES:
            family = FAMILY_ALIASES[spec][1].capitalize()
            lines.append(f"toolsandbox: {spec} = {model.label} (the newest current {family} in {_sdk(model.provider)}; "
                         "cassettes recorded with another model replay with theirs)")
        else:
            lines.append(f"toolsandbox: {spec} = {model.label}")
    return lines + model_warnings(models, today)


def model_warnings(models: Mapping[str, ModelSettings], today: date) -> list[str]:
    """One line per deprecated, retired or unlisted model (the header's, or the summary's under `-q`)."""
    notes = []
    for model in {model.label: model for model in models.values()}.values():
        note = lifecycle_note(model, today) or unknown_note(model)
        if note:
            notes.append(f"toolsandbox: {note}")
    return notes


def unknown_note(model: ModelSettings) -> str | None:
    """A model id the provider's SDK does not list (a typo, or a model newer than the SDK): said before the
    run, since its first request will tell (a 404 stops the run)."""
    known = known_models(model.provider)
    if not known or model.model in known or any(model.model.startswith(f"{name}-") for name in known):
        return None
    close = get_close_matches(model.model, known, n=1, cutoff=0.8)
    hint = f"; did you mean {model.provider}:{close[0]}?" if close else ""
    return (f"{model.label} is not in the {_sdk(model.provider)} model list{hint} (if the API does not know it "
            "either, its first answer, HTTP 404, stops the run)")


def played_notes(models: Mapping[str, Any] | None, today: date) -> list[str]:
    """After the run, once: deprecated or retired models that cassettes pinned (the header named the others)."""
    notes = {}
    for entry in (models or {}).values():
        if not isinstance(entry, Mapping):
            continue
        for label in entry.get("played") or ():
            provider, _, model = str(label).partition(":")
            if label != entry.get("model") and provider in PROVIDERS:
                note = lifecycle_note(ModelSettings(provider, model), today)
                if note:
                    notes[label] = (f"toolsandbox: cassettes pinned a model that is going away: {note}; "
                                    "re-record them with --ts-record-mode=all")
    return list(notes.values())
