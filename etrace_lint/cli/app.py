"""One run as a pipeline: discover -> plan -> run -> policy -> fixes -> outputs -> exit code.

Each stage is a function of the previous stage's frozen result (:class:`~.plan.Discovered`,
:class:`~.plan.Plan`, :class:`Results`, :class:`~etrace_lint.policy.decide.Outcome`,
:class:`Fixed`); none writes into another's objects, and the facts the writers print
(:class:`~etrace_lint.writers.RunInfo`) are gathered once, from all of them, at the end.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import sys
from dataclasses import dataclass

from ..config.baseline import write_baseline
from ..config.settings import PolicySettings, RunSettings, Settings, Stages
from ..core.exit_codes import EXIT_OK
from ..core.findings import Finding, TargetResult, ToolError
from ..discovery.stdin_buffer import StdinBuffer, stdin_buffer
from ..fixes import attach_fixes, load_parser_in_background, run_fixes
from ..policy.decide import Outcome, apply_policy, counted_notes
from ..policy.scope import stage_settings
from ..running.cache import Cache
from ..running.runner import Pool, open_cache, run_targets
from ..writers import RunInfo, relative_path
from ..writers.text import write_fix_list
from .outputs import text_on_stdout, would_fix, write_fix_only, write_outputs, write_target_list
from .plan import Plan, discover_targets, paths_without_targets, plan_run
from .progress import Progress


@dataclass(frozen=True)
class Results:
    """What the workers (or the cache) returned for the plan's targets, in its order."""

    plan: Plan
    results: tuple[TargetResult, ...]

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]

    @property
    def tool_errors(self) -> list[ToolError]:
        return [*self.plan.tool_errors, *(e for r in self.results for e in r.tool_errors)]

    @property
    def notes_left_out(self) -> dict[str, int]:
        """Per rule, the notes the engine counted instead of building, over all targets."""
        return counted_notes(self.results)

    @property
    def linted_files(self) -> list[str]:
        """Files whose every target was linted. ETL301 speaks only of these: a target that timed
        out reported nothing, so its suppressions are not known unused."""
        broken = {spec.path for spec, result in zip(self.plan.specs, self.results) if result.tool_errors}
        return sorted({spec.path for spec in self.plan.specs} - broken)


@dataclass(frozen=True)
class Fixed:
    """After ``--fix`` / ``--diff``: what remains to show, the findings whose fix was applied, the
    counts the writers print, and the exit code when the run ends here (``--diff``)."""

    outcome: Outcome
    applied: tuple[Finding, ...] = ()
    counts: dict[str, int] | None = None
    exit_code: int | None = None


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run(settings: Settings, pool: Pool | None = None) -> int:
    """One run: lint, decide, report; ``pool``: warm workers to run on and keep (``--watch``)."""
    if settings.paths == ["-"]:
        with stdin_buffer(settings.stdin_filename) as buffer:
            buffered = dataclasses.replace(settings, paths=[buffer.temporary], use_cache=False)
            return _run(buffered, pool, buffer)
    return _run(settings, pool, None)


def _log(verbose: bool, message: str) -> None:
    """``-v``: what the run read and did, on stderr (``verbose``: -v and not -q)."""
    if verbose:
        print(f"etrace-lint: {message}", file=sys.stderr)


def _run(settings: Settings, pool: Pool | None, buffer: StdinBuffer | None) -> int:
    started = _now()
    stages = stage_settings(settings)  # each stage's own settings; the policy decides the engine's scope here
    verbose = settings.verbose and not settings.quiet
    _log(verbose, f"configuration: {settings.config_file or 'none (defaults and the command line)'}")
    cache = open_cache(stages.run)
    discovered = discover_targets(stages.discovery, cache)
    _log(verbose, f"{discovered.found.files_seen} files, {len(discovered.targets)} targets; cache: "
                  f"{cache.directory if cache is not None else 'off'}")
    if settings.list_targets:
        write_target_list(discovered.targets, stages.output, rename=buffer.rename if buffer is not None else None)
        return EXIT_OK
    plan = plan_run(discovered, stages.discovery, cache)
    results = run_plan(plan, stages.run, cache, pool, verbose=verbose)
    _warn_of_paths_without_targets(results, stages, buffer)
    outcome = decide(results, stages.policy, settings.write_baseline, quiet=settings.quiet)
    fixed = fix(outcome, results, settings, buffer)
    if fixed.exit_code is not None:
        return fixed.exit_code
    return report(fixed, stages, _run_info(fixed, results, stages, started), buffer)


def run_plan(plan: Plan, settings: RunSettings, cache: Cache | None, pool: Pool | None = None,
             verbose: bool = False) -> Results:
    """Lint the plan's targets: cached results first, the rest in workers."""
    progress = Progress(enabled=not settings.quiet)
    load_parser_in_background()
    try:
        results = run_targets(list(plan.specs), settings, progress, cache, pool=pool)
    finally:
        progress.close()
    for spec, result in zip(plan.specs, results):
        how = "from the cache" if spec.key in plan.cached else f"in {result.seconds:.1f} s"
        _log(verbose, f"{relative_path(spec.path, settings.root)}::{spec.factory} linted {how}: "
                      f"{len(result.findings)} findings, {len(result.tool_errors)} tool errors")
    return Results(plan, tuple(results))


