"""Writers format an :class:`~etrace_lint.policy.Outcome`; they never filter or decide."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, TextIO


@dataclass
class RunInfo:
    """Facts about the run that writers may print."""

    root: str
    command_line: list[str] = field(default_factory=list)
    targets: int = 0
    files_seen: int = 0
    files_without_targets: int = 0
    start_time: str = ""
    end_time: str = ""
    versions: dict = field(default_factory=dict)
    device: str = ""
    color: bool = False
    show_info: bool = False
    summaries: list = field(default_factory=list)  # extra per-target tables (verify)
    verify_rows: list = field(default_factory=list)  # per-weight --verify results

    def relpath(self, path: str) -> str:
        """Forward-slash path relative to the root; paths outside it stay as given."""
        try:
            rel = os.path.relpath(path, self.root)
        except ValueError:
            return path.replace(os.sep, "/")
        if rel.startswith(".."):
            return path.replace(os.sep, "/")
        return rel.replace(os.sep, "/")


Writer = Callable[["object", RunInfo, TextIO], None]


def get_writer(name: str) -> Writer:
    if name == "text":
        from .text import write_text
        return write_text
    if name == "json":
        from .json_writer import write_json
        return write_json
    if name == "sarif":
        from .sarif import write_sarif
        return write_sarif
    if name == "github":
        from .github import write_github
        return write_github
    raise KeyError(name)


FORMATS = ("text", "json", "sarif", "github")
