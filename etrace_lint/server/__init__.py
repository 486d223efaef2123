"""``etrace-lint server``: findings in the editor over the Language Server Protocol (stdio).

Needs the ``server`` extra (``pip install ".[server]"`` in a checkout: pygls
and lsprotocol). The same discovery, configuration, runner, cache, policy and
workers as the CLI; see ``protocol`` for the handlers, ``scheduler`` for when
a lint runs, ``trust`` for when it may run at all. May import every stage below the command
line, and the rule documentation of ``cli.docs`` (hover shows what ``etrace-lint rule`` prints).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="etrace-lint server",
        description="Run etrace-lint as a language server on stdin/stdout. A workspace's code runs only "
                    "once it is trusted: its pyproject.toml has a [tool.etrace-lint] table, or the editor "
                    "passes {\"trusted\": true} in the initialization options; a project nested in it "
                    "(its own pyproject.toml or .git) only by its own table. Files whose real path lies "
                    "outside the workspace folders are never imported.")
    parser.add_argument("--log-file", metavar="FILE", help="write the server's log to FILE (default: stderr)")
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="warning")
    args = parser.parse_args(argv)
    try:
        # pygls and lsprotocol are optional (the [server] extra): without them, the message below
        from .protocol import build_server
    except ImportError as exc:
        print(f"etrace-lint: error: the server needs pygls and lsprotocol ({exc}); "
              "install them with: pip install \"pygls>=2,<3\" \"lsprotocol>=2025.0.0\" "
              "(or, in a checkout of etrace-lint: pip install \".[server]\")", file=sys.stderr)
        return 2
    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(level=args.log_level.upper(), handlers=[handler],
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.log_level != "debug":  # pygls logs every message it sends at info
        logging.getLogger("pygls").setLevel(logging.WARNING)
    # The protocol owns the real stdout. Whatever else writes to file descriptor 1 (a print in
    # this process, a worker started before it redirects its own) goes to stderr instead.
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    server = build_server()
    try:
        server.start_io(stdin=sys.stdin.buffer, stdout=protocol_out)
    finally:
        server.close()
    return 0