def _warn_of_paths_without_targets(results: Results, stages: Stages, buffer: StdinBuffer | None) -> None:
    if stages.output.quiet:
        return
    imported = {path for result in results.results for path in result.dependencies}
    for path in paths_without_targets(stages.discovery, results.plan.discovered.found, imported):
        shown = buffer.rename(path) if buffer is not None else path
        print(f"etrace-lint: warning: no lint target in {shown} (a function decorated with "
              f"@etrace_lint.target, or a top-level function named etrace_target*)", file=sys.stderr)


def decide(results: Results, policy: PolicySettings, record: str | None = None, quiet: bool = False) -> Outcome:
    """The policy over every finding, with each shown finding's fix; ``record`` (``--write-baseline``)
    first records every unsuppressed finding there, and the run then holds the findings against the
    fingerprints it recorded, so it shows none of them."""
    findings, notes_left_out, linted_files = results.findings, results.notes_left_out, results.linted_files
    if record:
        everything = apply_policy(findings, [], policy, linted_files, use_baseline=False,
                                  notes_left_out=notes_left_out)
        recorded = write_baseline(record, [f for f in everything.findings if not f.suppressed], policy.root)
        policy = dataclasses.replace(policy, baseline=recorded)
        if not quiet:
            count = len(recorded)
            print(f"etrace-lint: recorded {count} finding{'s' if count != 1 else ''} in {record}", file=sys.stderr)
    outcome = apply_policy(findings, results.tool_errors, policy, linted_files, notes_left_out=notes_left_out)
    return dataclasses.replace(outcome, findings=attach_fixes(outcome.findings))


def fix(outcome: Outcome, results: Results, settings: Settings, buffer: StdinBuffer | None = None) -> Fixed:
    """``--fix``: write the fixes that pass the check and report what remains; ``--diff``: print
    them as a unified diff, which is then the whole output, and end the run (exit 1 when there
    is something to fix). Each fix is checked by linting the edited source again."""
    if not (settings.fix or settings.diff):
        return Fixed(outcome)
    report = run_fixes(outcome.findings, settings, list(results.plan.specs), list(results.results),
                       write=not settings.diff, unsafe=settings.unsafe_fixes)
    for finding, why in report.refused:
        where = f"{relative_path(finding.path, settings.root)}:{finding.line}:{finding.location.column}"
        where = buffer.rename(where) if buffer is not None else where
        if not settings.quiet:
            print(f"etrace-lint: {finding.rule_id} fix at {where} not applied: {why}", file=sys.stderr)
    if settings.diff:
        sys.stdout.write(buffer.rename(report.diff) if buffer is not None else report.diff)
        if report.applied and not settings.quiet:
            count = len(report.applied)
            print(f"etrace-lint: {count} fix{'es' if count != 1 else ''} would be applied (--fix)", file=sys.stderr)
        code = 2 if outcome.tool_errors else 1 if report.applied else 0
        return Fixed(outcome, tuple(report.applied), exit_code=code)
    remaining = report.remaining(outcome.findings)
    counts = {"applied": len(report.applied), "remaining": sum(1 for f in remaining if not f.suppressed)}
    if settings.output_format not in ("text", "concise") and not settings.quiet and not settings.fix_only:
        print(f"etrace-lint: {counts['applied']} fixes applied, {counts['remaining']} remaining", file=sys.stderr)
    return Fixed(dataclasses.replace(outcome, findings=remaining), tuple(report.applied), counts)


def _run_info(fixed: Fixed, results: Results, stages: Stages, started: str) -> RunInfo:
    """What the writers may print about the run, from every stage's result."""
    plan, settings = results.plan, stages.output
    verify_rows = [row for r in results.results for row in r.verify_rows]
    if settings.output_file:
        color = settings.color is True
    else:
        color = settings.color if settings.color is not None else (sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    return RunInfo(root=settings.root, start_time=started,
                   targets=len(plan.specs), files_seen=plan.discovered.found.files_seen,
                   files_without_targets=plan.discovered.found.files_without_targets,
                   targets_failed=sum(1 for result in results.results if result.tool_errors),
                   shard=plan.shard, show_flows=settings.show_flows, unsafe_fixes=settings.unsafe_fixes,
                   fixes=fixed.counts, verify_rows=verify_rows, docs_url=settings.docs_url,
                   advice_rows=[row for r in results.results for row in r.advice_rows],
                   device=next((str(row["device"]) for row in verify_rows if row.get("device")), ""),
                   end_time=_now(), color=color)


def report(fixed: Fixed, stages: Stages, info: RunInfo, buffer: StdinBuffer | None) -> int:
    """Write the outputs and return the exit code."""
    outcome, applied, settings = fixed.outcome, list(fixed.applied), stages.output
    if buffer is not None:
        outcome = dataclasses.replace(outcome, findings=buffer.relocate_findings(outcome.findings),
                                      tool_errors=buffer.relocate_errors(outcome.tool_errors))
        applied = buffer.relocate_findings(applied)
    if settings.fix_only:
        return write_fix_only(outcome, tuple(applied), info, settings)
    write_outputs(outcome, info, settings, to_stderr=buffer is not None and settings.fix)
    if buffer is not None and settings.fix:
        sys.stdout.write(buffer.current_text())  # as ruff: the fixed source on stdout, the report on stderr
    if settings.show_fixes and not settings.silent:
        write_fix_list(applied if settings.fix else [f for f in outcome.findings if would_fix(f, settings)], info,
                       applied=settings.fix, stream=sys.stdout if text_on_stdout(settings) else sys.stderr)
    return outcome.exit_code(stages.policy)
