"""ruff-style text: ``path:line:col: ETL003 message [model]`` and a summary line."""

from __future__ import annotations

from typing import TextIO

from ..findings import Level

_COLORS = {Level.ERROR: "\033[31m", Level.WARNING: "\033[33m", Level.NOTE: "\033[36m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


def write_text(outcome, info, stream: TextIO, summary: bool = True) -> None:
    color = info.color
    for error in outcome.tool_errors:
        where = f"{info.relpath(error.location.path)}:{error.location.line}:{error.location.column}"
        head = f"{_BOLD}{where}{_RESET}" if color else where
        tag = f"{_COLORS[Level.ERROR]}error{_RESET}" if color else "error"
        stream.write(f"{head}: {tag}: {error.message} [{error.target}]\n")
    for finding in outcome.findings:
        loc = finding.location
        where = f"{info.relpath(loc.path)}:{loc.line}:{loc.column}"
        rule = finding.rule_id
        if color:
            where = f"{_BOLD}{where}{_RESET}"
            rule = f"{_COLORS[finding.level]}{rule}{_RESET}"
        model = f" [{finding.target}]" if finding.target else ""
        suppressed = f" (suppressed by {finding.suppressed})" if finding.suppressed else ""
        stream.write(f"{where}: {rule} {finding.message}{model}{suppressed}\n")
    if not summary:
        return
    for table in info.summaries:
        stream.write(table)
    if info.verify_rows:
        from .verify_table import format_verify_table
        stream.write(format_verify_table(info.verify_rows))
    stream.write(summary_line(outcome, info) + "\n")


def write_text_quiet(outcome, info, stream: TextIO) -> None:
    """``-q``: the finding lines and tool errors, no tables and no summary."""
    write_text(outcome, info, stream, summary=False)


def summary_line(outcome, info) -> str:
    counts = {level: 0 for level in Level}
    for finding in outcome.findings:
        counts[finding.level] += 1
    found = len(outcome.findings)
    parts = [f"Found {found} finding{'s' if found != 1 else ''}"]
    detail = [f"{counts[lvl]} {lvl.value}{'s' if counts[lvl] != 1 else ''}"
              for lvl in (Level.ERROR, Level.WARNING, Level.NOTE) if counts[lvl]]
    if detail:
        parts[0] += f" ({', '.join(detail)})"
    parts.append(f"in {info.targets} model{'s' if info.targets != 1 else ''}")
    line = " ".join(parts) + "."
    if outcome.tool_errors:
        n = len(outcome.tool_errors)
        line += f" {n} target{'s' if n != 1 else ''} could not be linted."
    if outcome.hidden_notes:
        line += f" {outcome.hidden_notes} note{'s' if outcome.hidden_notes != 1 else ''} hidden (--show-info)."
    return line
