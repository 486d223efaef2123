"""``etrace-lint -`` (with ``--stdin-filename``): lint a buffer piped in by an editor or a wrapper.

Targets are imported from files by worker processes, so the buffer is written
to a hidden temporary file beside the file it stands for: its imports of
neighbouring modules resolve as the file's own would. Everything reported
about the temporary file is then named as the file (or ``-``), and the
temporary file is always removed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
from contextlib import contextmanager
from typing import Iterable, Iterator, TextIO

from ..core.findings import Finding, ToolError

PREFIX = ".etrace-lint-stdin-"


@dataclasses.dataclass(frozen=True)
class StdinBuffer:
    """The buffer read from stdin, where it was written for the workers, and the path it stands for."""

    text: str
    temporary: str  # absolute: the file the workers import
    shown: str  # absolute: the --stdin-filename, or "-" in the working folder

    def rename(self, text: str) -> str:
        """``text`` with every mention of the temporary file made a mention of the file it stands for."""
        text = text.replace(self.temporary, self.shown)
        return text.replace(os.path.basename(self.temporary), os.path.basename(self.shown))

    def relocate_errors(self, errors: Iterable[ToolError]) -> list[ToolError]:
        """The tool errors, about the file the buffer stands for."""
        return [ToolError.from_json(json.loads(self.rename(json.dumps(e.to_json())))) for e in errors]

    def relocate_findings(self, findings: Iterable[Finding]) -> list[Finding]:
        """The findings, about the file the buffer stands for."""
        return [Finding.from_json(json.loads(self.rename(json.dumps(f.to_json())))) for f in findings]

    def current_text(self) -> str:
        """The buffer as it is now on disk (after ``--fix`` edited it)."""
        with open(self.temporary, encoding="utf-8") as handle:
            return handle.read()


@contextmanager
def stdin_buffer(stdin_filename: str | None, stream: TextIO | None = None) -> Iterator[StdinBuffer]:
    """Read stdin and write it beside ``stdin_filename`` (else in the working folder) for the run."""
    text = (stream or sys.stdin).read()
    shown = os.path.abspath(stdin_filename) if stdin_filename else os.path.join(os.getcwd(), "-")
    folder = os.path.dirname(shown)
    suffix = "-" + (os.path.basename(shown) if stdin_filename else "stdin.py")
    suffix = suffix if suffix.endswith(".py") else suffix + ".py"
    try:
        handle, temporary = tempfile.mkstemp(prefix=PREFIX, suffix=suffix, dir=folder)
    except OSError:  # a folder we may not write in: imports of its neighbours will not resolve
        handle, temporary = tempfile.mkstemp(prefix=PREFIX, suffix=suffix)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        yield StdinBuffer(text, temporary, shown)
    finally:
        try:
            os.remove(temporary)
        except OSError:
            pass
