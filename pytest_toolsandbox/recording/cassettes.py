"""Cassettes: one xz-compressed vcrpy YAML file per (scenario, variant, agent, user, trial), under `cassettes/`.

Every HTTP request an episode makes (agent, user simulator, external tool APIs) goes through the
item's cassette: replayed when recorded, recorded when the record mode allows. Requests match on
method, URL and the normalised JSON body. Keys, auth headers, organisation ids and machine details
are removed before anything is written, one way (`secrets.py`): a placeholder in a cassette is never
turned back into a key; failed attempts (429, 5xx) are never recorded, so a replay does not depend
on how often the live API failed. vcrpy is imported only when a cassette is used.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_toolsandbox.recording.normalise import same_body
from pytest_toolsandbox.recording.persister import SUFFIX, CompressedYamlPersister
from pytest_toolsandbox.recording.secrets import scrub_body, scrub_text, scrub_url, secret_values

RECORD_MODES = ("none", "once", "new_episodes", "all")
_DROPPED_REQUEST_HEADERS = ("authorization", "x-api-key", "api-key", "openai-organization", "openai-project",
                            "x-rapidapi-key", "cookie", "user-agent")
_DROPPED_RESPONSE_HEADERS = ("set-cookie", "openai-organization", "openai-project", "anthropic-organization-id",
                             "x-request-id", "request-id", "cf-ray", "date")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
_PLAIN = re.compile(r"[A-Za-z0-9.\-]*(?::[A-Za-z0-9.\-]*)?")
"""Specs whose folder name is themselves with `:` as `_` (`openai_gpt-4o`): they hold no `_`, at most one
`:` and nothing unsafe, so that name cannot come from another plain spec."""


def default_record_mode(environ: Mapping[str, str]) -> str:
    """Replay only in CI (the `CI` variable is set), record missing cassettes locally."""
    return "none" if environ.get("CI") else "once"


def _safe(name: str) -> str:
    return _UNSAFE.sub("_", name) or "_"


def role_slug(spec: str) -> str:
    """A spec as a folder name, one folder per spec: a plain spec (`openai:gpt-4o`) keeps its readable
    name; any other (`openai:org/m1`, `openai:org_m1`) gets a digest of the whole spec after `__`, which no
    plain name contains, so two specs never share their cassettes."""
    readable = _safe(spec)
    if _PLAIN.fullmatch(spec) and spec:
        return readable
    return f"{readable}__{hashlib.sha256(spec.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def pair_folder(agent: str, user: str) -> str:
    """The cassette folder of an agent and user: `<agent>--<user>`, bounded in length (a model id may be
    hundreds of characters, a file name at most 255 bytes)."""
    from pytest_toolsandbox.report.results.slug import bounded

    return bounded(f"{role_slug(agent)}--{role_slug(user)}")


def cassette_path(root: Path, scenario_path: str, agent: str, user: str, variant: str, trial: int) -> Path:
    """`<root>/<scenario path without .yaml>/<agent>--<user>/<variant>-t<trial>.yaml.xz`, each part bounded."""
    from pytest_toolsandbox.report.results.slug import bounded, trajectory_slug

    stem = trajectory_slug(scenario_path, f"{role_slug(agent)}--{role_slug(user)}")
    return root / stem / f"{bounded(_safe(variant))}-t{trial}{SUFFIX}"  # variant names never collide


def _scrub_request(request: Any, secrets: list[tuple[str, str]]) -> Any:
    """Applied to every request recorded, loaded or looked up, so matching compares scrubbed with scrubbed."""
    for name in list(request.headers):
        if name.lower() in _DROPPED_REQUEST_HEADERS or name.lower().startswith("x-stainless-"):
            del request.headers[name]
        elif isinstance(value := request.headers[name], str):
            request.headers[name] = scrub_text(value, secrets)
    request.uri = scrub_url(scrub_text(request.uri, secrets))
    if isinstance(request.body, bytes | str):
        body = request.body if isinstance(request.body, bytes) else request.body.encode("utf-8")
        request.body = scrub_body(body, secrets)  # as the response bodies a replayed conversation repeats
    return request


def _scrub_response(response: dict[str, Any], secrets: list[tuple[str, str]]) -> dict[str, Any] | None:
    """Failed attempts are not recorded; the rest loses headers that identify the account, and
    secret values in its headers and body (a server may echo the request)."""
    if response["status"]["code"] == 429 or response["status"]["code"] >= 500:
        return None
    response["headers"] = {name: [scrub_text(value, secrets) if isinstance(value, str) else value
                                  for value in (values if isinstance(values, list) else [values])]
                           for name, values in response["headers"].items()
                           if name.lower() not in _DROPPED_RESPONSE_HEADERS}
    body = response.get("body")
    if isinstance(body, dict) and isinstance(body.get("string"), bytes):
        body["string"] = scrub_body(body["string"], secrets)
    elif isinstance(body, dict) and isinstance(body.get("string"), str):
        body["string"] = scrub_text(body["string"], secrets)
    return response


def recorder(mode: str, environ: Mapping[str, str] | None = None, max_cassette_bytes: int | None = None) -> Any:
    """A configured `vcr.VCR` for the given record mode (and largest decompressed cassette it loads)."""
    import vcr

    secrets = secret_values(environ)
    config = vcr.VCR(
        record_mode=mode,
        match_on=("method", "scheme", "host", "port", "path", "query", "toolsandbox_body"),
        filter_query_parameters=["key", "api_key", "apikey", "rapidapi-key"],
        before_record_request=functools.partial(_scrub_request, secrets=secrets),
        before_record_response=functools.partial(_scrub_response, secrets=secrets),
        decode_compressed_response=True,
    )
    config.register_matcher("toolsandbox_body", same_body)
    config.register_persister(CompressedYamlPersister if max_cassette_bytes is None
                              else CompressedYamlPersister.bounded(max_cassette_bytes))
    return config
