"""A stable JSON document: findings and tool errors with repo-relative paths."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

from ..core.findings import Finding, Fix, Location, ToolError
from .advice_table import relocated
from .own_logs import SHARD_PROPERTY
from .properties import finding_properties
from .run_info import RunInfo

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome


def _location(loc: Location, info: RunInfo) -> dict[str, object]:
    return {"path": info.relpath(loc.path), "line": loc.line, "column": loc.column,
            **({"label": loc.label} if loc.label else {})}


def _fix(fix: Fix, info: RunInfo) -> dict[str, object]:
    return {"message": fix.message, "applicability": fix.applicability,
            "edits": [{"path": info.relpath(e.path), "line": e.line, "column": e.column, "endLine": e.end_line,
                       "endColumn": e.end_column, "replacement": e.replacement} for e in fix.edits]}


def finding_record(f: Finding, info: RunInfo) -> dict[str, object]:
    """One finding as the json and json-lines formats show it."""
    return {
        "rule": f.rule_id,
        "level": f.level.value,
        "message": f.message,
        "model": f.target,
        "location": _location(f.location, info),
        "related": [_location(r, info) for r in f.related],
        "properties": finding_properties(f),
        **({"suppressed": f.suppressed} if f.suppressed else {}),
        **({"flow": [_location(step, info) for step in f.flow]} if f.flow else {}),
        **({"fix": _fix(f.fix, info)} if f.fix is not None else {}),
    }


def tool_error_record(e: ToolError, info: RunInfo) -> dict[str, object]:
    """One target that could not be linted, as the json and json-lines formats show it."""
    return {"model": e.target, "message": e.message, "reason": e.reason, "location": _location(e.location, info)}


def write_json_lines(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    """One JSON object a line (ruff's ``json-lines``): each finding, then each tool error
    (``"toolError": true``); nothing else, so a stream reader needs no document end."""
    for finding in outcome.findings:
        stream.write(json.dumps(finding_record(finding, info), sort_keys=True, default=str) + "\n")
    for error in outcome.tool_errors:
        stream.write(json.dumps({**tool_error_record(error, info), "toolError": True}, sort_keys=True) + "\n")


def write_json(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    document = {
        "findings": [finding_record(f, info) for f in outcome.findings],
        "toolErrors": [tool_error_record(e, info) for e in outcome.tool_errors],
        "summary": {"models": info.targets, "files": info.files_seen,
                    "findings": len(outcome.findings), "toolErrors": len(outcome.tool_errors),
                    **({"fixesApplied": info.fixes["applied"]} if info.fixes is not None else {})},
    }
    if info.shard:
        document[SHARD_PROPERTY] = info.shard
    if info.advice_rows:
        document["advice"] = relocated(info.advice_rows, info.relpath)
    json.dump(document, stream, indent=2, sort_keys=True, default=str)
    stream.write("\n")
