"""GitHub Actions workflow commands: annotations on the pull request's lines.

``::error file=models/gru.py,line=12,col=5,title=ETL005::message``. Values are
escaped the way the Actions toolkit escapes them, so a message with a newline,
a ``%`` or a ``::`` cannot end the command early or start another one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..core.findings import Level
from .run_info import RunInfo

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome

_COMMAND = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, path: str, line: int, column: int, title: str, message: str) -> str:
    props = f"file={escape_property(path)},line={max(1, line)},col={max(1, column)},title={escape_property(title)}"
    return f"::{kind} {props}::{escape_data(message)}\n"


def write_github(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    for error in outcome.tool_errors:
        loc = error.location
        stream.write(_command("error", info.relpath(loc.path), loc.line, loc.column, "etrace-lint",
                              f"{error.message} [{error.target}]"))
    for finding in outcome.findings:
        loc = finding.location
        model = f" [{finding.target}]" if finding.target else ""
        suppressed = f" (suppressed by {finding.suppressed})" if finding.suppressed else ""
        stream.write(_command(_COMMAND[finding.level], info.relpath(loc.path), loc.line, loc.column,
                              finding.rule_id, f"{finding.message}{model}{suppressed}"))
