"""A stable JSON document: findings and tool errors with repo-relative paths."""

from __future__ import annotations

import json
from typing import TextIO


def _location(loc, info) -> dict:
    return {"path": info.relpath(loc.path), "line": loc.line, "column": loc.column,
            **({"label": loc.label} if loc.label else {})}


def _fix(fix, info) -> dict:
    return {"message": fix.message, "applicability": fix.applicability,
            "edits": [{"path": info.relpath(e.path), "line": e.line, "column": e.column, "endLine": e.end_line,
                       "endColumn": e.end_column, "replacement": e.replacement} for e in fix.edits]}


def write_json(outcome, info, stream: TextIO) -> None:
    document = {
        "findings": [{
            "rule": f.rule_id,
            "level": f.level.value,
            "message": f.message,
            "model": f.target,
            "location": _location(f.location, info),
            "related": [_location(r, info) for r in f.related],
            "properties": f.properties,
            **({"suppressed": f.suppressed} if f.suppressed else {}),
            **({"flow": [_location(step, info) for step in f.flow]} if f.flow else {}),
            **({"fix": _fix(f.fix, info)} if f.fix is not None else {}),
        } for f in outcome.findings],
        "toolErrors": [{
            "model": e.target,
            "message": e.message,
            "reason": e.reason,
            "location": _location(e.location, info),
        } for e in outcome.tool_errors],
        "summary": {"models": info.targets, "files": info.files_seen,
                    "findings": len(outcome.findings), "toolErrors": len(outcome.tool_errors),
                    **({"fixesApplied": info.fixes["applied"]} if info.fixes is not None else {})},
    }
    if info.shard:
        from ..merge import SHARD_PROPERTY

        document[SHARD_PROPERTY] = info.shard
    json.dump(document, stream, indent=2, sort_keys=True, default=str)
    stream.write("\n")
