"""The run's configuration inside pytest: options registered, the rootdir kept where the user meant,
the settings read once and kept in the config's stash, the process-wide limits and prices set up, and
the checks that stop a run before it starts (no cassette and no way to record one).

Everything here is light to import: a plain test run of a project that installed the plugin pays for
none of the scenario, scoring or report stack (tests/test_lazy_imports.py).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_toolsandbox.options import (
    DEPRECATED_FLAGS,
    OPTIONS,
    REMOVED_INI,
    Found,
    Option,
    OptionError,
    Settings,
    display,
    read_settings,
)

PATH_FLAGS = ("--baseline", "--report-dir", "--scenarios", "--resume", "--price-table", "--update-baseline",
              "--ts-markdown")
"""Options whose value is a path: in space form pytest would take the value for a test path."""

_SETTINGS = pytest.StashKey[Settings]()


def add_options(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Every option and ini key of options.py, plus the deprecated and removed spellings."""
    group = parser.getgroup("toolsandbox", "ToolSandbox scenario evaluation")
    for option in OPTIONS:
        group.addoption(option.flag, dest=option.dest, action="append" if option.append else "store",
                        default=None, metavar=option.metavar, help=option.help)
        if option.ini:
            parser.addini(option.ini, f"{option.help} [--{option.flag.lstrip('-')}]", type=option.ini_type,
                          default=option.default)
    by_flag = {option.flag: option for option in OPTIONS}
    for old, new in DEPRECATED_FLAGS.items():
        if not _owned_by_another_plugin(old, pluginmanager):
            group.addoption(old, dest=by_flag[new].dest, action="append", default=None,
                            metavar=by_flag[new].metavar, help=f"deprecated spelling of {new}")
    for old, new in REMOVED_INI.items():
        parser.addini(old, f"replaced by {new}", default="")


def _owned_by_another_plugin(flag: str, pluginmanager: pytest.PytestPluginManager) -> bool:
    """pytest-base-url registers `--base-url`; two plugins registering one flag break every pytest command,
    whichever loads first, so the alias steps aside whenever that plugin is installed and not disabled
    (`-p no:base_url`)."""
    from importlib.util import find_spec

    return (flag == "--base-url" and find_spec("pytest_base_url") is not None
            and not pluginmanager.is_blocked("base_url"))


