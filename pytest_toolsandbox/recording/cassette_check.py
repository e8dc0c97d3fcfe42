"""What is wrong with a cassette file, said before anything replays from it.

A cassette is data from disk (committed, edited by hand, copied between machines): vcrpy trusts its
layout and fails deep inside a replay (`'int' object has no attribute 'encode'`), or treats a file it
cannot decode as empty and records over it. Here the parsed YAML is checked against the layout the
transport replays (`transport.replayed_response`), so a bad file is refused when it is loaded, with
its path and the first problem found, and no record mode ever overwrites it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class CassetteError(ValueError):
    """A cassette file that cannot be replayed; the message names the file and what is wrong."""


def _headers_problem(headers: Any, where: str) -> str | None:
    if not isinstance(headers, Mapping):
        return f"{where}.headers is {type(headers).__name__}, not a mapping of header name to a list of values"
    for name, values in headers.items():
        if not isinstance(name, str):
            return f"{where}.headers has a {type(name).__name__} name ({name!r}), not text"
        if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
            return f"{where}.headers[{name!r}] is not a list of text values"
    return None


def _body_problem(body: Any, where: str) -> str | None:
    if body is None or isinstance(body, str | bytes):
        return None
    return f"{where}.body is {type(body).__name__}, not text"


def _request_problem(request: Any, where: str) -> str | None:
    if not isinstance(request, Mapping):
        return f"{where} is {type(request).__name__}, not a mapping (method, uri, body, headers)"
    for field in ("method", "uri"):
        if not isinstance(request.get(field), str):
            return f"{where}.{field} is missing or not text"
    if set(request) - {"method", "uri", "body", "headers"}:
        return f"{where} has unknown fields {sorted(map(str, set(request) - {'method', 'uri', 'body', 'headers'}))}"
    return _body_problem(request.get("body"), where) or _headers_problem(request.get("headers", {}), where)


def _response_problem(response: Any, where: str) -> str | None:
    if not isinstance(response, Mapping):
        return f"{where} is {type(response).__name__}, not a mapping (status, headers, body)"
    status = response.get("status")
    if not isinstance(status, Mapping):
        return f"{where}.status is missing or not a mapping (code, message)"
    code = status.get("code")
    if isinstance(code, bool) or not isinstance(code, int) or not 100 <= code <= 599:
        return f"{where}.status.code is {code!r}, not an HTTP status code (100-599)"
    if not isinstance(status.get("message"), str | None):
        return f"{where}.status.message is {type(status['message']).__name__}, not text"
    body = response.get("body")
    if not isinstance(body, Mapping) or "string" not in body:
        return f"{where}.body is {type(body).__name__}, not a mapping with a `string`"
    return (_body_problem(body["string"], f"{where}.body")
            or _headers_problem(response.get("headers"), where))


def cassette_problem(data: Any) -> str | None:
    """The first thing in parsed cassette YAML that a replay could not use, or None when it is sound."""
    if not isinstance(data, Mapping):
        return f"the top level is {type(data).__name__}, not a mapping with `interactions`"
    interactions = data.get("interactions")
    if not isinstance(interactions, list):
        return f"`interactions` is {type(interactions).__name__}, not a list"
    for position, interaction in enumerate(interactions):
        where = f"interactions[{position}]"
        if not isinstance(interaction, Mapping):
            return f"{where} is {type(interaction).__name__}, not a mapping (request, response)"
        problem = (_request_problem(interaction.get("request"), f"{where}.request")
                   or _response_problem(interaction.get("response"), f"{where}.response"))
        if problem:
            return problem
    return None
