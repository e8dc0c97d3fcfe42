"""Cassettes: one xz-compressed vcrpy YAML file per (scenario, variant, agent, user, trial), under `cassettes/`.

Every HTTP request an episode makes (agent, user simulator, external tool APIs) goes through the
item's cassette: replayed when recorded, recorded when the record mode allows. Requests match on
method, URL and the normalised JSON body. Keys, auth headers, organisation ids and machine details
are removed before anything is written; failed attempts (429, 5xx) are never recorded, so a replay
does not depend on how often the live API failed. vcrpy is imported only when a cassette is used.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_toolsandbox.recording.normalise import same_body
from pytest_toolsandbox.recording.persister import SUFFIX, CompressedYamlPersister

RECORD_MODES = ("none", "once", "new_episodes", "all")
SECRET_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "RAPID_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")
_DROPPED_REQUEST_HEADERS = ("authorization", "x-api-key", "api-key", "openai-organization", "openai-project",
                            "x-rapidapi-key", "cookie", "user-agent")
_DROPPED_RESPONSE_HEADERS = ("set-cookie", "openai-organization", "openai-project", "anthropic-organization-id",
                             "x-request-id", "request-id", "cf-ray", "date")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


def default_record_mode(environ: Mapping[str, str]) -> str:
    """Replay only in CI (the `CI` variable is set), record missing cassettes locally."""
    return "none" if environ.get("CI") else "once"


def role_slug(spec: str) -> str:
    return _UNSAFE.sub("_", spec) or "_"


def pair_folder(agent: str, user: str) -> str:
    """The cassette folder of an agent and user: `<agent>--<user>`, bounded in length (a model id may be
    hundreds of characters, a file name at most 255 bytes)."""
    from pytest_toolsandbox.report.slug import bounded

    return bounded(f"{role_slug(agent)}--{role_slug(user)}")


def cassette_path(root: Path, scenario_path: str, agent: str, user: str, variant: str, trial: int) -> Path:
    """`<root>/<scenario path without .yaml>/<agent>--<user>/<variant>-t<trial>.yaml.xz`, each part bounded."""
    from pytest_toolsandbox.report.slug import bounded, trajectory_slug

    stem = trajectory_slug(scenario_path, f"{role_slug(agent)}--{role_slug(user)}")
    return root / stem / f"{bounded(role_slug(variant))}-t{trial}{SUFFIX}"


def _scrub_request(request: Any) -> Any:
    for name in list(request.headers):
        if name.lower() in _DROPPED_REQUEST_HEADERS or name.lower().startswith("x-stainless-"):
            del request.headers[name]
    return request


def _scrub_response(response: dict[str, Any]) -> dict[str, Any] | None:
    """Failed attempts are not recorded; the rest loses headers that identify the account."""
    if response["status"]["code"] == 429 or response["status"]["code"] >= 500:
        return None
    response["headers"] = {name: value for name, value in response["headers"].items()
                           if name.lower() not in _DROPPED_RESPONSE_HEADERS}
    return response


def recorder(mode: str, environ: Mapping[str, str] | None = None) -> Any:
    """A configured `vcr.VCR` for the given record mode."""
    import vcr

    environ = os.environ if environ is None else environ
    secrets = {f"<{name}>": environ[name] for name in SECRET_VARIABLES if environ.get(name)}
    config = vcr.VCR(
        record_mode=mode,
        match_on=("method", "scheme", "host", "port", "path", "query", "toolsandbox_body"),
        filter_query_parameters=["key", "api_key", "apikey", "rapidapi-key"],
        filter_sensitive_data=secrets,
        before_record_request=_scrub_request,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
    )
    config.register_matcher("toolsandbox_body", same_body)
    config.register_persister(CompressedYamlPersister)
    return config