def keep_rootdir(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Keep `--baseline X` (space form) from moving the rootdir.

    pytest decides the rootdir and ini file from the free command-line arguments *before* it loads
    plugins, so the value of a plugin's option in space form counts as a test path: with a baseline
    outside the repository the project's ini file is ignored and other tests run, silently. The
    plugin's `pytest_load_initial_conftests` is the first moment its options are known: the setup is
    decided again from the real free arguments and, when it differs, the config takes the right rootdir,
    ini file and addopts before any conftest or test path is looked at.
    """
    if not any(arg in PATH_FLAGS for arg in args):
        return
    from pytest_toolsandbox.compat import adopt_setup, determine_setup

    old_root, old_ini = early_config.rootpath, early_config.inipath
    old_addopts = list(early_config.getini("addopts"))
    given = args[len(old_addopts):] if args[:len(old_addopts)] == old_addopts else args
    namespace = parser.parse_known_args(given)
    try:
        root, ini, inicfg, ignored = determine_setup(namespace.inifilename, namespace.override_ini,
                                                     namespace.file_or_dir, namespace.rootdir or None,
                                                     early_config.invocation_params.dir)
    except TypeError:  # another pytest signature: say how to avoid the problem instead of guessing
        raise pytest.UsageError("pass path options of pytest-toolsandbox as --option=PATH with this pytest "
                                "version (the space form would be taken for a test path)") from None
    if (root, ini) == (old_root, old_ini):
        return
    adopt_setup(early_config, root, ini, inicfg, ignored)
    parser.extra_info.update(rootdir=str(root), inifile=str(ini))
    args[:] = [*early_config.getini("addopts"), *given]
    known = parser.parse_known_args(args, namespace=copy.copy(early_config.option))
    if known.confcutdir is None:  # as pytest derives it: the ini file's directory, else the rootdir
        known.confcutdir = str(ini.parent if ini else root)
    early_config.known_args_namespace = known


def register_markers(config: pytest.Config) -> None:
    """`toolsandbox`, one marker per category and one per augmentation variant (both spellings select)."""
    from pytest_toolsandbox.basics.vocabulary import CATEGORIES, VARIANT_CATEGORIES

    config.addinivalue_line("markers", "toolsandbox: a ToolSandbox scenario item")
    for category in CATEGORIES:
        config.addinivalue_line("markers", f"{category}: ToolSandbox scenario category")
    for name, category in VARIANT_CATEGORIES.items():  # -m all_tools and -m all_tools_available
        config.addinivalue_line("markers", f"{category}: ToolSandbox augmentation variant {name}")
        if name != category:
            config.addinivalue_line("markers", f"{name}: ToolSandbox augmentation variant (same as {category})")


def read_run_settings(config: pytest.Config) -> Settings:
    """The settings, read once and kept in the config: command-line values are relative to the
    invocation directory, ini values to the rootdir."""

    def lookup(option: Option) -> Found:
        value = config.getoption(option.dest)
        if value is not None:
            return Found(value, config.invocation_params.dir, given=True)
        return Found(config.getini(option.ini) if option.ini else None, config.rootpath)

    for old, new in REMOVED_INI.items():
        if config.getini(old):
            raise pytest.UsageError(f"ini {old} was replaced by {new}, which names the model each URL is for "
                                    f"(one SPEC=URL per line), e.g. {new} = openai:MODEL={config.getini(old)}")
    for old, new in DEPRECATED_FLAGS.items():
        if any(arg == old or arg.startswith(f"{old}=") for arg in config.invocation_params.args):
            config.issue_config_time_warning(pytest.PytestDeprecationWarning(
                f"toolsandbox: {old} is deprecated, use {new} (pytest-base-url owns {old})"), stacklevel=2)
    if not hasattr(config, "workerinput"):
        _warn_url_credentials(config, lookup)
    try:
        run = read_settings(lookup, config.rootpath, getattr(config, "workerinput", {}).get("toolsandbox_baseline"))
    except OptionError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[_SETTINGS] = run
    return run


def _warn_url_credentials(config: pytest.Config, lookup: Callable[[Option], Found]) -> None:
    """Credentials in a `--model-base-url` are dropped (options.py); say so once, without showing them."""
    from pytest_toolsandbox.roles.model_spec import without_credentials

    option = next(option for option in OPTIONS if option.flag == "--model-base-url")
    values = lookup(option).value or []
    for value in [values] if isinstance(values, str) else values:
        url = value[value.find("http"):] if "http" in value else value
        if without_credentials(url) != url:
            config.issue_config_time_warning(pytest.PytestConfigWarning(
                "toolsandbox: the user:password@ part of --model-base-url is not sent (it would become an "
                "Authorization header, which a server may echo into reports); set OPENAI_API_KEY or "
                "ANTHROPIC_API_KEY for the key the server expects"), stacklevel=2)
            return


def settings(config: pytest.Config) -> Settings:
    """The run's validated toolsandbox settings."""
    return config.stash[_SETTINGS]


def configure_rate_limits(run: Settings, config: pytest.Config) -> None:
    """The process's shared limiter for live requests (each xdist worker takes its share), and the report
    of the limits requests waited for."""
    from pytest_toolsandbox.recording.ratelimit import configure_limits
    from pytest_toolsandbox.recording.ratelimit_report import RateLimitReport

    limiter = configure_limits(run.rpm, run.tpm, max_request_tokens=run.max_request_tokens)
    config.pluginmanager.register(RateLimitReport(config, limiter), "toolsandbox-rate-limits")


def configure_prices(run: Settings) -> None:
    """`--price-table`: LiteLLM's maintained prices before the bundled ones (without it, an installed
    litellm's copy is looked for when the first item is priced: report/results/usage.py)."""
    if run.price_table is None:
        return
    from pytest_toolsandbox.report.results.litellm_prices import PriceTableError, read_litellm
    from pytest_toolsandbox.report.results.usage import use_maintained_prices

    try:
        use_maintained_prices(read_litellm(run.price_table))
    except PriceTableError as error:
        raise pytest.UsageError(f"--price-table: {error}") from None


def early_preflight(config: pytest.Config) -> None:
    """Stop at once (before collection and before xdist starts workers) when a model agent has no
    cassette at all and can neither replay nor record; the per-item check after collection does the rest."""
    import os
    import shlex

    from pytest_toolsandbox.recording.cassettes import pair_folder
    from pytest_toolsandbox.recording.preflight import early_problem, models_of

    run = settings(config)
    if config.option.collectonly or getattr(config.option, "help", False):
        return
    pairs = [(pair_folder(agent, run.user), models) for agent in run.agents
             if (models := models_of([agent, run.user], run.model_options))]
    if not pairs:
        return
    command = shlex.join(["pytest", *config.invocation_params.args])
    message = early_problem(pairs, run.cassette_dir, run.record_mode, command,
                            display(run.cassette_dir, config.invocation_params.dir), local_script(config))
    if message is not None:
        why = " ($CI is set, so the default record mode is none)" if os.environ.get("CI") else ""
        raise pytest.UsageError(message.replace("forbids recording them.", f"forbids recording them{why}.", 1))


def local_script(config: pytest.Config) -> str | None:
    """The project's local model server script as the user would type it, when the project has one."""
    from pytest_toolsandbox.recording.preflight import LOCAL_SERVER_SCRIPT

    script = config.rootpath / LOCAL_SERVER_SCRIPT
    return display(script, config.invocation_params.dir) if script.is_file() else None


def report_path(config: pytest.Config, *parts: str) -> str:
    """A path under the report directory as the user would type it."""
    return display(Path(settings(config).report_dir, *parts), config.invocation_params.dir)
