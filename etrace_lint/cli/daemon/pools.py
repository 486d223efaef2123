"""The daemon's warm workers: one pool, kept from run to run while its preloaded libraries and its
folder of compiled programs stay the same, and started only when a run has a model to lint (as a
direct run starts its own).

A run whose caller stops it (Ctrl-C, SIGTERM, its death) or that ``daemon stop`` ends raises
:class:`RunCancelled` in the pool's loop, as Ctrl-C raises KeyboardInterrupt there in a direct run:
the workers busy on its targets are killed, and the idle ones stay warm for the next run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Callable

from ...config.settings import EngineSettings, Settings
from ...core.findings import TargetResult
from ...discovery.discover import TargetSpec
from ...policy.scope import stage_settings
from ...running.cache_key import load_key
from ...running.memory import DEFAULT as DEFAULT_MEMORY_LIMIT
from ...running.runner import open_cache, program_folder
from ...running.workers import WorkerPool

PoolKey = tuple[tuple[str, ...], str | None]


class RunCancelled(KeyboardInterrupt):
    """The run's caller is gone or asked it to stop: it ends as Ctrl-C ends a direct run."""


class WarmPools:
    """The pool the last run used, handed to the next run whose settings need the same one.
    ``cancelled``: set while the run going on is to stop."""

    def __init__(self, cancelled: threading.Event | None = None) -> None:
        self._key: PoolKey | None = None
        self._pool: WorkerPool | None = None
        self.cancelled = cancelled or threading.Event()

    def pool_for(self, settings: Settings) -> WorkerPool:
        """A warm pool for ``settings``: the cache's folder of compiled programs (a direct run's
        warning when it cannot be written included), else a temporary one."""
        pool = self._pool
        if (pool is not None and self._key == (tuple(settings.preload), _programs(settings))
                and (pool.programs.key is None or pool.programs.key == load_key())):
            return pool  # the same folder, still writable, signed with the same key: what the checks below find
        folder = program_folder(open_cache(stage_settings(settings).run), settings.quiet)
        key = (tuple(settings.preload), folder.path if folder is not None else None)
        if self._pool is None or key != self._key:
            self.close()
            self._pool, self._key = WorkerPool(settings.preload, compilation_cache=folder), key
        return self._pool

    def __call__(self, settings: Settings) -> "LazyPool":
        return LazyPool(lambda: self.pool_for(settings), self._pool if self._key is not None else None,
                        self.cancelled)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        self._pool, self._key = None, None


def _programs(settings: Settings) -> str | None:
    """The folder of compiled programs a run with a cache keeps, while it can be written."""
    if not settings.use_cache:
        return None
    cache = settings.cache_dir if os.path.isabs(settings.cache_dir) else os.path.join(settings.root,
                                                                                     settings.cache_dir)
    folder = os.path.join(cache, "xla")
    return folder if os.access(folder, os.W_OK) and os.access(os.path.join(cache, "targets"), os.W_OK) else ""


class LazyPool:
    """What a run sees as its pool: the warm one, fetched when the run has a model to lint, so that a
    run the cache serves touches no folder and no worker. A cancelled run stops at the pool's next
    look at its progress (at least twice a second)."""

    def __init__(self, fetch: Callable[[], WorkerPool], last: WorkerPool | None,
                 cancelled: threading.Event | None = None) -> None:
        self._fetch, self._last = fetch, last
        self._cancelled = cancelled or threading.Event()

    @property
    def workers(self) -> Sequence[object]:
        return self._last.workers if self._last is not None else []

    def run(self, specs: list[TargetSpec], root: str, settings: EngineSettings, jobs: int, timeout: float,
            progress: Callable[[int, int, TargetSpec], None] | None = None,
            durations: dict[str, float] | None = None, *,
            memory_limit: int = DEFAULT_MEMORY_LIMIT) -> list[TargetResult]:
        def checked(done: int, total: int, spec: TargetSpec) -> None:
            if self._cancelled.is_set():
                raise RunCancelled()  # the pool's loop stops the workers busy on this run's targets
            if progress is not None:
                progress(done, total, spec)

        if self._cancelled.is_set():
            raise RunCancelled()
        return self._fetch().run(specs, root, settings, jobs, timeout, checked, durations, memory_limit=memory_limit)
