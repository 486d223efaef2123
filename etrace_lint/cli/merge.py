"""``etrace-lint merge SHARD_LOG... [-o FILE]``: one log from the logs of a sharded run.

The exit code is the one the unsharded run would have had: 2 when a target
could not be linted, 1 for findings at or above the fail level (from
``--fail-level``, else ``[tool.etrace-lint]``), else 0.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..config.pyproject import ConfigError, load_settings, search_start
from ..core.exit_codes import EXIT_ERROR
from ..core.findings import Level
from ..writers.merge import MergeError, merge_files, merged_exit_code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="etrace-lint merge",
        description="Combine the SARIF logs (or JSON outputs) of `etrace-lint --shard K/N` runs into the log "
                    "of one unsharded run.")
    parser.add_argument("logs", nargs="+", help="the output of every shard, 1/N to N/N, in any order")
    parser.add_argument("-o", "--output-file", metavar="FILE", help="write the merged log to FILE (default: stdout)")
    parser.add_argument("--fail-level", choices=("note", "warning", "error"), default=None,
                        help="lowest level that makes the merge exit 1 (as configured, else warning)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    return parser


def _fail_level(args: argparse.Namespace) -> Level:
    if args.fail_level:
        return Level.parse(args.fail_level)

    try:
        return load_settings(search_start([]), None).fail_level
    except ConfigError:
        return Level.WARNING


def main_merge(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        kind, document = merge_files(args.logs)
    except MergeError as exc:
        print(f"etrace-lint merge: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if kind == "sarif":
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        text = json.dumps(document, indent=2, sort_keys=True, default=str) + "\n"
    if args.output_file:
        with open(args.output_file, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return merged_exit_code(kind, document, _fail_level(args).rank, args.exit_zero)
