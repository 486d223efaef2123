"""The digest of what a run's answer depends on besides its command line and its files.

A daemon answers only runs whose digest is its own (the digest is in its
socket's name): a changed ``[tool.etrace-lint]`` file, environment,
installed package, interpreter or etrace-lint (its version, or an edit to its
code or rules) makes a fresh daemon. Reading it costs a few hundred ``stat``
calls, no import.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from typing import Iterable, Mapping

from ... import __version__

# Set afresh by the shell, git or pre-commit for each command, and read by no lint: they do not start a
# fresh daemon (its parent process runs each request under the caller's own values; its workers keep
# those of its first request). git gives a commit's hooks its date, and a per-commit index
# (``next-index-PID.lock``) when the commit names its files; pre-commit gives a push's hooks its refs.
# The command line's own ways to reach a daemon (its folder, how long it waits) are not the run's either.
VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "GIT_INDEX_FILE", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE",
                      "PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "PRE_COMMIT_ORIGIN", "PRE_COMMIT_SOURCE",
                      "ETRACE_LINT_DAEMON_DIR", "ETRACE_LINT_DAEMON_TIMEOUT"})
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def environment_items(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """The variables that belong in the digest, sorted."""
    return sorted((name, value) for name, value in environ.items() if name not in VOLATILE)


def _stamps(folder: str, suffixes: tuple[str, ...]) -> Iterable[str]:
    """Each file's path, size and modification time under ``folder``."""
    for top, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(files):
            if name.endswith(suffixes):
                try:
                    info = os.stat(os.path.join(top, name))
                except OSError:
                    continue
                yield f"{os.path.join(top, name)} {info.st_size} {info.st_mtime_ns}"


def installed_packages(path: Iterable[str]) -> list[str]:
    """Each distribution and ``.pth`` file on ``sys.path``, with its time: an install, upgrade or
    removal changes it."""
    entries = []
    for folder in path:
        try:
            with os.scandir(folder or ".") as found:
                for entry in found:
                    if entry.name.endswith((".dist-info", ".egg-info", ".pth", ".egg-link")):
                        entries.append(f"{folder}/{entry.name} {entry.stat().st_mtime_ns}")
        except OSError:
            continue
    return sorted(entries)


def own_code() -> list[str]:
    """etrace-lint's version and the times of its modules and rules (an edit in a checkout counts)."""
    spec = importlib.util.find_spec("etrace_lint.rules")  # a checkout keeps them in rules/, beside the package
    rules = list(spec.submodule_search_locations or ()) if spec is not None else []
    return [__version__, *_stamps(_PACKAGE, (".py",)),
            *(stamp for folder in rules for stamp in _stamps(folder, (".py", ".md")))]


def digest(config_file: str | None, environ: Mapping[str, str]) -> str:
    """The digest of the configuration file's bytes, the environment, the interpreter, the installed
    packages and etrace-lint itself."""
    config = b""
    if config_file is not None:
        try:
            with open(config_file, "rb") as handle:
                config = handle.read()
        except OSError:
            config = b"unreadable"
    parts = {
        "config": [config_file or "", hashlib.sha256(config).hexdigest()],
        "environ": environment_items(environ),
        "python": [os.path.realpath(sys.executable), sys.version, sys.prefix],
        "packages": installed_packages(sys.path),
        "etrace-lint": own_code(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
