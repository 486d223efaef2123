"""The daemon's address for a command line, read without the settings: a run that the daemon serves
then starts in a fraction of the time it takes to load the options table, the rules and the writers.

Only a plain command line is read here: files, folders and the flags below. Anything else (a flag
that decides whether a daemon may serve the run, an abbreviated or unknown flag, ``--``) returns
None, and the run reads its settings in full before it decides. The lists of flags are checked
against the options table by the tests.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass

from ...config.search import nearest, search_start

DEFAULT_IDLE_TIMEOUT = 300.0  # daemon-idle-timeout's default in the options table
# flags that take a value
VALUE_FLAGS = frozenset({
    "--output-format", "--sarif", "-o", "--output-file", "--color", "--docs-url", "--select", "--extend-select",
    "--ignore", "--fail-level", "--exclude", "--extend-exclude", "--baseline", "--write-baseline", "--verify-steps",
    "--verify-batch", "--verify-algorithms", "--verify-seed", "--verify-cosine-floor", "--device", "--algorithms",
    "--steps", "--batch-size", "--memory-budget", "-j", "--jobs", "--timeout", "--memory-limit", "--cache-dir",
    "--environ", "--shard", "--drop-env",
})
# flags that take none
SWITCHES = frozenset({
    "-q", "--quiet", "--statistics", "--show-info", "--show-flows", "--exit-zero", "--include-suppressed",
    "--check-online-grad", "--probe", "--no-probe", "--verify", "--advise", "--fix", "--unsafe-fixes", "--diff",
    "--debug", "--no-cache", "--show-fixes", "--fix-only", "-v", "--verbose", "-s", "--silent",
})
# flags that decide where the settings come from, or whether a daemon serves the run at all
READ_IN_FULL = frozenset({
    "--daemon", "--no-daemon", "--daemon-idle-timeout", "--config", "--isolated", "--root", "--stdin-filename",
    "-w", "--watch", "--list-targets", "--show-settings", "-h", "--help", "--version",
})


@dataclass(frozen=True)
class Address:
    """What names a project's daemon, and what the command line tells it besides the arguments."""

    project: str  # the configuration file's folder, else the run's root
    config_file: str | None
    idle_timeout: float
    asked: bool  # the configuration turns the daemon on by name (it then serves runs in CI too)
    enabled: bool = True


def paths_of(argv: Sequence[str]) -> list[str] | None:
    """The paths a plain command line names (``["."]`` when none), or None when it is not plain."""
    paths: list[str] = []
    tokens = iter(argv)
    for token in tokens:
        if token == "-" or token == "--":
            return None
        if not token.startswith("-"):
            paths.append(token)
            continue
        name, has_value = token.split("=", 1)[0], "=" in token
        if name in VALUE_FLAGS:
            if not has_value and next(tokens, None) is None:
                return None
        elif name not in SWITCHES or has_value:
            return None
    return paths or ["."]


def _our_table(path: str) -> dict[str, object] | None:
    """``[tool.etrace-lint]`` of ``path``; a file that is not TOML raises ValueError (a full read reports it)."""
    with open(path, "rb") as handle:
        document = tomllib.load(handle)
    tool = document.get("tool")
    if tool is None:
        return None
    table = tool.get("etrace-lint") if isinstance(tool, dict) else "not a table"
    if table is not None and not isinstance(table, dict):
        raise ValueError(f"{path}: [tool.etrace-lint] is not a table")
    return table


def find_table(start: str) -> tuple[str, dict[str, object]] | None:
    """As ``config.pyproject.find_config``: the nearest pyproject.toml with the table."""
    return nearest(start, _our_table)


def address_of(argv: Sequence[str], default_idle_timeout: float) -> Address | None:
    """The daemon's address for a plain command line, or None when the settings must be read in full."""
    paths = paths_of(argv)
    if paths is None:
        return None
    try:
        found = find_table(search_start(paths))
    except (OSError, ValueError):
        return None
    if found is None:
        return Address(os.getcwd(), None, default_idle_timeout, asked=False)
    path, table = found
    daemon = table.get("daemon", True)
    idle = table.get("daemon-idle-timeout", default_idle_timeout)
    if not isinstance(daemon, bool) or isinstance(idle, bool) or not isinstance(idle, (int, float)) or idle <= 0:
        return None
    return Address(os.path.dirname(path), path, float(idle), asked="daemon" in table, enabled=daemon)
