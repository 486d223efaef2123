"""The server's two lanes: a thread each, with warm workers of its own.

A save's static pass (every rule but the probe's) runs in the static lane and
is published at once; the probe's pass runs in the probe lane, as do
``--verify`` commands. A save that comes while a probe's pass measures the
previous one is therefore answered in the time of its static pass, not after
that probe's pass (measured in bench/bench_server.py).

Everything that touches a lane's pool runs in that lane's thread: a
``WorkerPool`` serves one run at a time.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

from ..config.settings import Settings
from ..running.cache import pin_versions
from ..running.workers import WorkerPool

log = logging.getLogger(__name__)

T = TypeVar("T")


class Lane:
    """A thread that runs one thing at a time, and the warm workers its lints run on."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"etrace-lint-{name}")
        self.pool: WorkerPool | None = None

    async def call(self, function: Callable[..., T], *args: object) -> T:
        """``function(*args)`` in this lane's thread, after what the lane runs now."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, function, *args)

    def start(self, settings: Iterable[Settings]) -> None:
        """Start the warm workers in the lane's thread, once a workspace may run code (``settings``: those of
        the trusted, configured folders): the first save then pays no start-up."""
        first = next(iter(settings), None)
        if first is not None:
            self.executor.submit(self._start, first)

    def _start(self, settings: Settings) -> None:
        if self.pool is not None:
            return
        # the cache's key names the versions of what the workers run, which the fork server imports now: read
        # them once, as the daemon does, instead of reading every package's metadata and stat-ing each of
        # etrace-lint's own files for each cache a save opens (two or three per save, most of the server's
        # own share of a save's time)
        pin_versions()
        self.pool = WorkerPool(preload=settings.preload, warn=lambda text: log.warning("%s", text))
        self.pool.warm()  # the fork server imports JAX, brainstate and braintrace now, not on the first save

    def close(self) -> None:
        """Stop the workers in the lane's thread, once the run there has stopped, then the thread."""

        def close_pool() -> None:
            pool, self.pool = self.pool, None
            if pool is not None:
                pool.close()

        try:
            self.executor.submit(close_pool).result(timeout=30)
        except Exception:
            log.exception("the %s lane's workers did not stop", self.name)
        self.executor.shutdown(wait=False, cancel_futures=True)
