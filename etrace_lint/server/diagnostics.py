"""Findings, tool errors and notices -> LSP diagnostics.

A diagnostic spans its finding's line from the finding's column to the end
of the code on that line; a tool error sits on the line of the factory it is
about (where the exception was raised is its related location).
"""

from __future__ import annotations

import os
from typing import Sequence

from lsprotocol import types

from ..core.findings import Finding, Level, Location, ToolError
from ..core.rule import DOCS_URL, rule_page_url
from .uris import path_to_uri

SOURCE = "etrace-lint"
TOOL_ERROR_CODE = "tool-error"
NOTICE_CODE = "etrace-lint"

_SEVERITY = {Level.ERROR: types.DiagnosticSeverity.Error, Level.WARNING: types.DiagnosticSeverity.Warning,
             Level.NOTE: types.DiagnosticSeverity.Information}


class Lines:
    """The saved text of files, read once per publication: findings are about what was saved,
    not about unsaved edits in the editor's buffer."""

    def __init__(self) -> None:
        self._files: dict[str, list[str]] = {}

    def of(self, path: str) -> list[str]:
        if path not in self._files:
            try:
                with open(path, "rb") as handle:
                    text = handle.read().decode("utf-8", errors="replace")
            except OSError:
                text = ""
            self._files[path] = text.splitlines()
        return self._files[path]


def _units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def line_range(lines: list[str], line: int, column: int = 1,
               encoding: str = types.PositionEncodingKind.Utf16) -> types.Range:
    """From ``column`` (1-based characters) to the end of the code on ``line`` (1-based)."""
    index = max(0, line - 1)
    text = lines[index] if index < len(lines) else ""
    code_end = len(text.rstrip())
    start = min(max(0, column - 1), code_end)
    if start == code_end:  # nothing at the column: the whole line
        start = len(text) - len(text.lstrip())
    return types.Range(types.Position(index, _units(text[:start], encoding)),
                       types.Position(index, _units(text[:code_end], encoding)))


def _related(location: Location, lines: Lines, encoding: str, fallback: str) -> types.DiagnosticRelatedInformation:
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=path_to_uri(location.path),
                                range=line_range(lines.of(location.path), location.line, location.column, encoding)),
        message=location.label or fallback)


def finding_diagnostic(finding: Finding, lines: Lines, encoding: str, docs_url: str = DOCS_URL) -> types.Diagnostic:
    """``docs_url``: the folder's ``docs-url``, where the code's link to the rule's page points."""
    model = f" [{finding.target}]" if finding.target else ""
    return types.Diagnostic(
        range=line_range(lines.of(finding.path), finding.line, finding.location.column, encoding),
        message=f"{finding.message}{model}",
        severity=_SEVERITY[finding.level],
        code=finding.rule_id,
        code_description=types.CodeDescription(href=rule_page_url(finding.rule_id, docs_url)),
        source=SOURCE,
        related_information=[_related(loc, lines, encoding, "related location") for loc in finding.related]
        + [_related(step, lines, encoding, f"path step {n}") for n, step in enumerate(finding.flow, start=1)]
        or None,
        data=_data(finding))


def _data(finding: Finding) -> dict[str, object]:
    """What code actions need later: the rule, the model, and the rule's fix when it has one."""
    data: dict[str, object] = {"rule": finding.rule_id, "model": finding.target}
    if finding.fix is not None:
        data["fix"] = finding.fix.to_json()
    return data


def tool_error_diagnostic(error: ToolError, factory: Location, lines: Lines, encoding: str) -> types.Diagnostic:
    """``factory``: where the target's factory is defined; the diagnostic sits there."""
    related = []
    where = error.location
    if (os.path.abspath(where.path), where.line) != (os.path.abspath(factory.path), factory.line):
        related.append(_related(where, lines, encoding, "raised here"))
    return types.Diagnostic(
        range=line_range(lines.of(factory.path), factory.line, factory.column, encoding),
        message=f"{error.message} [{error.target}]",
        severity=types.DiagnosticSeverity.Error,
        code=TOOL_ERROR_CODE,
        source=SOURCE,
        related_information=related or None,
        data={"reason": error.reason, "model": error.target})


def notice_diagnostic(message: str, severity: types.DiagnosticSeverity, lines: Sequence[str] = (), line: int = 1,
                      column: int = 1, encoding: str = types.PositionEncodingKind.Utf16) -> types.Diagnostic:
    """What the server itself has to say about a file: trust, configuration, syntax."""
    return types.Diagnostic(range=line_range(list(lines), line, column, encoding), message=message,
                            severity=severity, code=NOTICE_CODE, source=SOURCE)
