"""The command line's flags and settings: the options table's flags, parsed and layered over
``[tool.etrace-lint]`` (read by ``etrace-lint`` and by ``etrace-lint run``, which takes the same flags
before its program)."""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any, Callable

from .. import __version__
from ..config.baseline import BaselineError, read_baseline
from ..config.environ import EnvironError, parse_assignments
from ..config.options import MINIMUM_WORDS, OPTIONS, Option, below_minimum
from ..config.pyproject import (
    ConfigError,
    load_settings,
    search_start,
    selected_opt_in_rules,
    validate_configured_selectors,
    validate_selectors,
)
from ..config.settings import Settings, option_values
from ..core.exit_codes import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from ..core.findings import Level
from ..core.output_formats import OUTPUT_FORMATS
from ..core.sizes import parse_size


class UsageError(Exception):
    """A bad flag, value or configuration: exit 2 with the message."""


def build_parser() -> argparse.ArgumentParser:
    """The flags of :data:`~etrace_lint.config.options.OPTIONS`; a flag not given parses to None."""
    parser = argparse.ArgumentParser(
        prog="etrace-lint",
        description="Find the weights of a braintrace model that will not learn online, and why.",
        epilog="Subcommands: `etrace-lint check PATHS` is `etrace-lint PATHS`; "
               "`etrace-lint rule ETL005` shows a rule's documentation; "
               "`etrace-lint rules` lists every rule; `etrace-lint clean` removes the cache; "
               "`etrace-lint merge` combines shards' logs; "
               "`etrace-lint run SCRIPT [ARGS]` (or `run -m MODULE`) runs a program and lints each model it compiles; "
               "`etrace-lint advise PATHS` measures every braintrace algorithm on each model and recommends one; "
               "`etrace-lint report PATHS -o report.html` writes the HTML report; "
               "`etrace-lint server` runs the language server for editors (LSP on stdin/stdout, "
               "see `etrace-lint server --help`); "
               "`etrace-lint daemon status|stop` shows or ends this project's background process, which serves "
               "runs with warm workers (--no-daemon, or ETRACE_LINT_NO_DAEMON=1, runs directly); a run stopped "
               "with Ctrl-C, SIGTERM or by its process's death is stopped there too. "
               "`-` as the path reads the source from stdin (name it with --stdin-filename).\n"
               "Settings are read from [tool.etrace-lint] in the nearest pyproject.toml; flags override them. "
               "Suppress a finding with `# noqa: ETL005` or `# etrace-lint: ignore[ETL005]` on its line, "
               "or `# etrace-lint: file-ignore[ETL005]` anywhere in the file.\n"
               f"Exit codes: {EXIT_OK} clean, {EXIT_FINDINGS} findings at or above --fail-level, "
               f"{EXIT_ERROR} usage or tool error.")
    groups: dict[str, argparse._ActionsContainer] = {"": parser}  # argparse's one type for both
    for option in OPTIONS:
        if not option.flags:
            continue
        if option.group not in groups:
            groups[option.group] = parser.add_argument_group(option.group)
        _add_flag(groups[option.group], option)
        if option.positional:
            parser.add_argument("--version", action="version", version=f"etrace-lint {__version__}")
    return parser


def _add_flag(group: argparse._ActionsContainer, option: Option) -> None:
    shown = option.default_text()
    keywords: dict[str, Any] = {"help": f"{option.help} (default: {shown})" if shown else option.help}
    if option.positional:
        group.add_argument(option.name, nargs="*", **keywords)
        return
    keywords.update(dest=option.name, default=None)
    if option.kind == "flag":
        keywords.update(action="store_const", const=option.const)
    elif option.kind in ("list", "environ"):
        keywords.update(action="append", metavar=option.metavar)
    elif option.choices:
        keywords.update(choices=option.choices)
    else:
        keywords.update(type={"int": int, "float": float}.get(option.kind, str), metavar=option.metavar)
    group.add_argument(*option.flags, **keywords)
    if option.negation:
        group.add_argument(option.negation, dest=option.name, action="store_const", const=False, default=None,
                           help=f"{option.negation_help or 'do not ' + option.flag[2:]} (overrides its default "
                                "and the file)")


def _split(values: list[str] | None) -> list[str]:
    items: list[str] = []
    for value in values or ():
        items.extend(v.strip() for v in value.split(",") if v.strip())
    return items


