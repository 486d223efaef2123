"""Command line: ``etrace-lint [check] [PATHS] [options]``, ``etrace-lint rule ID``, ``etrace-lint rules``,
``etrace-lint clean``, ``etrace-lint daemon status|stop``; ``-`` reads the source from stdin.

The flags are those of :data:`~etrace_lint.config.options.OPTIONS`; the exit codes
are those of :mod:`~etrace_lint.core.exit_codes`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Callable

from ..core.exit_codes import EXIT_ERROR, EXIT_INTERRUPTED
from .daemon.client import address_of_settings, serve_through_daemon
from .daemon.quick import DEFAULT_IDLE_TIMEOUT, address_of

if TYPE_CHECKING:
    from ..config.settings import Settings
    from ..running.runner import Pool
    from .arguments import UsageError, apply_flags, build_parser, resolve_settings, settings_from_args

# the daemon's warm workers for a run's settings (a pool that starts when the run needs a worker)
PoolSource = Callable[["Settings"], "Pool"]
_FROM_ARGUMENTS = ("UsageError", "apply_flags", "build_parser", "resolve_settings", "settings_from_args")


def __getattr__(name: str) -> object:
    # the parser and the settings load on first use: a run the daemon serves needs neither here
    # (importing them takes longer than the rest of such a run's start, -X importtime)
    if name not in _FROM_ARGUMENTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import arguments  # lazy: see the comment above
    exported: dict[str, object] = {
        "UsageError": arguments.UsageError, "apply_flags": arguments.apply_flags,
        "build_parser": arguments.build_parser, "resolve_settings": arguments.resolve_settings,
        "settings_from_args": arguments.settings_from_args}
    return exported[name]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # like `ruff rule`: a folder named rules is linted as ./rules or rules/
    if argv and argv[0] in ("rule", "rules"):
        from .docs import main_rule, main_rules  # lazy: each subcommand loads only what it runs
        return main_rule(argv[1:]) if argv[0] == "rule" else main_rules(argv[1:])
    if argv and argv[0] == "run":
        from .run_program import main_run  # lazy: each subcommand loads only what it runs
        return main_run(argv[1:])
    if argv and argv[0] == "merge":
        from .merge import main_merge  # lazy: each subcommand loads only what it runs
        return main_merge(argv[1:])
    if argv and argv[0] == "report":  # a lint run whose output is the HTML report, notes included for the graph
        argv = ["--output-format", "html", "--show-info", *argv[1:]]
    if argv and argv[0] == "advise":  # a lint run that measures every algorithm and prints the advice tables
        argv = ["--advise", *argv[1:]]
    if argv and argv[0] == "server":
        from ..server import main as main_server  # lazy: each subcommand loads only what it runs
        return main_server(argv[1:])
    if argv and argv[0] == "daemon":
        from .daemon.command import main_daemon  # lazy: each subcommand loads only what it runs
        return main_daemon(argv[1:])
    if argv and argv[0] == "check":  # `ruff check PATHS`: the default command by its name
        argv = argv[1:]
    return lint_command(argv)


def lint_command(argv: list[str], pools: PoolSource | None = None) -> int:
    """``etrace-lint [clean] [PATHS] [options]``. Without ``pools`` a run that may go to the project's
    daemon goes there; the daemon passes ``pools``, the warm workers its runs share."""
    cleaning = bool(argv) and argv[0] == "clean"
    if cleaning:
        argv = argv[1:]
    tried = False
    if pools is None and not cleaning:
        address = address_of(argv, DEFAULT_IDLE_TIMEOUT)
        if address is not None:
            tried = True
            code = serve_through_daemon(argv, address)
            if code is not None:
                return code
    from .arguments import UsageError, build_parser, check_algorithms, resolve_settings  # lazy: see __getattr__
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings, warnings = resolve_settings(args)
        check_algorithms(settings)
    except UsageError as exc:
        print(f"etrace-lint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if pools is None and not cleaning and not tried:
        code = serve_through_daemon(argv, address_of_settings(settings))
        if code is not None:
            return code
    if not settings.quiet:
        for warning in warnings:
            print(f"etrace-lint: warning: {warning}", file=sys.stderr)
    # lazy, as the parser: the commands and the run load once the settings are read, so --version and
    # --help (answered by the parser) start at once
    from .commands import clean, show_settings
    if cleaning:
        return clean(settings, os.getcwd(), quiet=settings.quiet)
    if settings.show_settings:
        return show_settings(settings)
    from .app import run  # lazy: the run's stages (the runner, the writers) load only for a run
    try:
        if settings.watch:
            from .watch import watch  # lazy: each subcommand loads only what it runs
            return watch(settings, reload=lambda: resolve_settings(args)[0])
        return run(settings, pool=pools(settings) if pools is not None else None)
    except KeyboardInterrupt:
        # workers ignore Ctrl-C and are stopped by the runner on the way out
        print("etrace-lint: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


__all__ = ["UsageError", "apply_flags", "build_parser", "lint_command", "main", "resolve_settings",
           "settings_from_args"]
