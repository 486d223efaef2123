"""The last stage of a run: where each output goes (stdout, ``-o FILE``, ``--sarif``), printed by the writers."""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack
from typing import Callable, TextIO

from ..config.settings import OutputSettings
from ..core.exit_codes import exit_code
from ..core.findings import Finding
from ..discovery.discover import TargetSpec
from ..policy.decide import Outcome
from ..writers import RunInfo, get_writer, relative_path
from ..writers.text import write_fix_list


def write_target_list(specs: tuple[TargetSpec, ...], settings: OutputSettings,
                      rename: Callable[[str], str] | None = None) -> None:
    """``--list-targets``: what a run would import and call, found without importing anything;
    ``rename``: how a buffer read from stdin names its temporary file."""
    rows = [{"path": relative_path(rename(spec.path) if rename else spec.path, settings.root), "line": spec.line,
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


def write_outputs(outcome: Outcome, info: RunInfo, settings: OutputSettings, to_stderr: bool = False) -> None:
    """The main output (stdout, ``-o FILE``, or stderr when stdout carries a fixed buffer) and
    the SARIF log of ``--sarif``; ``-s`` prints nothing, files are still written."""
    with ExitStack() as stack:
        stream: TextIO | None
        if settings.output_file:
            stream = stack.enter_context(open(settings.output_file, "w", encoding="utf-8"))
        elif settings.silent:
            stream = None
        else:
            stream = sys.stderr if to_stderr else sys.stdout
        if stream is not None:
            get_writer(settings.output_format, quiet=settings.quiet, statistics=settings.statistics)(
                outcome, info, stream)
    if settings.sarif:
        write_sarif_file(outcome, info, settings)


def write_sarif_file(outcome: Outcome, info: RunInfo, settings: OutputSettings) -> None:
    assert settings.sarif  # called only when --sarif names a file
    with open(settings.sarif, "w", encoding="utf-8") as handle:
        get_writer("sarif")(outcome, info, handle)
    if not settings.quiet:
        print(f"etrace-lint: SARIF log written to {os.path.abspath(settings.sarif)}", file=sys.stderr)


def write_fix_only(outcome: Outcome, fixed: tuple[Finding, ...], info: RunInfo, settings: OutputSettings) -> int:
    """``--fix-only``: say what was fixed, nothing about what remains; exit 0 unless a target failed."""
    if not settings.quiet:
        count = len(fixed)
        if settings.show_fixes:
            write_fix_list(list(fixed), info, applied=True, stream=sys.stdout)
        else:
            print(f"Fixed {count} finding{'s' if count != 1 else ''}." if count else "No fixes applied.")
        for error in outcome.tool_errors:
            print(f"etrace-lint: error: {error.message} [{error.target}]", file=sys.stderr)
    if settings.sarif:
        write_sarif_file(outcome, info, settings)
    return exit_code(bool(outcome.tool_errors), failing=False, exit_zero=True)


def would_fix(finding: Finding, settings: OutputSettings) -> bool:
    return finding.fix is not None and not finding.suppressed and (
        finding.fix.applicability == "safe" or (settings.unsafe_fixes and finding.fix.applicability == "unsafe"))


def text_on_stdout(settings: OutputSettings) -> bool:
    return settings.output_format in ("text", "concise") and not settings.output_file