def _shard(value: str) -> str:
    # lazy: the shards' module loads the cache and discovery (40 ms, -X importtime), which --help, --version
    # and a run without --shard need not wait for
    from ..running.shards import ShardError, parse_shard

    try:
        parse_shard(value)
    except ShardError as exc:
        raise UsageError(str(exc)) from None
    return value


def _environ(values: list[str]) -> dict[str, object]:
    """``--environ dt=0.1ms,tau=2ms --environ ...``: plain values, checked but not converted."""
    environ: dict[str, object] = {}
    for value in values:
        try:
            environ.update(parse_assignments(value))
        except EnvironError as exc:
            raise UsageError(f"--environ {value}: {exc}") from None
    return environ


def _memory(value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise UsageError(f"--memory-limit: {exc}") from None


# what a flag's parsed value becomes in the settings, by the option's kind (default: as parsed)
_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "list": _split,
    "level": Level.parse,
    "folder": os.path.abspath,
    "paths": list,
    "color": {"auto": None, "always": True, "never": False}.get,
    "environ": _environ,
    "shard": _shard,
    "memory": _memory,
}


def apply_flags(settings: Settings, args: argparse.Namespace) -> Settings:
    """The command line over ``settings``: a flag given replaces the file's value, or adds to it."""
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    configured = option_values(settings)
    for option in OPTIONS:
        value = getattr(args, option.name, None)
        if value is None or value == "" or (option.positional and not value):
            continue
        if option.minimum and below_minimum(value, option.minimum):
            raise UsageError(f"{option.flag} must be {MINIMUM_WORDS[option.minimum]}")
        if option.kind in _CONVERTERS:
            value = _CONVERTERS[option.kind](value)
        if option.combine == "extend":
            value = configured[option.name] + value
        elif option.combine == "update":
            value = {**(configured[option.name] or {}), **value}
        values[option.name] = value
        origins[option.name] = f"command line ({option.flag or option.name})"
    return settings.with_values(values, origins)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Defaults, then ``[tool.etrace-lint]``, then the command line."""
    return resolve_settings(args)[0]


def resolve_settings(args: argparse.Namespace) -> tuple[Settings, list[str]]:
    """Defaults, then ``[tool.etrace-lint]``, then the command line; and the warnings about them.

    A rule selected by its id or name runs: its opt-in option is turned on
    (``--extend-select ETL205`` is ``--check-online-grad``); a selector that
    can select nothing that runs is named in a warning.
    """
    reading_stdin = args.paths == ["-"] or (args.stdin_filename is not None and not args.paths)
    if "-" in (args.paths or []) and not reading_stdin:
        raise UsageError("`-` (read the source from stdin) cannot be combined with other paths")
    if args.isolated:
        settings = Settings()
    else:
        start = [args.stdin_filename] if reading_stdin and args.stdin_filename else args.paths
        try:
            settings = load_settings(search_start(start), args.config)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    try:
        validate_configured_selectors(settings)
        validate_selectors([*_split(args.select), *_split(args.extend_select), *_split(args.ignore)], "")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    settings = apply_flags(settings, args)
    if reading_stdin:
        settings = settings.with_values({"paths": ["-"]})
        if settings.watch:
            raise UsageError("--watch cannot watch stdin: name files or folders")
    if settings.fix_only:
        settings = settings.with_values({"fix": True})
    if settings.silent:
        settings = settings.with_values({"quiet": True})
    turned_on, warnings = selected_opt_in_rules(settings)
    settings = settings.with_values({name: True for name in turned_on},
                                    {name: f"selecting {selector}" for name, selector in turned_on.items()})
    if settings.baseline:
        try:
            settings = dataclasses.replace(settings, baseline_fingerprints=frozenset(read_baseline(settings.baseline)))
        except BaselineError as exc:
            raise UsageError(str(exc)) from None
    if settings.statistics and not OUTPUT_FORMATS[settings.output_format].statistics:
        raise UsageError(f"--statistics prints text or json, not {settings.output_format}")
    return settings, warnings


def check_algorithms(settings: Settings) -> None:
    """An unknown ``--algorithms`` name stops the run before any worker starts (the table, not braintrace)."""
    if settings.advise and settings.advise_algorithms:
        from ..verify.advise.algorithms import known_labels, unknown_labels  # the verify package imports JAX
        if unknown_labels(settings.advise_algorithms):
            raise UsageError(f"--algorithms: unknown {', '.join(unknown_labels(settings.advise_algorithms))} "
                             f"(known: {known_labels()}, or all)")
