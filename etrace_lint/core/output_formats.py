"""The output formats a run can print, as plain data: the options table offers their names and the
writers load each one's functions by the names given here (``writers.get_writer``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OutputFormat:
    """One ``--output-format``: the module of ``etrace_lint.writers`` and the function that print it."""

    name: str
    module: str
    writer: str
    quiet_writer: str = ""  # with -q (default: the writer)
    statistics: bool = False  # --statistics prints in it: json counts as json, the others as text


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
