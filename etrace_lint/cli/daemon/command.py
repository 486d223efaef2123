"""``etrace-lint daemon status|stop``: the background process of the project in the current folder
(or of ``--project DIR``)."""

from __future__ import annotations

import argparse
import os
import sys
import time

from ...core.json_types import JsonValue
from ...running.children import is_alive
from ..arguments import UsageError, build_parser, resolve_settings
from .client import place_of, request_status, request_stop
from .place import Place
from .quick import Address

EXIT_RUNNING, EXIT_NONE = 0, 1
STOP_LIMIT = 30.0  # seconds stop waits for a daemon to end: its run cancelled, its workers stopped


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="etrace-lint daemon",
        description="The background process that serves `etrace-lint PATHS` for a project with warm workers: "
                    "started by the first run, it ends after daemon-idle-timeout seconds without a run. "
                    "A run stopped by Ctrl-C, SIGTERM or its process's death is stopped in the daemon too, "
                    "its busy workers killed. stop cancels the run it serves and returns once the daemon "
                    "and its workers have ended. status exits 0 when one runs, 1 when none does.")
    parser.add_argument("action", choices=("status", "stop"))
    parser.add_argument("--project", metavar="DIR", default=".",
                        help="the project's folder, or a path inside it (default: the current folder)")
    return parser


def _duration(value: JsonValue) -> str:
    """A number of seconds from a daemon's status, in words."""
    seconds = int(value) if isinstance(value, (int, float)) else 0
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds // 60 % 60} min"


def _place(project: str) -> Place:
    """The place of the daemon a run of ``project`` would use: the same settings, read the same way."""
    settings, _ = resolve_settings(build_parser().parse_args([project]))
    project_folder = os.path.dirname(settings.config_file) if settings.config_file else settings.root
    return place_of(Address(project_folder, settings.config_file, settings.daemon_idle_timeout, asked=False),
                    os.environ)


def _ended(pid: int, within: float) -> bool:
    """Wait until process ``pid`` has ended (its workers stopped before it does)."""
    deadline = time.monotonic() + within
    while is_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def main_daemon(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        place = _place(args.project)
    except UsageError as exc:
        print(f"etrace-lint: error: {exc}", file=sys.stderr)
        return 2
    found = [(path, request_status(path)) for path in place.siblings()]
    live = [(path, status) for path, status in found if status is not None]
    if args.action == "stop":
        stopped = [request_stop(path, cancel=True) for path, _ in live]
        for answer in stopped:
            if answer is not None:
                pid = answer.get("pid")
                if isinstance(pid, int) and not _ended(pid, STOP_LIMIT):
                    print(f"etrace-lint: the daemon of {place.project} (pid {pid}) did not end within "
                          f"{STOP_LIMIT:g} s", file=sys.stderr)
                    continue
                print(f"etrace-lint: stopped the daemon of {place.project} (pid {pid})")
        for path, status in found:
            if status is None:
                request_stop(path)  # a socket left behind: removed
        if not any(stopped):
            print(f"etrace-lint: no daemon runs for {place.project}")
        return 0
    if not live:
        print(f"etrace-lint: no daemon runs for {place.project}")
        return EXIT_NONE
    for path, status in live:
        current = "" if path == place.socket else " (of an older configuration or environment: the next run "\
                                                  "replaces it)"
        print(f"etrace-lint: daemon of {place.project}: pid {status.get('pid')}, running "
              f"{_duration(status.get('age'))}, idle {_duration(status.get('idle'))} "
              f"(ends after {_duration(status.get('idle_timeout'))} idle), "
              f"{status.get('runs', 0)} runs served{current}; socket {path}")
    return EXIT_RUNNING
