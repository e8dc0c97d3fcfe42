"""A run's defaults, each written once: the options' defaults and help texts, the settings, the model
requests and the rate limiter all read them from here (no imports, so registering the options stays cheap).
The baseline gate's are in `gate_defaults.py`, the size limits in `limits.py`."""

DEFAULT_TRIALS = 1
"""Independent trials per scenario and variant (`--trials`)."""

DEFAULT_EPISODE_TIMEOUT = 600
"""Wall-clock seconds one episode may take before its item errors (`--episode-timeout`; 0 disables)."""

MAX_CONCURRENCY = 512
"""Highest `--concurrency`: episodes are threads, and past a few hundred they only wait on each other."""
DEFAULT_API_CONCURRENCY = 8
"""Episodes at once when a role is a model: API calls mostly wait, and 8 stays within the lowest
provider rate tiers; in-process agents gain nothing from threads (the GIL), so they default to 1."""

DEFAULT_MAX_TOKENS = 1024
"""Output token limit per model request (`--max-tokens`)."""
DEFAULT_REQUEST_TIMEOUT = 120.0
"""Seconds one attempt of a model request may take (`--request-timeout`)."""
DEFAULT_RETRIES = 4
"""Retries of a model request after a 429, 5xx, timeout or lost connection (`--llm-retries`)."""
DEFAULT_RETRY_DELAY = 1.0
"""First backoff delay in seconds, doubled per retry (`--llm-retry-delay`)."""

DEFAULT_RPM = 60.0
DEFAULT_TPM = 100_000.0
"""Conservative request and token rates for remote providers (`--rpm`, `--tpm`; docs/plugin.md says why)."""
DEFAULT_MAX_REQUEST_TOKENS = 1_000_000
"""Largest estimated live request (`--max-request-tokens`). Generous: above the context window of current
models (a request that large fails at the provider)."""
