"""Which model a spec names, and the settings every model request uses.

`--agent` / `--user` accept a short alias (`claude`, `gpt-4o`, …) or `<provider>:<model id>` for any
model of a provider (`anthropic:claude-…`, `openai:gpt-…`, or any model of an OpenAI-compatible server
with `--base-url`). The Claude model behind `claude` is defined here and nowhere else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

CLAUDE_MODEL = "claude-sonnet-4-5-20250929"
"""The model `--agent=claude` and `--user=claude` run; change it here to move the alias."""

ALIASES: dict[str, tuple[str, str]] = {
    "claude": ("anthropic", CLAUDE_MODEL),
    "gpt-4o": ("openai", "gpt-4o"),
    "gpt-4o-mini": ("openai", "gpt-4o-mini"),
}
PROVIDERS = ("anthropic", "openai")
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
PLACEHOLDER_KEY = "not-needed"
"""Sent to a `--base-url` server when no key is set: local servers (llama.cpp, vLLM, Ollama) ignore it."""


@dataclass(frozen=True)
class ModelOptions:
    """Run-wide request settings (options and ini keys); the same for agent and user simulator."""

    base_url: str | None = None
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout: float = 120.0
    retries: int = 4
    retry_delay: float = 1.0


@dataclass(frozen=True)
class ModelSettings:
    """Everything one model endpoint needs; part of what a cassette's requests depend on."""

    provider: str
    model: str
    options: ModelOptions = ModelOptions()

    @property
    def key_variable(self) -> str:
        return KEY_VARIABLES[self.provider]

    def api_key(self) -> str | None:
        """The key from the environment; a placeholder for a `--base-url` server that needs none."""
        key = os.environ.get(self.key_variable)
        if key:
            return key
        return PLACEHOLDER_KEY if self.options.base_url else None

    def with_options(self, options: ModelOptions) -> ModelSettings:
        return replace(self, options=options)


def parse_model_spec(spec: str) -> ModelSettings | None:
    """The model a spec names, or None when the spec is not a model (a built-in role, module:Class)."""
    if spec in ALIASES:
        provider, model = ALIASES[spec]
        return ModelSettings(provider, model)
    provider, colon, model = spec.partition(":")
    if colon and provider in PROVIDERS:
        if not model.strip():
            raise ValueError(f"{spec}: give a model id after '{provider}:', e.g. {provider}:"
                             f"{ALIASES['claude' if provider == 'anthropic' else 'gpt-4o'][1]}")
        return ModelSettings(provider, model.strip())
    return None
