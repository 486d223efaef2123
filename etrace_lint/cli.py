"""Command line: ``etrace-lint [PATHS] [options]``, ``etrace-lint rule ID``, ``etrace-lint rules``.

Exit codes: 0 no finding at or above the fail level, 1 findings at or above
it, 2 usage error or a target that could not be linted.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import __version__
from .findings import Level
from .writers import FORMATS

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    """A bad flag, value or configuration: exit 2 with the message."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="etrace-lint",
        description="Find the weights of a braintrace model that will not learn online, and why.",
        epilog="Subcommands: `etrace-lint rule ETL005` shows a rule's documentation; "
               "`etrace-lint rules` lists every rule.\n"
               "Settings are read from [tool.etrace-lint] in the nearest pyproject.toml; flags override them. "
               "Suppress a finding with `# noqa: ETL005` or `# etrace-lint: ignore[ETL005]` on its line, "
               "or `# etrace-lint: file-ignore[ETL005]` anywhere in the file.\n"
               "Exit codes: 0 clean, 1 findings at or above --fail-level, 2 usage or tool error.")
    parser.add_argument("paths", nargs="*", help="files, folders or file.py::factory (default: .)")
    parser.add_argument("--version", action="version", version=f"etrace-lint {__version__}")
    out = parser.add_argument_group("output")
    out.add_argument("--output-format", choices=FORMATS, default=None, help="how findings are printed (text)")
    out.add_argument("--sarif", metavar="FILE", help="also write a SARIF 2.1.0 log to FILE")
    out.add_argument("-o", "--output-file", metavar="FILE", help="write the main output to FILE")
    out.add_argument("-q", "--quiet", action="store_true",
                     help="print findings only, one line each, no summary, warnings or progress")
    out.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    out.add_argument("--show-info", action="store_true", help="also show note-level findings")
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    out.add_argument("--root", help="paths in the output are relative to this folder (default: cwd)")
    sel = parser.add_argument_group("rule selection")
    sel.add_argument("--select", action="append", default=None, metavar="IDS",
                     help="only these rules (ids, prefixes or names, comma separated)")
    sel.add_argument("--extend-select", action="append", default=None, metavar="IDS")
    sel.add_argument("--ignore", action="append", default=None, metavar="IDS")
    sel.add_argument("--fail-level", choices=("note", "warning", "error"), default=None,
                     help="lowest level that makes the run fail (warning)")
    sel.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    sel.add_argument("--exclude", action="append", default=None, metavar="GLOBS",
                     help="replace the configured exclude globs")
    sel.add_argument("--extend-exclude", action="append", default=None, metavar="GLOBS")
    sel.add_argument("--include-suppressed", action="store_true", default=None,
                     help="pass suppressed findings to the output (SARIF suppressions)")
    sel.add_argument("--baseline", metavar="FILE", help="report only findings not recorded in FILE")
    sel.add_argument("--write-baseline", metavar="FILE", help="record today's findings in FILE")
    sel.add_argument("--check-online-grad", action="store_true", default=None,
                     help="also check that one online gradient step can be built (ETL205; slower)")
    ver = parser.add_argument_group("gradient verification")
    ver.add_argument("--verify", action="store_true", default=None,
                     help="compare online gradients (d_rtrl, pp_prop) with exact BPTT per weight")
    ver.add_argument("--verify-steps", type=int, metavar="T", help="sequence length (16)")
    ver.add_argument("--verify-batch", type=int, metavar="B", help="batch size (4)")
    ver.add_argument("--verify-algorithms", metavar="ALGOS", help="comma separated (d_rtrl,pp_prop)")
    ver.add_argument("--verify-seed", type=int, metavar="SEED", help="random seed of the inputs")
    ver.add_argument("--verify-cosine-floor", type=float, metavar="COS",
                     help="lowest cosine similarity to BPTT that passes")
    ver.add_argument("--device", metavar="DEVICE", help="JAX platform for --verify: cpu, gpu, ... (default device)")
    run = parser.add_argument_group("running")
    run.add_argument("--debug", action="store_true", help="show tracebacks of tool errors")
    run.add_argument("-j", "--jobs", type=int, metavar="N",
                     help="at most N worker processes (number of cores); more than one starts only "
                          "when the models left take longer than starting one")
    run.add_argument("--timeout", type=float, metavar="SECONDS", help="per-target time limit (300)")
    run.add_argument("--no-cache", action="store_true", help="lint everything again, write no cache")
    run.add_argument("--cache-dir", metavar="DIR", help="where results are cached (.etrace-lint-cache)")
    run.add_argument("--environ", action="append", default=None, metavar="KEY=VALUE",
                     help="brainstate.environ setting to build and trace targets under, such as dt=0.1ms "
                          "(repeatable or comma separated; a target's decorator overrides it)")
    run.add_argument("--shard", metavar="K/N",
                     help="lint only part K of N of the targets (each file in one part), for N CI runners; "
                          "combine their logs with `etrace-lint merge`")
    run.add_argument("--list-targets", action="store_true",
                     help="print the targets a run would execute (import nothing, run nothing) and exit")
    run.add_argument("--drop-env", action="append", default=None, metavar="NAMES",
                     help="environment variables (or patterns such as AWS_*) removed before any model code runs")
    run.add_argument("--config", metavar="PYPROJECT", help="read [tool.etrace-lint] from this file")
    run.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    return parser


def _split(values: list[str] | None) -> list[str]:
    items: list[str] = []
    for value in values or ():
        items.extend(v.strip() for v in value.split(",") if v.strip())
    return items


