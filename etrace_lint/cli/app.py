"""flake8's application shape: initialise -> run checks -> report -> exit code."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import sys
from contextlib import ExitStack

from ..config.baseline import read_baseline, write_baseline
from ..config.settings import Settings
from ..core.exit_codes import EXIT_OK
from ..discovery.discover import IgnoreRules, discover
from ..discovery.stdin_buffer import stdin_buffer
from ..fixes import attach_fixes, load_parser_in_background, run_fixes
from ..policy.decide import Outcome, apply_policy
from ..running.runner import open_cache, run_targets
from ..running.shards import parse_shard, select, shard_record
from ..writers import RunInfo, get_writer
from ..writers.text import write_fix_list
from .progress import Progress


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _named_files(paths: list[str]) -> list[str]:
    """Files named on the command line (as pre-commit passes them), not folders or ``::`` targets."""
    return [os.path.abspath(p) for p in paths if "::" not in p and os.path.isfile(p)]


def _dependents(cache, discovery, settings: Settings) -> list:
    """Targets elsewhere whose recorded imports include a file named on the command line.

    pre-commit passes only the changed files; a model importing a changed
    helper module must be linted too. Their files are discovered again, so a
    target deleted since it was cached is not resurrected.
    """
    named = _named_files(settings.paths)
    if cache is None or not named:
        return []
    known = {spec.key for spec in discovery.targets}
    files = sorted({spec.path for spec in cache.dependents(named)} - set(named))
    found = discover([f for f in files if os.path.isfile(f)], settings.root, settings.excludes)
    return [spec for spec in found.targets if spec.key not in known]


def paths_without_targets(settings: Settings, discovery, imported: set[str] = frozenset()) -> list[str]:
    """Paths to lint that hold no target, as given (ruff warns of a path without Python files).

    A path that does not exist, or holds a file that could not be read, is a
    tool error already; a ``file::factory`` always names a target. A helper
    module that a linted target ``imported`` was linted through it (as
    pre-commit names a changed helper).
    """
    found = [spec.path for spec in discovery.targets] + [os.path.abspath(path) for path in imported]
    broken = [error.location.path for error in discovery.tool_errors]
    ignore = IgnoreRules(settings.root, settings.excludes)
    empty = []
    for arg in settings.paths:
        path = os.path.abspath(arg)
        if "::" in arg or not os.path.exists(path) or (os.path.isfile(path) and ignore.excluded_by_config(path)):
            continue
        inside = path + os.sep
        if not any(p == path or p.startswith(inside) for p in found + broken):
            empty.append(arg)
    return empty


def run(settings: Settings, argv: list[str], pool=None) -> int:
    """One run: lint, decide, report; ``pool``: warm workers to run on and keep (``--watch``)."""
    if settings.paths == ["-"]:
        with stdin_buffer(settings.stdin_filename) as buffer:
            buffered = dataclasses.replace(settings, paths=[buffer.temporary], use_cache=False)
            return _run(buffered, argv, pool, buffer)
    return _run(settings, argv, pool, None)


def _log(settings: Settings, message: str) -> None:
    """``-v``: what the run read and did, on stderr."""
    if settings.verbose and not settings.quiet:
        print(f"etrace-lint: {message}", file=sys.stderr)


def _run(settings: Settings, argv: list[str], pool, buffer) -> int:
    info = RunInfo(root=settings.root, command_line=["etrace-lint", *argv], start_time=_now())
    _log(settings, f"configuration: {settings.config_file or 'none (defaults and the command line)'}")
    discovery = discover(settings.paths, settings.root, settings.excludes)
    cache = open_cache(settings)
    specs = list(discovery.targets) + _dependents(cache, discovery, settings)
    _log(settings, f"{discovery.files_seen} files, {len(specs)} targets; cache: "
                   f"{cache.directory if cache is not None else 'off'}")
    if settings.list_targets:
        write_target_list(specs, info, settings, rename=buffer.rename if buffer is not None else None)
        return EXIT_OK
    discovery_errors = list(discovery.tool_errors)
    if settings.shard:
        specs, info.shard = _shard(specs, settings, cache)
        if info.shard["index"] != 1:
            discovery_errors = []  # a file that cannot be read is reported once, by the first shard
    info.targets = len(specs)
    info.files_seen = discovery.files_seen
    info.files_without_targets = discovery.files_without_targets
    progress = Progress(enabled=not settings.quiet)
    load_parser_in_background()
    cached = {spec.key for spec in specs if settings.verbose and cache is not None and cache.get(spec) is not None}
    try:
        results = run_targets(specs, settings, progress, cache, pool=pool)
    finally:
        progress.close()
    for spec, result in zip(specs, results):
        how = "from the cache" if spec.key in cached else f"in {result.seconds:.1f} s"
        _log(settings, f"{info.relpath(spec.path)}::{spec.factory} linted {how}: "
                       f"{len(result.findings)} findings, {len(result.tool_errors)} tool errors")
    info.targets_failed = sum(1 for result in results if result.tool_errors)
    if not settings.quiet:
        imported = {path for result in results for path in result.dependencies}
        for path in paths_without_targets(settings, discovery, imported):
            shown = buffer.rename(path) if buffer is not None else path
            print(f"etrace-lint: warning: no lint target in {shown} (a function decorated with "
                  f"@etrace_lint.target, or a top-level function named etrace_target*)", file=sys.stderr)
    findings = [f for r in results for f in r.findings]
    notes_left_out: dict[str, int] = {}
    for result in results:
        for rule_id, count in result.notes_left_out.items():
            notes_left_out[rule_id] = notes_left_out.get(rule_id, 0) + count
    tool_errors = discovery_errors + [e for r in results for e in r.tool_errors]
    # ETL301 only speaks about files whose every target was linted: a target
    # that timed out reported nothing, so its suppressions are not known unused
    broken = {spec.path for spec, result in zip(specs, results) if result.tool_errors}
    linted_files = sorted({spec.path for spec in specs} - broken)
    if settings.write_baseline:
        everything = apply_policy(findings, [], settings, linted_files, use_baseline=False,
                                  notes_left_out=notes_left_out)
        count = write_baseline(settings.write_baseline, [f for f in everything.findings if not f.suppressed],
                               settings.root)
        recorded = frozenset(read_baseline(settings.write_baseline))
        settings = dataclasses.replace(settings, baseline_fingerprints=recorded)
        if not settings.quiet:
            print(f"etrace-lint: recorded {count} finding{'s' if count != 1 else ''} in {settings.write_baseline}",
                  file=sys.stderr)
    outcome = apply_policy(findings, tool_errors, settings, linted_files, notes_left_out=notes_left_out)
    outcome.findings = attach_fixes(outcome.findings)
    info.show_flows = settings.show_flows
    info.unsafe_fixes = settings.unsafe_fixes
    fixed: list = []
    if settings.fix or settings.diff:
        code, fixed = apply_fixes(outcome, info, settings, specs, results, buffer)
        if code is not None:
            return code
    info.verify_rows = [row for r in results for row in r.verify_rows]
    info.advice_rows = [row for r in results for row in r.advice_rows]
    info.device = next((row.get("device", "") for row in info.verify_rows if row.get("device")), "")
    info.end_time = _now()
    stream_is_tty = sys.stdout.isatty() and not settings.output_file
    info.color = settings.color if settings.color is not None else (stream_is_tty and "NO_COLOR" not in os.environ)
    if buffer is not None:
        outcome = buffer.relocate(outcome)
        fixed = buffer.relocate(Outcome(findings=fixed)).findings
    if settings.fix_only:
        return _report_fix_only(outcome, fixed, info, settings)
    write_outputs(outcome, info, settings, to_stderr=buffer is not None and settings.fix)
    if buffer is not None and settings.fix:
        sys.stdout.write(buffer.current_text())  # as ruff: the fixed source on stdout, the report on stderr
    if settings.show_fixes and not settings.silent:
        write_fix_list(fixed if settings.fix else [f for f in outcome.findings if _would_fix(f, settings)], info,
                       applied=settings.fix, stream=sys.stdout if _text_on_stdout(settings) else sys.stderr)
    return outcome.exit_code(settings)


def _would_fix(finding, settings: Settings) -> bool:
    return finding.fix is not None and not finding.suppressed and (
        finding.fix.applicability == "safe" or (settings.unsafe_fixes and finding.fix.applicability == "unsafe"))


def _text_on_stdout(settings: Settings) -> bool:
    return settings.output_format in ("text", "concise") and not settings.output_file


def _report_fix_only(outcome: Outcome, fixed: list, info: RunInfo, settings: Settings) -> int:
    """``--fix-only``: say what was fixed, nothing about what remains; exit 0 unless a target failed."""
    if not settings.quiet:
        count = len(fixed)
        if settings.show_fixes:
            write_fix_list(fixed, info, applied=True, stream=sys.stdout)
        else:
            print(f"Fixed {count} finding{'s' if count != 1 else ''}." if count else "No fixes applied.")
        for error in outcome.tool_errors:
            print(f"etrace-lint: error: {error.message} [{error.target}]", file=sys.stderr)
    if settings.sarif:
        _write_sarif(outcome, info, settings)
    return 2 if outcome.tool_errors else 0


def apply_fixes(outcome, info: RunInfo, settings: Settings, specs: list, results: list,
                buffer=None) -> tuple[int | None, list]:
    """``--fix``: write the fixes that pass the check and report what remains; ``--diff``: print
    them as a unified diff, which is then the whole output, and return the exit code (1 when
    there is something to fix). Each fix is checked by linting the edited source again.
    Returns the exit code when the run ends here, and the findings whose fix was applied."""
    report = run_fixes(outcome.findings, settings, specs, results, write=not settings.diff,
                       unsafe=settings.unsafe_fixes)
    for finding, why in report.refused:
        where = f"{info.relpath(finding.path)}:{finding.line}:{finding.location.column}"
        where = buffer.rename(where) if buffer is not None else where
        if not settings.quiet:
            print(f"etrace-lint: {finding.rule_id} fix at {where} not applied: {why}", file=sys.stderr)
    if settings.diff:
        sys.stdout.write(buffer.rename(report.diff) if buffer is not None else report.diff)
        if report.applied and not settings.quiet:
            count = len(report.applied)
            print(f"etrace-lint: {count} fix{'es' if count != 1 else ''} would be applied (--fix)", file=sys.stderr)
        return (2 if outcome.tool_errors else 1 if report.applied else 0), report.applied
    fixed = {id(finding) for finding in report.applied}
    outcome.findings = [f for f in outcome.findings if id(f) not in fixed]
    info.fixes = {"applied": len(report.applied), "remaining": sum(1 for f in outcome.findings if not f.suppressed)}
    if settings.output_format not in ("text", "concise") and not settings.quiet and not settings.fix_only:
        print(f"etrace-lint: {info.fixes['applied']} fixes applied, {info.fixes['remaining']} remaining",
              file=sys.stderr)
    return None, report.applied


def _shard(specs: list, settings: Settings, cache) -> tuple[list, dict]:
    """This shard's targets, and the record `etrace-lint merge` checks the shards against."""
    shard = parse_shard(settings.shard)
    seconds = cache.recorded_seconds(specs) if cache is not None else None
    mine = select(specs, settings.root, shard, seconds)
    return mine, shard_record(specs, mine, settings.root, shard, settings)


