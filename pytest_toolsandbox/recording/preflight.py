"""Before any test runs: would the selected items need a cassette that is missing in replay mode, or
an API key that is not set? Then the run stops at once with one message naming the command that
records the cassettes, instead of failing every item with the same error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from pytest_toolsandbox.recording.persister import SUFFIX
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings, parse_model_spec


@dataclass(frozen=True)
class RecordedItem:
    """An item whose episode talks to a model: its cassette and the models it uses."""

    cassette: Path
    models: tuple[ModelSettings, ...]


def models_of(specs: Iterable[str], options: ModelOptions | None) -> tuple[ModelSettings, ...]:
    """The models among role specs (built-in and custom roles are not models)."""
    found = []
    for spec in specs:
        try:
            model = parse_model_spec(spec)
        except ValueError:
            continue
        if model is not None:
            found.append(model.with_options(options or ModelOptions()))
    return tuple(found)


def needs_recording(item: RecordedItem, mode: str) -> bool:
    return mode == "all" or (mode in ("once", "new_episodes") and not item.cassette.is_file())


def problem(items: Iterable[RecordedItem], mode: str, command: str, shown: Mapping[Path, str] | None = None,
            environ_has_ci: bool = False) -> str | None:
    """One message when the run cannot proceed, else None. `shown` maps paths to their display form."""
    items = list(items)

    def show(path: Path) -> str:
        return (shown or {}).get(path, str(path))

    if mode == "none":
        missing = [item.cassette for item in items if not item.cassette.is_file()]
        if not missing:
            return None
        why = " ($CI is set, so the default mode is none)" if environ_has_ci else ""
        return (f"toolsandbox: {len(missing)} of {len(items)} item(s) have no cassette and record mode 'none'"
                f"{why} forbids recording them; first missing: {show(missing[0])}\n"
                f"Record them once, with the API key set and outside CI:\n  {command} --ts-record-mode=once")
    recording = [item for item in items if needs_recording(item, mode)]
    unset = sorted({model.key_variable for item in recording for model in item.models if model.api_key() is None})
    if not unset:
        return None
    keys = " and ".join(unset)
    assignments = " ".join(f"{name}=..." for name in unset)
    return (f"toolsandbox: {len(recording)} item(s) must be recorded (record mode '{mode}'; first cassette: "
            f"{show(recording[0].cassette)}) but {keys} {'is' if len(unset) == 1 else 'are'} not set.\n"
            f"Record them with:\n  {assignments} {command}\n"
            f"or replay recorded cassettes only with --ts-record-mode=none")


# import name → (distribution, extra of pytest-toolsandbox that installs it)
_PACKAGES = {"openai": ("openai", "openai"), "anthropic": ("anthropic", "anthropic"), "vcr": ("vcrpy", "record")}


def missing_packages(models: Iterable[ModelSettings]) -> str | None:
    """One message when a model role needs its SDK or vcrpy and they are not installed, else None."""
    needed = sorted({model.provider for model in models} | {"vcr"}) if models else []
    missing = [name for name in needed if find_spec(name) is None]
    if not missing:
        return None
    distributions = ", ".join(_PACKAGES[name][0] for name in missing)
    extras = ",".join(sorted({_PACKAGES[name][1] for name in missing}))
    return (f"toolsandbox: model agents and users need {distributions}, which {'is' if len(missing) == 1 else 'are'} "
            f"not installed.\nInstall {'it' if len(missing) == 1 else 'them'} with:\n"
            f"  python -m pip install 'pytest-toolsandbox[{extras}]'   (from a clone: pip install -e '.[{extras}]')")


def early_problem(pairs: Iterable[tuple[str, tuple[ModelSettings, ...]]], cassette_dir: Path, mode: str,
                  command: str, shown_dir: str) -> str | None:
    """Before collection (and before xdist starts workers): a model agent/user pair with no cassette
    at all under `cassette_dir` cannot run when replay is required or its key is missing. `pairs` are
    (cassette folder name `<agent>--<user>`, models). The per-item check after collection covers the rest."""
    pairs = list(pairs)
    packages = missing_packages([model for _, models in pairs for model in models])
    if packages:
        return packages
    for folder, models in pairs:
        if mode != "all" and cassette_dir.is_dir() and any(cassette_dir.rglob(f"{folder}/*{SUFFIX}")):
            continue
        if mode == "none":
            return (f"toolsandbox: no cassettes for {folder} under {shown_dir}/ and record mode 'none' forbids "
                    f"recording them.\nRecord them once, with the API key set and outside CI:\n  {command} "
                    "--ts-record-mode=once")
        unset = sorted({model.key_variable for model in models if model.api_key() is None})
        if unset:
            assignments = " ".join(f"{name}=..." for name in unset)
            return (f"toolsandbox: no cassettes for {folder} under {shown_dir}/ and {' and '.join(unset)} "
                    f"{'is' if len(unset) == 1 else 'are'} not set, so nothing can be replayed or recorded.\n"
                    f"Record them with:\n  {assignments} {command}")
    return None
