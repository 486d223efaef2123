"""The facts about a run that every writer may print, and paths as the outputs show them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..core.json_types import JsonObject
from ..core.rule import DOCS_URL


def relative_path(path: str, root: str) -> str:
    """Forward-slash path relative to ``root``; paths outside it stay as given."""
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return path.replace(os.sep, "/")
    if rel.startswith(".."):
        return path.replace(os.sep, "/")
    return rel.replace(os.sep, "/")


@dataclass(frozen=True)
class RunInfo:
    """Facts about the run that writers may print, gathered once the run's stages are done."""

    root: str
    targets: int = 0
    files_seen: int = 0
    files_without_targets: int = 0
    start_time: str = ""
    end_time: str = ""
    device: str = ""
    color: bool = False
    targets_failed: int = 0  # of ``targets``, those that could not be linted
    verify_rows: list[JsonObject] = field(default_factory=list)  # per-weight --verify results
    advice_rows: list[JsonObject] = field(default_factory=list)  # per-algorithm --advise rows
    shard: dict[str, object] | None = None  # --shard: which part of the targets this run linted (see merge.py)
    show_flows: bool = False  # --show-flows: each finding's route under it in the text output
    fixes: dict[str, int] | None = None  # --fix: {"applied": n, "remaining": m}; None when not fixing
    unsafe_fixes: bool = False  # --unsafe-fixes: unsafe fixes count as fixable with --fix
    docs_url: str = DOCS_URL  # docs-url: where the rules' pages are (SARIF's helpUri)

    def relpath(self, path: str) -> str:
        """Forward-slash path relative to the root; paths outside it stay as given."""
        return relative_path(path, self.root)
