"""reviewdog's Diagnostic Format (rdjson): ``reviewdog -f=rdjson`` posts the findings as review comments.

Each finding is a diagnostic with its rule as ``code``, its range and
severity (columns in UTF-8 bytes, as rdjson counts them); a safe fix becomes ``suggestions`` (reviewdog offers them as
suggested changes), its related locations ``related_locations``.
"""

from __future__ import annotations

import json
import linecache
from typing import TYPE_CHECKING, TextIO

from ..core.findings import Edit, Level, Location
from .run_info import RunInfo

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome

SOURCE = {"name": "etrace-lint", "url": "https://github.com/etrace-lint/etrace-lint"}
SEVERITY = {Level.ERROR: "ERROR", Level.WARNING: "WARNING", Level.NOTE: "INFO"}


def _byte_column(path: str, line: int, column: int) -> int:
    """rdjson counts columns in UTF-8 bytes; ours count code points."""
    text = linecache.getline(path, line)
    return len(text[:column - 1].encode("utf-8")) + 1 if text else column


def _position(path: str, line: int, column: int) -> dict[str, int]:
    return {"line": line, "column": _byte_column(path, line, column)}


def _location(info: RunInfo, loc: Location) -> dict[str, object]:
    return {"path": info.relpath(loc.path), "range": {"start": _position(loc.path, loc.line, loc.column)}}


def _suggestion(info: RunInfo, edit: Edit) -> dict[str, object]:
    return {"range": {"start": _position(edit.path, edit.line, edit.column),
                      "end": _position(edit.path, edit.end_line, edit.end_column)}, "text": edit.replacement}


def write_rdjson(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    linecache.checkcache()  # a file edited since an earlier run in this process (--watch)
    diagnostics = []
    for finding in outcome.findings:
        if finding.suppressed:
            continue
        diagnostic: dict[str, object] = {
            "message": f"{finding.message} [{finding.target}]",
            "location": _location(info, finding.location),
            "severity": SEVERITY[finding.level],
            "source": SOURCE,
            "code": {"value": finding.rule_id},
        }
        fix = finding.fix
        if fix is not None and fix.applicability == "safe" and \
                all(edit.path == finding.path for edit in fix.edits):
            diagnostic["suggestions"] = [_suggestion(info, edit) for edit in fix.edits]
        if finding.related:
            diagnostic["related_locations"] = [{"message": loc.label, "location": _location(info, loc)}
                                               for loc in finding.related]
        diagnostics.append(diagnostic)
    for error in outcome.tool_errors:
        diagnostics.append({"message": f"could not be linted: {error.message} [{error.target}]",
                            "location": _location(info, error.location), "severity": "ERROR", "source": SOURCE,
                            "code": {"value": error.reason}})
    json.dump({"source": SOURCE, "diagnostics": diagnostics}, stream, indent=2)
    stream.write("\n")
