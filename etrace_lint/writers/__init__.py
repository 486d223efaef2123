"""Writers format an :class:`~etrace_lint.policy.Outcome`; they never filter or decide."""

from __future__ import annotations

import functools
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
    device: str = ""
    color: bool = False
    targets_failed: int = 0  # of ``targets``, those that could not be linted
    verify_rows: list = field(default_factory=list)  # per-weight --verify results
    shard: dict | None = None  # --shard: which part of the targets this run linted (see merge.py)
    show_flows: bool = False  # --show-flows: each finding's route under it in the text output
    fixes: dict | None = None  # --fix: {"applied": n, "remaining": m}; None when not fixing

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


def get_writer(name: str, quiet: bool = False, statistics: bool = False) -> Writer:
    """The writer of format ``name``: ``quiet`` (``-q``) and ``statistics`` choose among text forms."""
    if statistics:
        from .statistics import write_statistics_json
        from .text import write_statistics
        if name == "json":
            return write_statistics_json
        return functools.partial(write_statistics, summary=False) if quiet else write_statistics
    if name in ("text", "concise"):
        from .text import write_concise, write_text, write_text_quiet
        return write_text_quiet if quiet else write_text if name == "text" else write_concise
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


FORMATS = ("text", "concise", "json", "sarif", "github")
