"""GitHub Actions workflow commands: annotations on the pull request's lines."""

from __future__ import annotations

from typing import TextIO

_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def write_github(outcome, info, stream: TextIO) -> None:
    for error in outcome.tool_errors:
        loc = error.location
        stream.write(f"::error file={_escape_property(info.relpath(loc.path))},line={loc.line},"
                     f"title={_escape_property('etrace-lint: ' + error.target)}::{_escape_data(error.message)}\n")
    for finding in outcome.findings:
        loc = finding.location
        title = f"{finding.rule_id} [{finding.target}]"
        stream.write(f"::{_COMMAND[finding.level.value]} file={_escape_property(info.relpath(loc.path))},"
                     f"line={loc.line},col={loc.column},title={_escape_property(title)}::"
                     f"{_escape_data(finding.message)}\n")
