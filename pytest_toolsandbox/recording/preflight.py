"""Before any test runs: would the selected items need a cassette that is missing in replay mode, an
API key that is not set, or an endpoint that cannot be reached? Then the run stops at once with one
message saying what this spec needs (which key, which server to start) and the command that records
the cassettes, instead of failing every item with the same error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from importlib.util import find_spec
from pathlib import Path

from pytest_toolsandbox.recording.persister import SUFFIX
from pytest_toolsandbox.roles.model_catalog import deprecation
from pytest_toolsandbox.roles.model_spec import ModelOptions, ModelSettings, parse_model_spec, use_instead

CHOOSE_ANOTHER = "choose a current model"
LOCAL_SERVER_SCRIPT = "scripts/serve_local_model.py"
"""This repository's local model server (relative to the rootdir); named when a loopback endpoint is down."""


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
            found.append(model.with_options((options or ModelOptions()).for_spec(spec)))
    return tuple(found)


def needs_recording(item: RecordedItem, mode: str) -> bool:
    return mode == "all" or (mode in ("once", "new_episodes") and not item.cassette.is_file())


def what_it_needs(model: ModelSettings, local_script: str | None) -> str:
    """What recording with `model` needs, as an instruction: its key, or its server running."""
    from pytest_toolsandbox.recording.reachable import is_loopback  # socket and urllib: only when asked

    if model.options.base_url:
        if local_script and is_loopback(model.endpoint):
            return f"start the local model: python {local_script}"
        return f"start the server at {model.shown_endpoint}"
    return f"set {model.key_variable}"


def _needs(models: Iterable[ModelSettings], local_script: str | None) -> str:
    return " and ".join(dict.fromkeys(what_it_needs(model, local_script) for model in models))


def unreachable_problem(models: Iterable[ModelSettings], why_needed: str, local_script: str | None) -> str | None:
    """One line when an endpoint the run must record from does not answer a TCP connect; `why_needed`
    says why the run must talk to it (items without cassettes)."""
    from pytest_toolsandbox.recording.reachable import unreachable

    endpoints = {model.endpoint: model for model in models}
    down = unreachable(endpoints)
    if not down:
        return None
    url, why = next(iter(down.items()))
    model = endpoints[url]
    shown = model.shown_endpoint  # a token in the userinfo or query must not reach a CI log
    if model.options.base_url:
        action = what_it_needs(model, local_script) + " (or give the spec another --model-base-url SPEC=URL)"
    else:
        action = "check the network or proxy"
    return (f"toolsandbox: cannot reach {shown} ({model.provider}:{model.model}: {why}) and {why_needed}: "
            f"{action}, or replay recorded cassettes only with --ts-record-mode=none")


def problem(items: Iterable[RecordedItem], mode: str, command: str, shown: Mapping[Path, str] | None = None,
            environ_has_ci: bool = False, local_script: str | None = None, today: date | None = None) -> str | None:
    """One message when the run cannot proceed, else None. `shown` maps paths to their display form;
    `local_script` is the repository's local model server, when it has one."""
    items = list(items)
    if mode != "none" and (retired := retired_problem((model for item in items if needs_recording(item, mode)
                                                        for model in item.models), today or date.today())):
        return retired

    def show(path: Path) -> str:
        return (shown or {}).get(path, str(path))

    if mode == "none":
        missing = [item for item in items if not item.cassette.is_file()]
        if not missing:
            return None
        why = " ($CI is set, so the default mode is none)" if environ_has_ci else ""
        needs = _needs((model for item in missing for model in item.models), local_script)
        return (f"toolsandbox: {len(missing)} of {len(items)} item(s) have no cassette and record mode 'none'"
                f"{why} forbids recording them; first missing: {show(missing[0].cassette)}\n"
                f"Record them once, outside CI: {needs}, then run:\n  {command} --ts-record-mode=once")
    recording = [item for item in items if needs_recording(item, mode)]
    unset = sorted({model.key_variable for item in recording for model in item.models if model.api_key() is None})
    if not unset:
        models = [model for item in recording for model in item.models]
        why_needed = f"{len(recording)} item(s) must be recorded"
        return unreachable_problem(models, why_needed, local_script) if recording else None
    keys = " and ".join(unset)
    assignments = " ".join(f"{name}=..." for name in unset)
    return (f"toolsandbox: {len(recording)} item(s) must be recorded (record mode '{mode}'; first cassette: "
            f"{show(recording[0].cassette)}) but {keys} {'is' if len(unset) == 1 else 'are'} not set.\n"
            f"Record them with:\n  {assignments} {command}\n"
            f"or replay recorded cassettes only with --ts-record-mode=none")


def lifecycle_note(model: ModelSettings, today: date) -> str | None:
    """`anthropic:X is deprecated (end-of-life 2026-11-30); use …`, or None when the SDK does not flag it."""
    flagged = deprecation(model.provider, model.model)
    if flagged is None:
        return None
    state = "retired" if flagged.retired(today) else "deprecated"
    return (f"{model.label} is {state} (end-of-life {flagged.when}, per the {model.provider} SDK); "
            f"{use_instead(model, CHOOSE_ANOTHER)}")


def retired_problem(models: Iterable[ModelSettings], today: date) -> str | None:
    """One line when a model the run must send requests to has passed its end-of-life date (a replay
    sends nothing, so a retired model's cassettes still play)."""
    for model in models:
        flagged = deprecation(model.provider, model.model)
        if flagged is not None and flagged.retired(today):
            return (f"toolsandbox: {model.label} was retired on {flagged.when} (per the {model.provider} SDK), so "
                    f"its requests would fail; {use_instead(model, CHOOSE_ANOTHER)}, or replay its cassettes with "
                    "--ts-record-mode=none")
    return None


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
                  command: str, shown_dir: str, local_script: str | None = None,
                  today: date | None = None) -> str | None:
    """Before collection (and before xdist starts workers): a model agent/user pair with no cassette
    at all under `cassette_dir` cannot run when replay is required, its key is missing or its endpoint
    does not answer. `pairs` are (cassette folder name `<agent>--<user>`, models). The per-item check
    after collection covers the rest."""
    pairs = list(pairs)
    packages = missing_packages([model for _, models in pairs for model in models])
    if packages:
        return packages
    to_record: dict[str, tuple[ModelSettings, ...]] = {}
    for folder, models in pairs:
        if mode != "all" and cassette_dir.is_dir() and any(cassette_dir.rglob(f"{folder}/*{SUFFIX}")):
            continue
        if mode == "none":
            return (f"toolsandbox: no cassettes for {folder} under {shown_dir}/ and record mode 'none' forbids "
                    f"recording them.\nRecord them once, outside CI: {_needs(models, local_script)}, then run:\n"
                    f"  {command} --ts-record-mode=once")
        retired = retired_problem(models, today or date.today())
        if retired:
            return retired
        unset = sorted({model.key_variable for model in models if model.api_key() is None})
        if unset:
            assignments = " ".join(f"{name}=..." for name in unset)
            return (f"toolsandbox: no cassettes for {folder} under {shown_dir}/ and {' and '.join(unset)} "
                    f"{'is' if len(unset) == 1 else 'are'} not set, so nothing can be replayed or recorded.\n"
                    f"Record them with:\n  {assignments} {command}")
        to_record[folder] = models
    if not to_record:
        return None
    folders = ", ".join(to_record)
    why_needed = (f"record mode 'all' records {folders} again" if mode == "all"
                  else f"{folders} ha{'s' if len(to_record) == 1 else 've'} no cassettes to replay")
    return unreachable_problem([model for models in to_record.values() for model in models], why_needed, local_script)