def settings_from_args(args: argparse.Namespace):
    """Defaults, then ``[tool.etrace-lint]``, then the command line."""
    from .config import ConfigError, load_settings, search_start
    from .settings import Settings

    if args.isolated:
        settings = Settings()
    else:
        try:
            settings = load_settings(search_start(args.paths), args.config)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    if settings.config_file:
        where = os.path.relpath(settings.config_file)
        _validate_selectors([*settings.select, *settings.extend_select, *settings.ignore, *settings.levels,
                             *(s for group in settings.per_file_ignores.values() for s in group)],
                            f"{where if not where.startswith('..') else settings.config_file}: [tool.etrace-lint] ")
    if args.root:
        settings.root = os.path.abspath(args.root)
    if args.paths:
        settings.paths = list(args.paths)
    if args.select is not None:
        settings.select = _split(args.select)
    if args.extend_select:
        settings.extend_select = settings.extend_select + _split(args.extend_select)
    if args.ignore is not None:
        settings.ignore = settings.ignore + _split(args.ignore)
    _validate_selectors([*_split(args.select), *_split(args.extend_select), *_split(args.ignore)], "")
    if args.exclude is not None:
        settings.exclude = _split(args.exclude)
    if args.extend_exclude:
        settings.extend_exclude = settings.extend_exclude + _split(args.extend_exclude)
    if args.jobs is not None:
        if args.jobs < 0:
            raise UsageError("--jobs must be 0 (one per core) or more")
        settings.jobs = args.jobs
    if args.timeout is not None:
        if args.timeout <= 0:
            raise UsageError("--timeout must be positive")
        settings.timeout = args.timeout
    if args.no_cache:
        settings.use_cache = False
    if args.cache_dir:
        settings.cache_dir = os.path.abspath(args.cache_dir)
    settings.include_suppressed = bool(args.include_suppressed) or settings.include_suppressed
    settings.baseline = args.baseline or settings.baseline
    settings.write_baseline = args.write_baseline or settings.write_baseline
    if settings.baseline:
        from .baseline import BaselineError, read_baseline
        try:
            settings.baseline_fingerprints = read_baseline(settings.baseline)
        except BaselineError as exc:
            raise UsageError(str(exc)) from None
    if args.fail_level:
        settings.fail_level = Level.parse(args.fail_level)
    if args.output_format:
        settings.output_format = args.output_format
    settings.sarif = args.sarif or settings.sarif
    settings.output_file = args.output_file or settings.output_file
    settings.quiet = args.quiet or settings.quiet
    settings.show_info = args.show_info or settings.show_info
    settings.exit_zero = args.exit_zero or settings.exit_zero
    settings.debug = args.debug
    if args.check_online_grad:
        settings.run_options["check_online_grad"] = True
    if args.verify:
        settings.run_options["verify"] = True
    for flag in ("verify_steps", "verify_batch", "verify_seed", "verify_cosine_floor", "device"):
        if getattr(args, flag) is not None:
            settings.run_options[flag] = getattr(args, flag)
    if args.verify_algorithms:
        settings.run_options["verify_algorithms"] = _split([args.verify_algorithms])
    if args.environ:
        settings.run_options["environ"] = {**settings.run_options.get("environ", {}), **_environ(args.environ)}
    if args.shard:
        from .shards import ShardError, parse_shard
        try:
            parse_shard(args.shard)
        except ShardError as exc:
            raise UsageError(str(exc)) from None
        settings.shard = args.shard
    if args.drop_env:
        settings.drop_env = settings.drop_env + _split(args.drop_env)
    settings.list_targets = args.list_targets
    if args.statistics:
        if settings.output_format not in ("text", "concise", "json"):
            raise UsageError(f"--statistics prints text or json, not {settings.output_format}")
        settings.statistics = True
    settings.color = {"always": True, "never": False}.get(args.color)
    return settings


def _environ(values: list[str]) -> dict:
    """``--environ dt=0.1ms,tau=2ms --environ ...``: plain values, checked but not converted."""
    from .environ import EnvironError, parse_assignments

    environ = {}
    for value in values:
        try:
            environ.update(parse_assignments(value))
        except EnvironError as exc:
            raise UsageError(f"--environ {value}: {exc}") from None
    return environ


def _validate_selectors(selectors: list[str], where: str) -> None:
    """An unknown rule id or name is a usage error that suggests the closest known one."""
    import difflib

    from .registry import all_rules

    known = list(all_rules())
    names = [r.name for r in all_rules().values()]
    for selector in selectors:
        if selector.upper() == "ALL":
            continue
        if any(rid.startswith(selector.upper()) for rid in known) or selector in names:
            continue
        close = (difflib.get_close_matches(selector.upper(), known, n=1)
                 or difflib.get_close_matches(selector, names, n=1))
        hint = f"; did you mean {close[0]}?" if close else ""
        raise UsageError(f"{where}unknown rule {selector!r}{hint}")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # like `ruff rule`: a folder named rules is linted as ./rules or rules/
    if argv and argv[0] in ("rule", "rules"):
        from .docs_cli import main_rule, main_rules
        return main_rule(argv[1:]) if argv[0] == "rule" else main_rules(argv[1:])
    if argv and argv[0] == "merge":
        from .merge_cli import main_merge
        return main_merge(argv[1:])
    if argv and argv[0] == "server":
        from .server import main as main_server
        return main_server(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = settings_from_args(args)
    except UsageError as exc:
        print(f"etrace-lint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    from .app import run
    try:
        return run(settings, argv)
    except KeyboardInterrupt:
        # workers ignore Ctrl-C and are stopped by the runner on the way out
        print("etrace-lint: interrupted", file=sys.stderr)
        return 130
