"""Secrets scrubbed, one way, before anything is stored or shown.

A run handles API keys (environment variables), URLs that may carry credentials
(`http://user:pass@host/v1?token=…`) and text from servers and agents, which may hold either. Every
writer uses the functions here: cassettes scrub each request and response as it is recorded and
as it is loaded, and the report writer (`report/writing/files.py`) and the terminal (`report/text/terminal.py`)
scrub whatever text they are given. Scrubbing never runs backwards: a placeholder such as
`<OPENAI_API_KEY>` in a cassette stays that text on replay (vcrpy's `filter_sensitive_data` put the
real value back wherever the placeholder appeared, so an edited cassette could pull the key into the
report).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import unquote

SECRET_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "RAPID_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")
"""Environment variables whose values are replaced by `<NAME>` wherever they appear."""

SHORTEST_SECRET = 8
"""Values shorter than this are not replaced: no real key is, and replacing `x` or `1` everywhere
would garble every report and cassette of a test setup that sets a dummy key."""

REDACTED = "REDACTED"
"""What a secret query parameter's value becomes (a plain token: valid in a URL, JSON and HTML)."""

_SECRET_WORDS = frozenset({"key", "apikey", "token", "auth", "sig", "signature", "pass", "password", "passwd",
                           "passphrase", "pwd", "secret", "session", "sessionid", "code", "credential", "credentials",
                           "authorization", "jwt", "bearer", "hmac", "otp", "cookie", "private", "nonce"})
"""A name any of whose words (split at `_` and `.`) is one of these carries a credential (`pass`, `db.pass`)."""
_SECRET_PARTS = ("token", "secret", "passw", "passphrase", "credential", "signature", "apikey", "api_key", "jwt",
                 "bearer")
"""Substrings that mark a credential wherever they appear (`accessToken`, `client_secret`, `X-Amz-Signature`)."""
_SECRET_SUFFIXES = ("_key", "_sig", "_auth", "_session", "_pwd")
_SCHEME_VALUE = re.compile(r"(?i)\b(basic|bearer)([ \t]+)([A-Za-z0-9+/=._~-]{8,})")
"""`Bearer <token>` / `Basic <base64>`: an Authorization value, wherever a server echoed it."""
_HEADER_VALUE = re.compile(r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key|cookie)"
                           r"(\"?[ \t]*[:=][ \t]*\"?)(?!(?:basic|bearer|REDACTED)\b)([^\s\"',;&<>\\]{4,})")
"""`Authorization: <value>`, `"x-api-key": "<value>"`: a credential header quoted in an error body or a log."""

_USERINFO = re.compile(r"://[^\s/?#@'\"<>\\]*@")
"""`://user:pass@`: the credentials part of a URL (anything up to an `@` before the path). Anchored on
`://`, not on the scheme's letters: the scan then costs 1 ms per 240 KB of HTML instead of 20 ms."""
_PARAMETER = re.compile(r"([?&;])([^=&;?#\s'\"<>\\]{1,100})=([^&;#\s'\"<>\\]*)")
"""`?name=value`, `&name=value` (and `;` as HTML writes `&amp;`); the value stops at a quote, a
backslash or a space, so scrubbing JSON or HTML text keeps it well-formed."""


def is_secret_parameter(name: str) -> bool:
    """Whether a query parameter's name looks like it carries a credential (`key`, `api-key`,
    `access_token`, `X-Amz-Signature`, `client_secret`, …), compared case-insensitively with `-`
    and `_` alike."""
    normalised = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", unquote(name).strip()).lower().replace("-", "_")
    words = set(re.split(r"[_.\[\]]+", normalised))  # `sessionKey` is session_key
    return (bool(words & _SECRET_WORDS) or any(part in normalised for part in _SECRET_PARTS)
            or normalised.endswith(_SECRET_SUFFIXES))


def secret_values(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(value, placeholder) of every secret variable set in `environ` (default: the process's),
    longest value first so a key that contains another is replaced whole."""
    environ = os.environ if environ is None else environ
    found = [(value, f"<{name}>") for name in SECRET_VARIABLES
             if len(value := environ.get(name) or "") >= SHORTEST_SECRET]
    return sorted(found, key=lambda pair: -len(pair[0]))


def _parameter(match: re.Match[str]) -> str:
    separator, name, _ = match.groups()
    return f"{separator}{name}={REDACTED}" if is_secret_parameter(name) else match.group()


def scrub_url(url: str) -> str:
    """`url` without its credentials (`user:pass@`) and with every secret query value `REDACTED`;
    anything else is kept byte for byte, so two requests that differed only in a secret still match."""
    scheme_end = url.find("://")
    if scheme_end >= 0:
        authority_start = scheme_end + 3
        authority_end = min((i for i in (url.find(c, authority_start) for c in "/?#") if i >= 0), default=len(url))
        at = url.rfind("@", authority_start, authority_end)
        if at >= 0:
            url = url[:authority_start] + url[at + 1:]
    path_end = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    return url[:path_end] + _PARAMETER.sub(_parameter, url[path_end:])


def _scheme_value(match: re.Match[str]) -> str:
    """`Basic <value>` keeps its text when the value reads as a word (`bearer instruments`), not a token."""
    scheme, space, value = match.groups()
    looks_like_token = (any(char.isdigit() or char in "+/=" for char in value)
                        or (any(char.isupper() for char in value) and any(char.islower() for char in value)))
    return f"{scheme}{space}{REDACTED}" if looks_like_token else match.group()


def scrub_text(text: str, secrets: list[tuple[str, str]] | None = None) -> str:
    """`text` with secret values (default: from the environment) replaced by `<NAME>`, URL
    credentials removed, secret query values and echoed credential headers `REDACTED`, wherever
    they appear in it. Scrub before cutting a text: a cut secret no longer matches."""
    for value, placeholder in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, placeholder)
    if "://" in text:
        text = _USERINFO.sub("://", text)
    if "=" in text:
        text = _PARAMETER.sub(_parameter, text)
    lowered = text.lower()
    if "basic" in lowered or "bearer" in lowered:
        text = _SCHEME_VALUE.sub(_scheme_value, text)
    if any(name in lowered for name in ("authorization", "api-key", "cookie")):
        text = _HEADER_VALUE.sub(lambda match: f"{match.group(1)}{match.group(2)}{REDACTED}", text)
    return text


def scrub_body(data: bytes, secrets: list[tuple[str, str]]) -> bytes:
    """A recorded body (UTF-8 text, as JSON is) scrubbed like any text; other bytes lose the secret values."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return scrub_bytes(data, secrets)
    scrubbed = scrub_text(text, secrets)
    return data if scrubbed == text else scrubbed.encode("utf-8")


def scrub_bytes(data: bytes, secrets: list[tuple[str, str]]) -> bytes:
    """`data` (a request or response body) with secret values replaced by `<NAME>`."""
    for value, placeholder in secrets:
        encoded = value.encode("utf-8")
        if encoded in data:
            data = data.replace(encoded, placeholder.encode("utf-8"))
    return data
