"""ruff-style text.

The full form (the default, like ruff's and rustc's full output) prints each
finding's related locations under it, so the line to edit is visible::

    models/net.py:20:12: ETL005 Wr reaches ... [etrace_target_gated]
      = Wr is created here: models/net.py:14:19
      = target factory: models/net.py:27:1

The concise form (``--output-format concise``, ``-q``) keeps one line a
finding; ``--statistics`` prints a count per rule instead of the findings.
Every form ends with a summary line unless ``-q``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, TextIO

from ..core.findings import Finding, Level, Location
from ..core.places import place
from .advice_table import format_advice_table
from .run_info import RunInfo
from .statistics import rule_counts
from .verify_table import format_verify_table

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome

_COLORS = {Level.ERROR: "\033[31m", Level.WARNING: "\033[33m", Level.NOTE: "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def write_text(outcome: Outcome, info: RunInfo, stream: TextIO, summary: bool = True) -> None:
    """Each finding, its related locations under it, then the tables and the summary."""
    _write_findings(outcome, info, stream, related=True)
    if summary:
        _write_tables(info, stream)
        stream.write(summary_line(outcome, info) + "\n")


def write_concise(outcome: Outcome, info: RunInfo, stream: TextIO, summary: bool = True) -> None:
    """One line a finding (``--output-format concise``), then the summary."""
    _write_findings(outcome, info, stream, related=False)
    if summary:
        _write_tables(info, stream)
        stream.write(summary_line(outcome, info) + "\n")


def write_text_quiet(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    """``-q``: one line a finding and the tool errors, no tables and no summary."""
    write_concise(outcome, info, stream, summary=False)


def write_statistics(outcome: Outcome, info: RunInfo, stream: TextIO, summary: bool = True) -> None:
    """``--statistics``: how many findings each rule has, most first (``ruff check --statistics``).

    Tool errors are still printed one by one: each needs its own fix.
    """
    _write_tool_errors(outcome, info, stream)
    rows = rule_counts(outcome)
    width = max((len(str(row["count"])) for row in rows), default=1)
    for row in rows:
        code = row["code"]
        if info.color:
            code = f"{_COLORS[Level(row['level'])]}{code}{_RESET}"
        stream.write(f"{row['count']:>{width}}\t{code}\t{row['name']}\n")
    if summary:
        stream.write(summary_line(outcome, info) + "\n")


def _where(loc: Location, info: RunInfo) -> str:
    return place(loc.path, loc.line, loc.column, info.relpath)


def _write_tool_errors(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    color = info.color
    for error in outcome.tool_errors:
        where = _where(error.location, info)
        head = f"{_BOLD}{where}{_RESET}" if color else where
        tag = f"{_COLORS[Level.ERROR]}error{_RESET}" if color else "error"
        stream.write(f"{head}: {tag}: {error.message} [{error.target}]\n")


def _write_findings(outcome: Outcome, info: RunInfo, stream: TextIO, related: bool) -> None:
    color = info.color
    _write_tool_errors(outcome, info, stream)
    for finding in outcome.findings:
        where = _where(finding.location, info)
        rule = finding.rule_id
        if color:
            where = f"{_BOLD}{where}{_RESET}"
            rule = f"{_COLORS[finding.level]}{rule}{_RESET}"
        model = f" [{finding.target}]" if finding.target else ""
        suppressed = f" (suppressed by {finding.suppressed})" if finding.suppressed else ""
        stream.write(f"{where}: {rule} {finding.message}{model}{suppressed}\n")
        if related:
            lines = [f"  = {loc.label or 'see also'}: {_where(loc, info)}" for loc in finding.related]
            if finding.fix is not None:
                lines.append(f"  = fix ({finding.fix.applicability}): {finding.fix.message}")
            if info.show_flows and finding.flow:
                lines.append("  = path:")
                lines += [f"      {n}. {_where(step, info)}  {step.label}" for n, step in enumerate(finding.flow, 1)]
            for line in lines:
                stream.write(f"{_DIM}{line}{_RESET}\n" if color else f"{line}\n")


def _write_tables(info: RunInfo, stream: TextIO) -> None:
    if info.verify_rows:
        stream.write(format_verify_table(info.verify_rows))
    if info.advice_rows:
        stream.write(format_advice_table(info.advice_rows, info.relpath))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def summary_line(outcome: Outcome, info: RunInfo) -> str:
    """``Found 3 findings (1 error, 2 warnings) in 4 models. 1 target could not be linted.``

    Models counts the targets that were linted; those that could not be are
    counted apart, once each whatever the number of their errors.
    """
    counts = {level: 0 for level in Level}
    for finding in outcome.findings:
        counts[finding.level] += 1
    line = f"Found {_plural(len(outcome.findings), 'finding')}"
    detail = [_plural(counts[lvl], lvl.value) for lvl in (Level.ERROR, Level.WARNING, Level.NOTE) if counts[lvl]]
    if detail:
        line += f" ({', '.join(detail)})"
    line += f" in {_plural(info.targets - info.targets_failed, 'model')}."
    failed = len({(error.target, error.location.path) for error in outcome.tool_errors})
    if failed:
        line += f" {_plural(failed, 'target')} could not be linted."
    if outcome.hidden_notes:
        line += f" {_plural(outcome.hidden_notes, 'note')} hidden (--show-info)."
    return line + _fix_summary(outcome, info)


def _fix_summary(outcome: Outcome, info: RunInfo) -> str:
    """`` 2 fixes applied, 1 remaining.`` after --fix; else how many --fix would apply."""
    if info.fixes is not None:
        applied = info.fixes["applied"]
        return f" {applied} fix{'es' if applied != 1 else ''} applied, {info.fixes['remaining']} remaining."
    fixable = [f.fix.applicability for f in outcome.findings if f.fix is not None and not f.suppressed]
    applicable = len(fixable) if info.unsafe_fixes else fixable.count("safe")
    parts = []
    if applicable:
        parts.append(f"{applicable} fixable with --fix")
    if len(fixable) - applicable:
        parts.append(f"{len(fixable) - applicable} more with --unsafe-fixes")
    return f" {', '.join(parts)}." if parts else ""


def write_fix_list(findings: Sequence[Finding], info: RunInfo, applied: bool, stream: TextIO) -> None:
    """``--show-fixes``: the fixes applied (or available), by file, as ``ruff --show-fixes`` lists them::

        Fixed 2 findings:
        - models/net.py:
            12:5 ETL201 use braintrace.matmul(x, W)
    """
    count = _plural(len(findings), "finding")
    if not findings:
        stream.write("No fixes applied.\n" if applied else "No fixes available.\n")
        return
    stream.write(f"Fixed {count}:\n" if applied else f"Fixes available for {count} (--fix):\n")
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        by_file.setdefault(info.relpath(finding.path), []).append(finding)
    for path in sorted(by_file):
        stream.write(f"- {path}:\n")
        for finding in sorted(by_file[path], key=lambda f: (f.line, f.location.column)):
            fix = finding.fix
            assert fix is not None  # the findings listed are those with a fix
            unsafe = "" if fix.applicability == "safe" else f" ({fix.applicability})"
            stream.write(f"    {finding.line}:{finding.location.column} {finding.rule_id} {fix.message}"
                         f"{unsafe} [{finding.target}]\n")
