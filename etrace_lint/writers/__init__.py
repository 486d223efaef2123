"""Writers format an :class:`~etrace_lint.policy.decide.Outcome`; they never filter or decide.

One module per output format (text, json, sarif, github, gitlab, junit, rdjson, html);
:mod:`.properties`, which lays out a finding's SARIF and JSON properties from its typed fields; and
:mod:`.merge`, which joins the logs of a sharded run into one, reading them only through
:mod:`.own_logs` (where our outputs put each fact; nothing else reads an output back). May import: ``core``.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Callable, TextIO

from ..core.output_formats import FORMATS, OUTPUT_FORMATS, OutputFormat
from .run_info import RunInfo, relative_path
from .statistics import write_statistics_json
from .text import write_statistics

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome

# what the rest of the package imports from here: the formats' table, the facts of a run, paths as shown
__all__ = ["FORMATS", "OUTPUT_FORMATS", "RunInfo", "Writer", "get_writer", "relative_path"]


Writer = Callable[["Outcome", RunInfo, TextIO], None]


def _load(fmt: OutputFormat, quiet: bool = False) -> Writer:
    """The function that prints ``fmt``, its module imported now."""
    module = importlib.import_module(f"{__name__}.{fmt.module}")
    writer: Writer = getattr(module, (fmt.quiet_writer or fmt.writer) if quiet else fmt.writer)
    return writer


def get_writer(name: str, quiet: bool = False, statistics: bool = False) -> Writer:
    """The writer of format ``name``: ``quiet`` (``-q``) and ``statistics`` choose among text forms."""
    fmt = OUTPUT_FORMATS[name]
    if statistics:
        if name == "json":
            return write_statistics_json
        return functools.partial(write_statistics, summary=False) if quiet else write_statistics
    return _load(fmt, quiet)
