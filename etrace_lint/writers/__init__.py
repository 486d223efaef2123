"""Writers format an :class:`~etrace_lint.policy.decide.Outcome`; they never filter or decide.

One module per output format (text, json, sarif, github, gitlab, junit, rdjson, html);
:mod:`.properties`, which lays out a finding's SARIF and JSON properties from its typed fields; and
:mod:`.merge`, which joins the logs of a sharded run into one, reading them only through
:mod:`.own_logs` (where our outputs put each fact; nothing else reads an output back). May import: ``core``.
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, TextIO

from ..core.rule import DOCS_URL

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome


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
    verify_rows: list[dict[str, Any]] = field(default_factory=list)  # per-weight --verify results
    advice_rows: list[dict[str, Any]] = field(default_factory=list)  # per-algorithm --advise rows
    shard: dict[str, object] | None = None  # --shard: which part of the targets this run linted (see merge.py)
    show_flows: bool = False  # --show-flows: each finding's route under it in the text output
    fixes: dict[str, int] | None = None  # --fix: {"applied": n, "remaining": m}; None when not fixing
    unsafe_fixes: bool = False  # --unsafe-fixes: unsafe fixes count as fixable with --fix
    docs_url: str = DOCS_URL  # docs-url: where the rules' pages are (SARIF's helpUri)

    def relpath(self, path: str) -> str:
        """Forward-slash path relative to the root; paths outside it stay as given."""
        return relative_path(path, self.root)


Writer = Callable[["Outcome", RunInfo, TextIO], None]


@dataclass(frozen=True)
class OutputFormat:
    """One ``--output-format``: the writer that prints it, by module and function, imported when used."""

    name: str
    module: str
    writer: str
    quiet_writer: str = ""  # with -q (default: the writer)
    statistics: bool = False  # --statistics prints in it: json counts as json, the others as text

    def load(self, quiet: bool = False) -> Writer:
        module = importlib.import_module(f"{__name__}.{self.module}")
        writer: Writer = getattr(module, (self.quiet_writer or self.writer) if quiet else self.writer)
        return writer


# the formats --output-format offers, in the order --help lists them
OUTPUT_FORMATS = {fmt.name: fmt for fmt in (
    OutputFormat("text", "text", "write_text", quiet_writer="write_text_quiet", statistics=True),
    OutputFormat("concise", "text", "write_concise", quiet_writer="write_text_quiet", statistics=True),
    OutputFormat("json", "json_writer", "write_json", statistics=True),
    OutputFormat("sarif", "sarif", "write_sarif"),
    OutputFormat("github", "github", "write_github"),
    OutputFormat("json-lines", "json_writer", "write_json_lines"),
    OutputFormat("junit", "junit", "write_junit"),
    OutputFormat("gitlab", "gitlab", "write_gitlab"),
    OutputFormat("rdjson", "rdjson", "write_rdjson"),
    OutputFormat("html", "html", "write_html"),
)}
FORMATS = tuple(OUTPUT_FORMATS)


def get_writer(name: str, quiet: bool = False, statistics: bool = False) -> Writer:
    """The writer of format ``name``: ``quiet`` (``-q``) and ``statistics`` choose among text forms."""
    fmt = OUTPUT_FORMATS[name]
    if statistics:
        from .statistics import write_statistics_json  # a module it imports imports this one
        from .text import write_statistics  # a module it imports imports this one
        if name == "json":
            return write_statistics_json
        return functools.partial(write_statistics, summary=False) if quiet else write_statistics
    return fmt.load(quiet)
