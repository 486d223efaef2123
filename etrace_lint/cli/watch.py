"""``--watch``: lint, then lint again whenever a Python file or a pyproject.toml under the paths changes.

One pool of workers lives as long as the watch: its fork server has imported
JAX, brainstate and braintrace once, so a change costs only the targets it
touches; the cache answers for every file that did not change. A change to a
pyproject.toml reads the configuration again. File events come from
watchfiles (the watcher of uvicorn and ruff's own test tooling: native
notifications, debounced, with a Python-file filter).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Callable

from watchfiles import Change, PythonFilter
from watchfiles import watch as changes_under

from ..config.settings import Settings
from ..policy.scope import stage_settings
from ..running.runner import open_cache, program_folder
from ..running.workers import WorkerPool
from .app import run

CONFIG_NAMES = ("pyproject.toml",)


def watched_folders(settings: Settings) -> list[str]:
    """The folders to watch: each path given (a file's folder), and the configuration's folder."""
    folders = []
    for path in settings.paths:
        path = os.path.abspath(path.split("::", 1)[0])
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        if os.path.isdir(folder):
            folders.append(folder)
    if settings.config_file:
        folders.append(os.path.dirname(settings.config_file))
    # a folder inside another one is watched through it
    folders = sorted(set(folders))
    return [f for f in folders if not any(f != o and f.startswith(o.rstrip(os.sep) + os.sep) for o in folders)]


def _relevant(settings: Settings) -> Callable[[Change, str], bool]:
    python = PythonFilter()
    cache = os.path.abspath(settings.cache_dir if os.path.isabs(settings.cache_dir)
                            else os.path.join(settings.root, settings.cache_dir))

    def relevant(change: Change, path: str) -> bool:
        if path.startswith(cache + os.sep) or os.path.basename(path).startswith(".etrace-lint-stdin-"):
            return False
        return os.path.basename(path) in CONFIG_NAMES or python(change, path)

    return relevant


def watch(settings: Settings, reload: Callable[[], Settings] | None = None,
          stop_event: threading.Event | None = None) -> int:
    """Lint now and after every change, until interrupted; returns the exit code of the last run.

    ``reload`` reads the configuration again (after a pyproject.toml changed);
    ``stop_event`` (a threading.Event) ends the watch, for callers that embed it.
    """

    pool = WorkerPool(settings.preload, compilation_cache=program_folder(open_cache(stage_settings(settings).run)))
    try:
        code = run(settings, pool=pool)
        waiting = False
        # an empty set every half second: the first one says the watcher is in place, so a change
        # made after "watching" is seen
        for changes in changes_under(*watched_folders(settings), watch_filter=_relevant(settings),
                                     stop_event=stop_event, raise_interrupt=False, rust_timeout=500,
                                     yield_on_timeout=True):
            if not changes:
                if not waiting:
                    _say(settings, "watching for changes (Ctrl-C stops)")
                    waiting = True
                continue
            waiting = False
            names = sorted({os.path.relpath(path) for _, path in changes})
            _say(settings, f"{len(names)} file{'s' if len(names) != 1 else ''} changed "
                           f"({', '.join(names[:3])}{', ...' if len(names) > 3 else ''}): linting again")
            if reload is not None and any(os.path.basename(name) in CONFIG_NAMES for name in names):
                try:
                    settings = reload()
                except Exception as exc:  # a configuration being edited: keep the last good one
                    _say(settings, f"configuration not read again: {exc}")
            code = run(settings, pool=pool)
        return code
    finally:
        pool.close()


def _say(settings: Settings, message: str) -> None:
    sys.stdout.flush()  # the report before the line that says the run is over, also through a pipe
    if not settings.quiet:
        print(f"etrace-lint: {message}", file=sys.stderr, flush=True)