def write_target_list(specs: list, info: RunInfo, settings: Settings, rename=None) -> None:
    """``--list-targets``: what a run would import and call, found without importing anything;
    ``rename``: how a buffer read from stdin names its temporary file."""
    rows = [{"path": info.relpath(rename(spec.path) if rename else spec.path), "line": spec.line,
             "factory": spec.factory, "name": spec.display_name} for spec in specs]
    with ExitStack() as stack:
        stream = stack.enter_context(open(settings.output_file, "w", encoding="utf-8")) \
            if settings.output_file else sys.stdout
        if settings.output_format == "json":
            json.dump({"targets": rows}, stream, indent=2, sort_keys=True)
            stream.write("\n")
            return
        for row in rows:
            name = f" [{row['name']}]" if row["name"] != row["factory"] else ""
            stream.write(f"{row['path']}:{row['line']}: {row['factory']}{name}\n")
        if not settings.quiet:
            count = len(rows)
            print(f"{count} target{'s' if count != 1 else ''} would be imported and run", file=sys.stderr)


def write_outputs(outcome, info: RunInfo, settings: Settings, to_stderr: bool = False) -> None:
    """The main output (stdout, ``-o FILE``, or stderr when stdout carries a fixed buffer) and
    the SARIF log of ``--sarif``; ``-s`` prints nothing, files are still written."""
    fmt = settings.output_format
    with ExitStack() as stack:
        if settings.output_file:
            stream = stack.enter_context(open(settings.output_file, "w", encoding="utf-8"))
            info.color = settings.color is True
        elif settings.silent:
            stream = None
        else:
            stream = sys.stderr if to_stderr else sys.stdout
        if stream is not None:
            get_writer(fmt, quiet=settings.quiet, statistics=settings.statistics)(outcome, info, stream)
    if settings.sarif:
        _write_sarif(outcome, info, settings)


def _write_sarif(outcome, info: RunInfo, settings: Settings) -> None:
    with open(settings.sarif, "w", encoding="utf-8") as handle:
        get_writer("sarif")(outcome, info, handle)
    if not settings.quiet:
        print(f"etrace-lint: SARIF log written to {os.path.abspath(settings.sarif)}", file=sys.stderr)
