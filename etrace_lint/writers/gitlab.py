"""GitLab Code Quality: a JSON list of issues, shown in merge requests (``artifacts:reports:codequality``).

Each finding is an issue with GitLab's required fields: ``description``,
``check_name`` (the rule id), ``fingerprint``, ``severity`` and
``location.path`` / ``location.lines.begin``. The fingerprint does not
depend on the line, so an issue moved by an edit above it is the same issue
to GitLab; two alike findings in one file get distinct fingerprints by their
order.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, TextIO

from ..core.findings import Level
from .run_info import RunInfo

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome

SEVERITY = {Level.ERROR: "major", Level.WARNING: "minor", Level.NOTE: "info"}


def _fingerprint(seen: dict[str, int], *parts: str) -> str:
    key = "\0".join(parts)
    seen[key] = seen.get(key, 0) + 1
    return hashlib.sha256(f"{key}\0{seen[key]}".encode("utf-8")).hexdigest()[:32]


def write_gitlab(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    seen: dict[str, int] = {}
    issues = []
    for finding in outcome.findings:
        if finding.suppressed:
            continue
        path = info.relpath(finding.path)
        issues.append({
            "description": f"{finding.rule_id} {finding.message} [{finding.target}]",
            "check_name": finding.rule_id,
            "fingerprint": _fingerprint(seen, finding.rule_id, path, finding.target, finding.message),
            "severity": SEVERITY[finding.level],
            "location": {"path": path, "lines": {"begin": finding.line},
                         "positions": {"begin": {"line": finding.line, "column": finding.location.column}}},
        })
    for error in outcome.tool_errors:
        path = info.relpath(error.location.path)
        issues.append({
            "description": f"could not be linted: {error.message} [{error.target}]",
            "check_name": "etrace-lint/tool-error",
            "fingerprint": _fingerprint(seen, "tool-error", path, error.target, error.reason),
            "severity": "blocker",
            "location": {"path": path, "lines": {"begin": error.location.line}},
        })
    json.dump(issues, stream, indent=2)
    stream.write("\n")
