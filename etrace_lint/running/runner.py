"""Run the engine over many targets: cached results first, the rest in worker processes.

Nothing here imports JAX: on a tree whose results are all cached, no worker
starts at all.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Callable, Protocol, runtime_checkable

from ..config.settings import EngineSettings, RunSettings
from ..core.findings import TargetResult
from ..discovery.discover import TargetSpec
from .cache import Cache
from .programs import ProgramFolder


class Pool(Protocol):
    """What a run lints on: a :class:`~etrace_lint.running.workers.WorkerPool`, or one that stands for it."""

    @property
    def workers(self) -> Sequence[object]: ...

    def run(self, specs: list[TargetSpec], root: str, settings: EngineSettings, jobs: int, timeout: float,
            progress: Callable[[int, int, TargetSpec], None] | None = None,
            durations: dict[str, float] | None = None, *, memory_limit: int = ...) -> list[TargetResult]: ...


@runtime_checkable
class AnnouncesStart(Protocol):
    """A progress callback that is also told when workers start, and for how many targets."""

    def starting(self, count: int, preload: list[str] | tuple[str, ...] = ()) -> None: ...


def open_cache(settings: RunSettings) -> Cache | None:
    """The cache of this run's results, keyed by what the engine reads; none with ``--no-cache``."""
    if not settings.use_cache:
        return None
    directory = settings.cache_dir
    if not os.path.isabs(directory):
        directory = os.path.join(settings.root, directory)
    return Cache(directory, settings.root, settings.engine.fingerprint_data(),
                 count_only=settings.engine.scope.count_only)


def program_folder(cache: Cache | None, quiet: bool = False) -> ProgramFolder | None:
    """JAX's compiled programs beside the results, signed with the same key, so that a later run
    compiles less; none without a cache. A folder that cannot be written (a read-only checkout, a
    cache restored without write access) is said once; the pool then keeps a temporary one, so JAX
    does not warn at every compile."""
    if cache is None or cache.signing_key() is None:
        return None
    folder = os.path.join(cache.directory, "xla")
    try:
        cache.prepare()
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
        with tempfile.TemporaryFile(dir=os.path.join(cache.directory, "targets")
                                    if os.path.isdir(os.path.join(cache.directory, "targets")) else cache.directory):
            pass
    except OSError as exc:
        if not quiet:
            print(f"etrace-lint: warning: the cache folder {cache.directory} cannot be written "
                  f"({exc.strerror or exc}): results and compiled programs are not kept for the next run; make it "
                  "writable, or point --cache-dir (cache-dir in [tool.etrace-lint]) at a folder that is, or pass "
                  "--no-cache", file=sys.stderr)
        return None
    return ProgramFolder(folder, cache.signing_key())


def run_targets(specs: list[TargetSpec], settings: RunSettings,
                progress: Callable[[int, int, TargetSpec], None] | None = None,
                cache: Cache | None = None, pool: Pool | None = None) -> list[TargetResult]:
    """One result per spec, in the order of ``specs`` whatever the number of workers.

    ``pool``: a :class:`~etrace_lint.running.workers.WorkerPool` to run on and keep (the
    language server's); without one, the run starts a pool of its own and closes it.
    """
    results: dict[int, TargetResult] = {}
    stale = []
    for index, spec in enumerate(specs):
        hit = cache.get(spec) if cache is not None else None
        if hit is not None:
            results[index] = hit
        else:
            stale.append(index)
    if stale:
        from .workers import WorkerPool, default_jobs  # lazy: loads only when a run needs it

        todo = [specs[i] for i in stale]
        durations = cache.recorded_seconds(todo) if cache is not None else None
        own_pool = None
        if isinstance(progress, AnnouncesStart) and (pool is None or not pool.workers):
            progress.starting(len(todo), settings.preload)  # the first seconds are the workers' imports: say so
        if pool is None:
            pool = own_pool = WorkerPool(settings.preload, compilation_cache=program_folder(cache, settings.quiet))
        try:
            fresh = pool.run(todo, settings.root, settings.engine, settings.jobs or default_jobs(), settings.timeout,
                             progress, durations, memory_limit=settings.memory_limit)
        finally:
            if own_pool is not None:
                own_pool.close()
        for index, result in zip(stale, fresh):
            results[index] = result
            if cache is not None:
                cache.put(specs[index], result)
    return [results[i] for i in range(len(specs))]
