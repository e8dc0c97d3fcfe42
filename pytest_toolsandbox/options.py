"""The plugin's options and ini keys, and the validated settings of a run.

The command line wins, then the ini file, then the built-in default. This module does not import
pytest: the plugin passes a lookup for option values and turns `OptionError` into a usage error.
Heavy imports (roles, baseline loading) happen inside `read_settings`, so registering the options
stays cheap.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pytest_toolsandbox.basics.gate_defaults import DEFAULT_ALPHA, DEFAULT_MIN_EFFECT, alpha_problem, min_effect_problem
from pytest_toolsandbox.basics.limits import (
    DEFAULT_MAX_CASSETTE_BYTES,
    DEFAULT_MAX_MESSAGE_CHARS,
    DEFAULT_MAX_RESPONSE_BYTES,
    MIB,
    Limits,
)
from pytest_toolsandbox.basics.run_defaults import (
    DEFAULT_API_CONCURRENCY,
    DEFAULT_EPISODE_TIMEOUT,
    DEFAULT_MAX_REQUEST_TOKENS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RETRIES,
    DEFAULT_RETRY_DELAY,
    DEFAULT_RPM,
    DEFAULT_TPM,
    DEFAULT_TRIALS,
    MAX_CONCURRENCY,
)

if TYPE_CHECKING:
    from pytest_toolsandbox.report.ci.baseline import Baseline
    from pytest_toolsandbox.roles.model_spec import ModelOptions
    from pytest_toolsandbox.roles.resolve import RoleFactory, RoleKind
    from pytest_toolsandbox.scenario.models import Scenario


def _mib(size: int) -> str:
    """A size in whole MiB as the size options spell it (`8M`)."""
    return f"{size // MIB}M"


@dataclass(frozen=True)
class Option:
    flag: str
    ini: str
    """The ini key; empty for options that only make sense for one invocation."""
    ini_type: Literal["string", "args", "linelist"]
    default: Any
    help: str
    metavar: str
    append: bool = False

    @property
    def dest(self) -> str:
        return "toolsandbox_" + self.flag.lstrip("-").replace("-", "_")


OPTIONS = (
    Option("--agent", "toolsandbox_agent", "args", ["reference"], "agent under test: reference, unhelpful, human "
           "(terminal; use with -s), a model (claude, gpt-4o, anthropic:ID, openai:ID), replay:PATH, an entry "
           "point name (group pytest_toolsandbox.agents) or module:Class; repeat for several agents "
           "(default: reference)", "SPEC", append=True),
    Option("--user", "toolsandbox_user", "string", "scripted", "user simulator: scripted, "
           "human (terminal; use with -s), a model spec (claude, gpt-4o, anthropic:ID, openai:ID), llm (the "
           "first model agent's model), reference-history (off-policy mode), an entry point name "
           "(group pytest_toolsandbox.users) or module:Class (default: scripted)", "SPEC"),
    Option("--augment", "toolsandbox_augment", "args", ["base"], "tool-augmentation variants to run, comma "
           "separated or repeated; 'all' for the paper's eight (default: base)", "VARIANTS", append=True),
    Option("--trials", "toolsandbox_trials", "string", str(DEFAULT_TRIALS), "independent trials per scenario "
           f"and variant; pass^k is reported when > 1 (default: {DEFAULT_TRIALS})", "N"),
    Option("--threshold", "toolsandbox_threshold", "string", "", "similarity a trajectory needs to pass, "
           "unless the scenario file sets its own threshold (default: none; an item passes when every "
           "milestone is reached and no minefield fired)", "X"),
    Option("--max-messages", "toolsandbox_max_messages", "string", "", "cap on messages per episode "
           "(default: each scenario's max_messages)", "N"),
    Option("--episode-timeout", "toolsandbox_episode_timeout", "string", str(DEFAULT_EPISODE_TIMEOUT), "wall-clock "
           f"seconds one episode may take before its item becomes an error; 0 disables (default: "
           f"{DEFAULT_EPISODE_TIMEOUT})", "SECONDS"),
    Option("--concurrency", "toolsandbox_concurrency", "string", "", "episodes played at once in each "
           "process (each xdist worker): worth raising for agents behind an API, which mostly wait "
           f"(default: {DEFAULT_API_CONCURRENCY} when an agent or the user is a model, else 1)", "N"),
    Option("--report-dir", "toolsandbox_report_dir", "string", "toolsandbox-report", "directory for "
           "summary.json, trajectories and the static HTML report (default: toolsandbox-report)", "DIR"),
    Option("--baseline", "toolsandbox_baseline", "string", "", "earlier summary.json: its failures run as "
           "expected failures and only regressions fail the run", "PATH"),
    Option("--baseline-alpha", "toolsandbox_baseline_alpha", "string", str(DEFAULT_ALPHA), "significance level "
           "of the baseline gate's tests, strictly between 0 and 1: per category and over the run, a drop of "
           "similarity or pass rate across tasks; with --trials > 1, per task, fewer passes (default: "
           f"{DEFAULT_ALPHA:g})", "P"),
    Option("--baseline-min-effect", "toolsandbox_baseline_min_effect", "string", str(DEFAULT_MIN_EFFECT),
           "smallest drop of a group's mean similarity or pass rate (0 to 1) that fails the run when significant "
           f"(default: {DEFAULT_MIN_EFFECT:g})", "DROP"),
    Option("--update-baseline", "", "string", "", "write this run's summary.json to PATH as the new baseline "
           "(e.g. the ini's toolsandbox_baseline) when every selected item finished; command line only", "PATH"),
    Option("--ts-markdown", "toolsandbox_markdown", "string", "", "also write the results as Markdown to PATH "
           "(per-category tables, regressions and failures with links); written to $GITHUB_STEP_SUMMARY as "
           "well whenever that variable is set", "PATH"),
    Option("--scenarios", "toolsandbox_scenarios", "args", ["scenarios"], "directories whose YAML files are "
           "scenarios; repeatable (default: scenarios)", "DIR", append=True),
    Option("--model-base-url", "toolsandbox_model_base_url", "linelist", [], "endpoint of a model spec: "
           "SPEC=URL (repeatable; ini: one SPEC=URL per line), e.g. openai:qwen2.5=http://127.0.0.1:8000/v1 for an "
           "OpenAI-compatible server (no API key needed then); a bare URL on the command line applies to every "
           "model of the run. Specs without a URL use their provider's API", "[SPEC=]URL", append=True),
    Option("--temperature", "toolsandbox_temperature", "string", "", "sampling temperature of model "
           "agents and user simulators (default: 0 for chat models; none sent to OpenAI reasoning models, nor to any "
           "model under --rules reference, so the provider's default applies)", "T"),
    Option("--reasoning-effort", "toolsandbox_reasoning_effort", "string", "", "reasoning_effort sent to OpenAI "
           "reasoning models (o1, o3, o4-mini, gpt-5 …): minimal, low, medium or high (default: the model's own)",
           "EFFORT"),
    Option("--param-style", "toolsandbox_param_style", "linelist", [], "OpenAI request parameters of a model "
           "spec, overriding the choice by model id: SPEC=chat (max_tokens, temperature) or SPEC=reasoning "
           "(max_completion_tokens, reasoning_effort); repeatable (ini: one per line); a bare STYLE applies to "
           "every model", "[SPEC=]STYLE", append=True),
    Option("--max-tokens", "toolsandbox_max_tokens", "string", str(DEFAULT_MAX_TOKENS), "output token limit per "
           f"model request (default: {DEFAULT_MAX_TOKENS})", "N"),
    Option("--request-timeout", "toolsandbox_request_timeout", "string", f"{DEFAULT_REQUEST_TIMEOUT:g}", "seconds "
           "one attempt of a model request may take before it is abandoned (and retried, as a timeout) (default: "
           f"{DEFAULT_REQUEST_TIMEOUT:g})", "SECONDS"),
    Option("--llm-retries", "toolsandbox_llm_retries", "string", str(DEFAULT_RETRIES), "retries of a model "
           f"request after a 429, 5xx, timeout or lost connection (default: {DEFAULT_RETRIES})", "N"),
    Option("--llm-retry-delay", "toolsandbox_llm_retry_delay", "string", f"{DEFAULT_RETRY_DELAY:g}", "first "
           "backoff delay in seconds, doubled per retry with jitter; a server's retry-after wins (default: "
           f"{DEFAULT_RETRY_DELAY:g})", "SECONDS"),
    Option("--ts-record-mode", "toolsandbox_record_mode", "string", "", "cassette record mode: none "
           "(replay only), once, new_episodes, all (default: none when $CI is set, else once)", "MODE"),
    Option("--cassette-dir", "toolsandbox_cassette_dir", "string", "cassettes", "directory of the "
           "recorded model and API traffic (default: cassettes)", "DIR"),
    Option("--rpm", "toolsandbox_rpm", "string", "", "live model/API requests per minute per host and "
           "model, shared by the run's episodes and split across xdist workers; 0 = unlimited (default: "
           f"{DEFAULT_RPM:g}; loopback hosts unlimited unless set)", "N"),
    Option("--tpm", "toolsandbox_tpm", "string", "", "tokens per minute per host and model (estimated "
           f"before a live request, corrected by the reported usage); 0 = unlimited (default: {DEFAULT_TPM:g}; "
           "loopback hosts unlimited unless set)", "N"),
    Option("--prompts", "toolsandbox_prompts", "string", "ours", "system prompts of the agent and the user "
           "simulator: ours, or reference (the reference benchmark's own, imported with import-toolsandbox, "
           "for numbers comparable with its paper) (default: ours)", "MODE"),
    Option("--rules", "toolsandbox_rules", "string", "", "failure rules: ours, or reference (the reference "
           "benchmark's: a call to a tool not offered or with arguments that are not JSON ends the episode and "
           "scores 0, errored items count as 0 in the means, no sampling temperature is sent unless "
           "--temperature is given; for numbers comparable with its paper) (default: reference with "
           "--prompts reference, else ours)", "RULES"),
    Option("--max-request-tokens", "toolsandbox_max_request_tokens", "string", str(DEFAULT_MAX_REQUEST_TOKENS),
           "largest estimated size of one live request, in tokens (body bytes / 4 + its output limit): a larger "
           f"one is not sent and its item errors; 0 = unlimited (default: {DEFAULT_MAX_REQUEST_TOKENS})", "N"),
    Option("--tool-backend", "toolsandbox_tool_backend", "string", "offline", "where search tools get "
           "their facts: offline (bundled data) or rapidapi (live, key from RAPID_API_KEY, recorded in "
           "cassettes) (default: offline)", "NAME"),
    Option("--ts-shard", "toolsandbox_shard", "string", "", "run only shard i of N (e.g. 2/4): every Nth of the "
           "collected scenario files ordered by sha256 of the path, each with all its variants, trials and agents; "
           "merge the shards' report directories with `python -m pytest_toolsandbox merge`", "i/N"),
    Option("--resume", "toolsandbox_resume", "string", "", "complete the unfinished run whose report "
           "directory is DIR: run only the items without a finished record there (errored ones run again) "
           "and write the whole run's report into DIR", "DIR"),
    Option("--max-spend", "toolsandbox_max_spend", "string", "", "stop starting episodes once the run's model "
           "spend reaches USD; running episodes finish, the summary is marked partial, exit status 2", "USD"),
    Option("--max-run-tokens", "toolsandbox_max_run_tokens", "string", "", "stop starting episodes once the "
           "run's model tokens (input + output, agent and user) reach N; as --max-spend", "N"),
    Option("--price-table", "toolsandbox_price_table", "string", "", "LiteLLM's "
           "model_prices_and_context_window.json to price tokens with before the bundled table (default: "
           "litellm's own copy when litellm is installed)", "PATH"),
    Option("--progress", "toolsandbox_progress", "string", "auto", "live progress line: on, off, or auto "
           "(on when a role is a model or more than 50 items run; never with -q) (default: auto)", "WHEN"),
    Option("--max-response-bytes", "toolsandbox_max_response_bytes", "string", _mib(DEFAULT_MAX_RESPONSE_BYTES),
           "largest live HTTP response body read (model replies, tool APIs); a larger one errors its item; K/M/G "
           f"suffixes (default: {_mib(DEFAULT_MAX_RESPONSE_BYTES)})", "SIZE"),
    Option("--max-cassette-bytes", "toolsandbox_max_cassette_bytes", "string", _mib(DEFAULT_MAX_CASSETTE_BYTES),
           "largest decompressed cassette loaded; a larger one errors its item (default: "
           f"{_mib(DEFAULT_MAX_CASSETTE_BYTES)})", "SIZE"),
    Option("--max-message-chars", "toolsandbox_max_message_chars", "string", str(DEFAULT_MAX_MESSAGE_CHARS),
           "characters of one message's text kept in the report (trajectory JSON and HTML); the rest is cut with "
           f"a marker (default: {DEFAULT_MAX_MESSAGE_CHARS})", "N"),
)
_BY_FLAG = {option.flag: option for option in OPTIONS}

MAX_MESSAGES = 1000
"""Highest --max-messages: scoring compares messages pairwise, so its cost grows with the square."""



class Found(NamedTuple):
    """An option's value (command line, else ini file), the directory its relative paths are relative to,
    and whether it came from the command line (an ini value is the project's standing setting)."""

    value: Any
    base: Path
    given: bool = False


Lookup = Callable[[Option], Found]

DEPRECATED_FLAGS = {"--base-url": "--model-base-url"}
"""Old option names still accepted (with a warning) where no other plugin registered them:
pytest-base-url (pulled in by pytest-playwright and pytest-selenium) owns `--base-url`."""
REMOVED_INI = {"toolsandbox_base_url": "toolsandbox_model_base_url"}
"""Old ini keys that now mean something else: a run that sets one stops with the new spelling."""


class OptionError(ValueError):
    """An option value that cannot be used; the message names the option and the fix."""


@dataclass(frozen=True)
class Settings:
    """Validated options of a run (identical on the controller and every xdist worker)."""

    agents: tuple[str, ...]
    user: str
    variants: tuple[str, ...]
    trials: int
    threshold: float | None
    max_messages: int | None
    episode_timeout: float | None
    report_dir: Path
    baseline: Baseline | None
    scenario_roots: tuple[Path, ...]
    agent_factories: dict[str, RoleFactory]
    user_factory: RoleFactory
    model_options: ModelOptions | None = None
    record_mode: str = "once"
    cassette_dir: Path = Path("cassettes")
    tool_backend: str = "offline"
    rpm: float | None = None
    """Requests per minute as given (None: not given, so the default applies to remote hosts only)."""
    tpm: float | None = None
    max_request_tokens: int = DEFAULT_MAX_REQUEST_TOKENS
    """Largest estimated live request (0: no limit): one oversized conversation fails its own item
    instead of reserving minutes of the shared token budget."""
    concurrency: int = 1
    progress: str = "auto"
    limits: Limits = field(default_factory=Limits)
    prompts: str = "ours"
    rules: str = "ours"
    baseline_alpha: float = DEFAULT_ALPHA
    baseline_min_effect: float = DEFAULT_MIN_EFFECT
    shard: tuple[int, int] | None = None
    resume: Path | None = None
    max_spend: float | None = None
    max_run_tokens: int | None = None
    price_table: Path | None = None
    update_baseline: Path | None = None
    markdown: Path | None = None

    def as_json(self, rootdir: Path) -> dict[str, Any]:
        """The options as recorded in summary.json (paths relative to the rootdir when inside it)."""
        return {"agents": list(self.agents), "user": self.user, "augment": list(self.variants),
                "trials": self.trials, "threshold": self.threshold, "max_messages": self.max_messages,
                "episode_timeout": self.episode_timeout,
                "report_dir": display(self.report_dir, rootdir),
                "baseline": self.baseline.path if self.baseline else None, "baseline_alpha": self.baseline_alpha,
                "baseline_min_effect": self.baseline_min_effect,
                "scenarios": [display(root, rootdir) for root in self.scenario_roots],
                "record_mode": self.record_mode, "cassette_dir": display(self.cassette_dir, rootdir),
                "tool_backend": self.tool_backend, "rpm": self.rpm, "tpm": self.tpm,
                "max_request_tokens": self.max_request_tokens, "concurrency": self.concurrency,
                "prompts": self.prompts, "rules": self.rules, "limits": asdict(self.limits),
                "shard": f"{self.shard[0]}/{self.shard[1]}" if self.shard else None,
                "resume": display(self.resume, rootdir) if self.resume else None,
                "max_spend": self.max_spend, "max_run_tokens": self.max_run_tokens,
                "price_table": display(self.price_table, rootdir) if self.price_table else None,
                "model_options": _model_options_json(self.model_options)}


def _model_options_json(options: ModelOptions | None) -> dict[str, Any] | None:
    """The model options as recorded, the base URL without credentials or secret query values."""
    if options is None:
        return None
    from pytest_toolsandbox.recording.secrets import scrub_url

    data = asdict(options)
    if data["base_url"]:
        data["base_url"] = scrub_url(data["base_url"])
    return data


def display(path: Path, rootdir: Path) -> str:
    """`path` relative to `rootdir` when inside it, else absolute."""
    return path.relative_to(rootdir).as_posix() if path.is_relative_to(rootdir) else str(path)


def _values(value: str | list[str] | None) -> list[str]:
    """The values of an option: one string, or a list (repeated flag, or an `args` ini key)."""
    if value is None:
        return []
    return [item for item in ([value] if isinstance(value, str) else value) if item]


def _number(lookup: Lookup, flag: str, kind: type, low: float, high: float | None) -> Any:
    option = _BY_FLAG[flag]
    value = lookup(option).value
    if value in ("", None):
        return None
    try:
        number = kind(value)
    except ValueError:
        raise OptionError(f"{option.flag} / {option.ini}: {value!r} is not a {kind.__name__}") from None
    if not math.isfinite(number):  # float('nan') passes every comparison below and poisons summary.json
        raise OptionError(f"{option.flag} / {option.ini}: {value!r} is not a finite number")
    if number < low or (high is not None and number > high):
        bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
        raise OptionError(f"{option.flag} / {option.ini}: {value!r} must be {bounds}")
    return number


_SIZE = re.compile(r"(?i)\s*(\d+)\s*([kmg]?)(?:i?b)?\s*")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _size(lookup: Lookup, flag: str) -> int:
    """A byte count: digits with an optional K, M or G (powers of 1024; `8M`, `64MiB`, `500000`)."""
    option = _BY_FLAG[flag]
    value = lookup(option).value
    value = option.default if value in ("", None) else str(value)
    match = _SIZE.fullmatch(value)
    if match is None or int(match.group(1)) == 0:
        raise OptionError(f"{option.flag} / {option.ini}: {value!r} is not a size; give a positive number of "
                          "bytes, optionally with K, M or G (e.g. 8M)")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def _paths(lookup: Lookup, flag: str) -> list[Path]:
    """Paths are never split on spaces or commas (a directory may contain either)."""
    value, base, _ = lookup(_BY_FLAG[flag])
    return [Path(os.path.abspath(base / item)) for item in _values(value)]  # like pytest: no symlink resolution


def _report_dir(path: Path) -> Path:
    """The report directory must be a directory we can create or write, checked before anything runs:
    otherwise the first write would fail only after the first item, and every result would be lost."""
    if path.exists() and not path.is_dir():
        raise OptionError(f"--report-dir / toolsandbox_report_dir: {path} is a file, not a directory; "
                          "remove it or choose another directory")
    existing = next((parent for parent in (path, *path.parents) if parent.exists()), None)
    if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise OptionError(f"--report-dir / toolsandbox_report_dir: cannot create or write {path} "
                          f"({existing} is not a writable directory); choose another directory")
    return path


def _variants(lookup: Lookup) -> tuple[str, ...]:
    from pytest_toolsandbox.basics.vocabulary import VARIANT_CATEGORIES as VARIANTS

    chosen: list[str] = []
    words = [word for value in _values(lookup(_BY_FLAG["--augment"])[0]) for word in re.split(r"[,\s]+", value)]
    for name in filter(None, words):
        for variant in list(VARIANTS) if name == "all" else [name]:
            if variant not in VARIANTS:
                raise OptionError(f"--augment / toolsandbox_augment: unknown variant {variant!r}; "
                                  f"choose 'all' or some of {', '.join(VARIANTS)}")
            if variant not in chosen:
                chosen.append(variant)
    return tuple(chosen or ["base"])


def _replay_file(root: Path, scenario: Scenario, item_id: str) -> Path:
    """Where `replay:DIR` finds an item's recording: its trajectory file in a report's layout."""
    from pytest_toolsandbox.report.results.slug import trajectory_slug

    return root / f"{trajectory_slug(scenario.path, item_id)}.json"


def _role_factory(spec: str, kind: RoleKind, model_options: ModelOptions) -> RoleFactory:
    from pytest_toolsandbox.roles.resolve import RoleSpecError, role_factory

    try:
        return role_factory(spec, kind, _replay_file, model_options)
    except RoleSpecError as error:
        raise OptionError(str(error)) from None


def _baseline(path: Path | None, rootdir: Path, agents: tuple[str, ...],
              shipped: dict[str, Any] | None, given: bool) -> Baseline | None:
    """xdist workers take the controller's copy (`shipped`), so a baseline file overwritten
    mid-run cannot make them diverge. A baseline `given` on the command line gates a one-agent run
    whatever its spec; the ini's gates only the agents it has results of (report/ci/baseline.py)."""
    if shipped is not None:
        from pytest_toolsandbox.report.ci.baseline import Baseline

        return Baseline(path=shipped["path"], passed=shipped["passed"], gates=shipped["gates"],
                        specs=tuple(shipped["specs"]), rules=shipped["rules"])
    if path is None:
        return None
    from pytest_toolsandbox.report.ci.baseline import Baseline, load_baseline
    from pytest_toolsandbox.report.results.summary import SummaryError

    try:
        baseline = load_baseline(path)
    except SummaryError as error:
        raise OptionError(f"--baseline: {error}") from None
    return Baseline(path=display(path, rootdir), passed=baseline.passed, rules=baseline.rules).for_agents(
        agents, any_spec=given)


def _model_options(lookup: Lookup, rules: str) -> ModelOptions:
    """The request settings; under the reference's rules a temperature not given is not sent (the provider's
    default, as the reference's agents and user simulator sent none)."""
    from pytest_toolsandbox.basics.vocabulary import REFERENCE
    from pytest_toolsandbox.roles.model_spec import ModelOptions

    base_url, base_urls = _model_base_urls(lookup)
    defaults = ModelOptions()
    return ModelOptions(
        base_url=base_url, base_urls=base_urls,
        temperature=_number(lookup, "--temperature", float, 0.0, 2.0),
        reasoning_effort=_reasoning_effort(lookup), **_param_styles(lookup),
        provider_temperature=rules == REFERENCE,
        max_tokens=_number(lookup, "--max-tokens", int, 1, None) or defaults.max_tokens,
        timeout=_number(lookup, "--request-timeout", float, 0.001, 3600.0) or defaults.timeout,
        retries=_default(_number(lookup, "--llm-retries", int, 0, 20), defaults.retries),
        retry_delay=_default(_number(lookup, "--llm-retry-delay", float, 0.0, 600.0), defaults.retry_delay),
    )


REASONING_EFFORTS = ("minimal", "low", "medium", "high")


def _reasoning_effort(lookup: Lookup) -> str | None:
    option = _BY_FLAG["--reasoning-effort"]
    values = _values(lookup(option).value)
    value = values[0] if values else None
    if value is not None and value not in REASONING_EFFORTS:
        raise OptionError(f"{option.flag} / {option.ini}: {value!r} is not an effort; use one of "
                          f"{', '.join(REASONING_EFFORTS)}")
    return value


def _param_styles(lookup: Lookup) -> dict[str, Any]:
    """`param_style` (a bare STYLE) and `param_styles` ((spec, style) pairs) of `--param-style`."""
    from pytest_toolsandbox.roles.model_spec import PARAM_STYLES as STYLES

    option = _BY_FLAG["--param-style"]
    run_wide: str | None = None
    pairs: dict[str, str] = {}
    for value in _values(lookup(option).value):
        spec, equals, style = value.strip().rpartition("=")
        if style.strip() not in STYLES or (equals and not spec.strip()):
            raise OptionError(f"{option.flag} / {option.ini}: {value!r} is not [SPEC=]STYLE; write e.g. "
                              f"openai:my-reasoner=reasoning (styles: {', '.join(STYLES)})")
        if equals:
            pairs[spec.strip()] = style.strip()
        else:
            run_wide = style.strip()
    return {"param_style": run_wide, "param_styles": tuple(pairs.items())}


def _model_base_urls(lookup: Lookup) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The run-wide URL (a bare URL, command line only) and the (spec, URL) pairs of `--model-base-url`.

    A bare URL in the ini file would send every model the project's users name, hosted ones included,
    to that server: the ini names the spec each URL belongs to."""
    from pytest_toolsandbox.roles.model_spec import parse_model_spec, without_credentials

    option = _BY_FLAG["--model-base-url"]
    found = lookup(option)
    where = option.flag if found.given else f"ini {option.ini}"
    run_wide: str | None = None
    pairs: dict[str, str] = {}
    for value in _values(found.value):
        value = value.strip()
        spec, equals, url = ("", "", value) if _is_url(value) else value.partition("=")
        spec, url = spec.strip(), without_credentials(url.strip())  # never an Authorization header (configure warns)
        if not _is_url(url) or (equals and not spec):
            raise OptionError(f"{where}: {value!r} is not [SPEC=]URL; write e.g. "
                              "openai:qwen2.5=http://127.0.0.1:8080/v1")
        if not spec:
            if not found.given:
                raise OptionError(f"ini {option.ini}: {url!r} names no model spec, so it would also send hosted "
                                  f"models (claude, gpt-4o) there; write SPEC={url}, e.g. openai:MODEL={url}")
            run_wide = url
            continue
        try:
            model = parse_model_spec(spec)
        except ValueError as error:
            raise OptionError(f"{where}: {error}") from None
        if model is None:
            raise OptionError(f"{where}: {spec!r} is not a model spec (claude, gpt-4o, anthropic:ID, openai:ID)")
        pairs[spec] = url
    return run_wide, tuple(pairs.items())


def _is_url(text: str) -> bool:
    return re.match(r"https?://[^/\s]+", text) is not None


def _default(value: Any, default: Any) -> Any:
    return default if value is None else value


def _tool_backend(lookup: Lookup) -> str:
    option = _BY_FLAG["--tool-backend"]
    value = (_values(lookup(option)[0]) or ["offline"])[0]
    if value not in ("offline", "rapidapi"):
        raise OptionError(f"{option.flag} / {option.ini}: {value!r} is not a backend; use offline or rapidapi")
    return value


def _choice(lookup: Lookup, flag: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (the first is the default)."""
    option = _BY_FLAG[flag]
    value = (_values(lookup(option)[0]) or [choices[0]])[0]
    if value not in choices:
        raise OptionError(f"{option.flag} / {option.ini}: {value!r} is not allowed; use one of {', '.join(choices)}")
    return value


def _rules(lookup: Lookup, prompts: str) -> str:
    """The rules given, else the reference's when the prompts are the reference's (a paper-comparable run
    wants both), else ours."""
    from pytest_toolsandbox.basics.vocabulary import REFERENCE, RULES

    given = _values(lookup(_BY_FLAG["--rules"])[0])
    return _choice(lookup, "--rules", RULES) if given else (REFERENCE if prompts == REFERENCE else RULES[0])


def _record_mode(lookup: Lookup) -> str:
    from pytest_toolsandbox.recording.cassettes import RECORD_MODES, default_record_mode

    option = _BY_FLAG["--ts-record-mode"]
    value = _values(lookup(option)[0])
    if not value:
        return default_record_mode(os.environ)
    if value[0] not in RECORD_MODES:
        raise OptionError(f"{option.flag} / {option.ini}: {value[0]!r} is not a record mode; use one of "
                          f"{', '.join(RECORD_MODES)}")
    return value[0]




def _concurrency(lookup: Lookup, agents: tuple[str, ...], user: str, model_options: ModelOptions) -> int:
    chosen = _number(lookup, "--concurrency", int, 1, MAX_CONCURRENCY)
    if chosen is not None:
        return chosen
    from pytest_toolsandbox.recording.preflight import models_of

    return DEFAULT_API_CONCURRENCY if models_of([*agents, user], model_options) else 1


def _user_spec(spec: str, agents: tuple[str, ...]) -> str:
    """`llm` is the LLM user simulator on the first model agent's model, so one key suffices."""
    if spec != "llm":
        return spec
    from pytest_toolsandbox.roles.model_spec import parse_model_spec

    for agent in agents:
        try:
            if parse_model_spec(agent) is not None:
                return agent
        except ValueError:
            continue
    raise OptionError("--user llm: no --agent is a model (claude, gpt-4o, anthropic:<id>, openai:<id>); "
                      "name the simulator's model instead, e.g. --user claude")


def _shard(lookup: Lookup) -> tuple[int, int] | None:
    from pytest_toolsandbox.running.shard import ShardError, parse_shard

    value = _values(lookup(_BY_FLAG["--ts-shard"])[0])
    if not value:
        return None
    try:
        return parse_shard(value[0])
    except ShardError as error:
        raise OptionError(f"--ts-shard / toolsandbox_shard: {error}") from None


def _resume(lookup: Lookup, report_dir: Path | None) -> Path | None:
    """The directory to resume, which is then the report directory too (another --report-dir is an error)."""
    given = _paths(lookup, "--resume")
    if not given:
        return None
    resume = given[0]
    if not resume.is_dir():
        raise OptionError(f"--resume / toolsandbox_resume: {resume} is not a directory; pass the report directory "
                          "of the run to complete")
    if report_dir is not None and report_dir != resume and lookup(_BY_FLAG["--report-dir"]).given:
        raise OptionError(f"--resume {resume} writes its report into that directory; drop --report-dir {report_dir} "
                          "or make it the same directory")
    return resume


def _price_table(lookup: Lookup) -> Path | None:
    given = _paths(lookup, "--price-table")
    if given and not given[0].is_file():
        raise OptionError(f"--price-table / toolsandbox_price_table: {given[0]} is not a file; pass LiteLLM's "
                          "model_prices_and_context_window.json")
    return given[0] if given else None


def read_settings(lookup: Lookup, rootdir: Path, shipped_baseline: dict[str, Any] | None = None) -> Settings:
    """Validate every option (raises OptionError) and resolve the agents and the user simulator."""
    agents = tuple(dict.fromkeys(_values(lookup(_BY_FLAG["--agent"])[0]))) or ("reference",)
    user = [_user_spec(spec, agents) for spec in _values(lookup(_BY_FLAG["--user"])[0])]
    report_dir, baseline_path = _paths(lookup, "--report-dir"), _paths(lookup, "--baseline")
    prompts = _choice(lookup, "--prompts", ("ours", "reference"))
    rules = _rules(lookup, prompts)
    model_options, cassette_dir = _model_options(lookup, rules), _paths(lookup, "--cassette-dir")
    resume = _resume(lookup, report_dir[0] if report_dir else None)
    report_dir = [resume] if resume is not None else report_dir
    return Settings(
        agents=agents, user=user[0] if user else "scripted", variants=_variants(lookup),
        trials=_number(lookup, "--trials", int, 1, None) or DEFAULT_TRIALS,
        threshold=_number(lookup, "--threshold", float, 0.0, 1.0),
        max_messages=_number(lookup, "--max-messages", int, 1, MAX_MESSAGES),
        episode_timeout=_number(lookup, "--episode-timeout", float, 0.0, None) or None,
        report_dir=_report_dir(report_dir[0] if report_dir else rootdir / "toolsandbox-report"),
        baseline=_baseline(baseline_path[0] if baseline_path else None, rootdir, agents, shipped_baseline,
                           given=lookup(_BY_FLAG["--baseline"]).given),
        scenario_roots=tuple(_paths(lookup, "--scenarios")),
        agent_factories={spec: _role_factory(spec, "agent", model_options) for spec in agents},
        user_factory=_role_factory(user[0] if user else "scripted", "user", model_options),
        model_options=model_options, record_mode=_record_mode(lookup),
        cassette_dir=cassette_dir[0] if cassette_dir else rootdir / "cassettes",
        tool_backend=_tool_backend(lookup), progress=_choice(lookup, "--progress", ("auto", "on", "off")),
        prompts=prompts, rules=rules,
        rpm=_number(lookup, "--rpm", float, 0.0, None), tpm=_number(lookup, "--tpm", float, 0.0, None),
        max_request_tokens=_number(lookup, "--max-request-tokens", int, 0, None) or 0,
        concurrency=_concurrency(lookup, agents, user[0] if user else "scripted", model_options),
        limits=Limits(max_response_bytes=_size(lookup, "--max-response-bytes"),
                      max_cassette_bytes=_size(lookup, "--max-cassette-bytes"),
                      max_message_chars=_number(lookup, "--max-message-chars", int, 1, None)
                      or DEFAULT_MAX_MESSAGE_CHARS),
        baseline_alpha=_default(_alpha(lookup), DEFAULT_ALPHA),
        baseline_min_effect=_default(_min_effect(lookup), DEFAULT_MIN_EFFECT),
        shard=_shard(lookup), resume=resume, max_spend=_number(lookup, "--max-spend", float, 0.0, None),
        max_run_tokens=_number(lookup, "--max-run-tokens", int, 1, None), price_table=_price_table(lookup),
        update_baseline=_file(lookup, "--update-baseline"), markdown=_file(lookup, "--ts-markdown"),
    )


def _alpha(lookup: Lookup) -> float | None:
    """A significance level, bounded where `compare --alpha` is (basics/gate_defaults.py)."""
    alpha = _number(lookup, "--baseline-alpha", float, -math.inf, None)
    if alpha is not None and (problem := alpha_problem(alpha)) is not None:
        raise OptionError(f"--baseline-alpha / toolsandbox_baseline_alpha: {problem}")
    return alpha


def _min_effect(lookup: Lookup) -> float | None:
    """The smallest drop that fails the run: a share of a similarity or a pass rate."""
    min_effect = _number(lookup, "--baseline-min-effect", float, -math.inf, None)
    if min_effect is not None and (problem := min_effect_problem(min_effect)) is not None:
        raise OptionError(f"--baseline-min-effect / toolsandbox_baseline_min_effect: {problem}")
    return min_effect


def _file(lookup: Lookup, flag: str) -> Path | None:
    """An output file: its directory must exist (checked now, not after the run has been paid for)."""
    paths = _paths(lookup, flag)
    if not paths:
        return None
    if paths[0].is_dir() or not paths[0].parent.is_dir():
        raise OptionError(f"{flag}: {paths[0]} must be a file in an existing directory")
    return paths[0]
