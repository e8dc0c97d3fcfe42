"""Which model a spec names, and the settings every model request uses.

`--agent` / `--user` accept a short alias (`claude`, `gpt-4o`, …) or `<provider>:<model id>` for any
model of a provider (`anthropic:claude-…`, `openai:gpt-…`, or any model of an OpenAI-compatible server
with `--model-base-url`). The Claude aliases follow the installed anthropic SDK (`model_catalog.py`):
`claude` is the newest Sonnet it knows that it does not list as deprecated, so upgrading the SDK moves
the alias, and replays keep the model their cassettes were recorded with (`recording/pins.py`).

The endpoint belongs to the spec: `ModelOptions.base_urls` maps specs to URLs (the ini's
`toolsandbox_model_base_url = SPEC=URL` lines and `--model-base-url SPEC=URL`), and only a bare
`--model-base-url URL` given on the command line applies to every model of that run. A spec without a
URL talks to its provider's API (or to the URL in the SDK's own `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`),
so the repository's local server can never capture `--agent=gpt-4o`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from urllib.parse import urlsplit, urlunsplit

from pytest_toolsandbox.basics.run_defaults import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RETRIES,
    DEFAULT_RETRY_DELAY,
)
from pytest_toolsandbox.roles.model_catalog import family_of, replacement, resolve_family

FAMILY_ALIASES: dict[str, tuple[str, str]] = {
    "claude": ("anthropic", "sonnet"),
    "claude-opus": ("anthropic", "opus"),
    "claude-haiku": ("anthropic", "haiku"),
}
"""Aliases that follow the provider: (provider, model family), resolved from the installed SDK's data."""
FIXED_ALIASES: dict[str, tuple[str, str]] = {
    "gpt-4o": ("openai", "gpt-4o"),
    "gpt-4o-mini": ("openai", "gpt-4o-mini"),
}
"""Aliases that are the provider's own moving names (OpenAI resolves them to a snapshot per request)."""
ALIAS_NAMES = (*FAMILY_ALIASES, *FIXED_ALIASES)
PROVIDERS = ("anthropic", "openai")
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_VARIABLES = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
"""The SDKs' own variables for another endpoint; honoured (and shown in messages) like the SDKs do."""
DEFAULT_ENDPOINTS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
PARAM_STYLES = ("chat", "reasoning")
"""OpenAI request parameter styles (roles/openai_chat.py): max_tokens + temperature, or
max_completion_tokens + reasoning_effort."""
PLACEHOLDER_KEY = "not-needed"
"""Sent to a `--model-base-url` server when no key is set: local servers (llama.cpp, vLLM, Ollama) ignore it."""


@dataclass(frozen=True)
class ModelOptions:
    """Request settings of a run (options and ini keys); `for_spec` picks one spec's endpoint."""

    base_url: str | None = None
    """The endpoint of every model spec without an entry in `base_urls` (a bare `--model-base-url URL`)."""
    base_urls: tuple[tuple[str, str], ...] = ()
    """(spec, URL) pairs: the endpoint of the model a spec names, from `SPEC=URL` values."""
    temperature: float | None = None
    """None: not given (chat models get 0, reasoning models none)."""
    provider_temperature: bool = False
    """True: a temperature not given is not sent at all, so the provider's default applies (the reference's
    rules: its agents sent none)."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout: float = DEFAULT_REQUEST_TIMEOUT
    """Seconds one attempt of a request may take (`--request-timeout`); a retry starts a new attempt."""
    retries: int = DEFAULT_RETRIES
    retry_delay: float = DEFAULT_RETRY_DELAY
    reasoning_effort: str | None = None
    """Sent to reasoning models only (`--reasoning-effort`); None: the model's default."""
    param_style: str | None = None
    """OpenAI request parameters: "chat" or "reasoning"; None: chosen by the model id (roles/openai_chat.py)."""
    param_styles: tuple[tuple[str, str], ...] = ()
    """(spec, style) pairs from `--param-style SPEC=STYLE`."""

    def for_spec(self, spec: str) -> ModelOptions:
        """The options one spec's model uses: its own URL, else the run-wide one, else none (its provider);
        its own parameter style likewise."""
        return replace(self, base_url=dict(self.base_urls).get(spec, self.base_url), base_urls=(),
                       param_style=dict(self.param_styles).get(spec, self.param_style), param_styles=())


@dataclass(frozen=True)
class ModelSettings:
    """Everything one model endpoint needs; part of what a cassette's requests depend on."""

    provider: str
    model: str
    options: ModelOptions = ModelOptions()
    alias: str | None = None
    """The alias the model was named by (`claude`), None for `provider:model`: an alias's model may
    later be replaced by the one its cassette was recorded with (`pinned`)."""

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def key_variable(self) -> str:
        return KEY_VARIABLES[self.provider]

    @property
    def endpoint(self) -> str:
        """The URL requests go to, as the SDK will resolve it (named in every connection message)."""
        return (self.options.base_url or os.environ.get(BASE_URL_VARIABLES[self.provider])
                or DEFAULT_ENDPOINTS[self.provider])

    @property
    def shown_endpoint(self) -> str:
        """The endpoint as messages name it: no credentials and no query (a token placed there must not
        reach a CI log)."""
        return without_credentials(self.endpoint).partition("?")[0].partition("#")[0]

    def api_key(self) -> str | None:
        """The key from the environment; a placeholder for a `--model-base-url` server that needs none."""
        key = os.environ.get(self.key_variable)
        if key:
            return key
        return PLACEHOLDER_KEY if self.options.base_url else None

    def with_options(self, options: ModelOptions) -> ModelSettings:
        return replace(self, options=options)

    def pinned(self, model: str) -> ModelSettings:
        """The same alias on the model its cassette was recorded with."""
        return replace(self, model=model)


def use_instead(model: ModelSettings, otherwise: str) -> str:
    """What to run instead of a deprecated, retired or unknown model: the current model of its family
    and the alias that names it (`use anthropic:claude-sonnet-5-5 (--agent claude)`), else `otherwise`."""
    current = replacement(model.provider, model.model)
    if current is None:
        return otherwise
    family = family_of(model.model)
    alias = next((alias for alias, named in FAMILY_ALIASES.items() if named == (model.provider, family)), None)
    return f"use {model.provider}:{current}" + (f" (--agent {alias})" if alias else "")


def without_credentials(url: str) -> str:
    """`url` without `user:password@`: httpx would turn it into an `Authorization: Basic` header, which
    the provider (or a server quoting it in an error) never needs; keys go in the key variables."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def parse_model_spec(spec: str) -> ModelSettings | None:
    """The model a spec names, or None when the spec is not a model (a built-in role, module:Class)."""
    if spec in FAMILY_ALIASES:
        provider, family = FAMILY_ALIASES[spec]
        return ModelSettings(provider, resolve_family(provider, family), alias=spec)
    if spec in FIXED_ALIASES:
        provider, model = FIXED_ALIASES[spec]
        return ModelSettings(provider, model, alias=spec)
    provider, colon, model = spec.partition(":")
    if colon and provider in PROVIDERS:
        if not model.strip():
            example = resolve_family("anthropic", "sonnet") if provider == "anthropic" else "gpt-4o"
            raise ValueError(f"{spec}: give a model id after '{provider}:', e.g. {provider}:{example}")
        return ModelSettings(provider, model.strip())
    return None
