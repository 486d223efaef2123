"""Worker processes that lint targets in parallel, isolated from each other's files.

A :class:`WorkerPool` keeps its workers between runs (the language server
holds one for its whole life; the command line uses one per run). Workers are
forked from a warm fork server (:mod:`.zygote`) where the platform allows it,
else spawned, each importing JAX once (``spawn`` is the fallback because
forking a process whose JAX backend runs is unsafe).

Scheduling (:mod:`.schedule`): the targets of one file run on one worker, one
after the other (the file is imported once); files are taken longest first
when the cache knows their times, else each worker works through its own
stretch of neighbouring files. Before a worker
starts on another file it drops the modules the last one imported
(:mod:`.isolation`). After each result a worker says whether the target left
its process changed (:mod:`.process_state`); such a worker is retired and
the next target, or the rest of its file, goes to a fresh fork. A run ends
with its last result: a worker's check that is still on its way is read by
the next run, before that worker gets a target.

A target that holds more memory than the run's limit (:mod:`.memory`) is
stopped like one that overruns the timeout.

A target that runs past the timeout, or that kills its worker (a segfault,
``os._exit``, running out of memory), becomes a tool error about that
target; the worker is replaced, the rest of its file goes to another worker,
and every other target is still linted.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnContext
from multiprocessing.process import BaseProcess
from typing import Callable, Never, Sequence, TypeAlias

from ..config.settings import EngineSettings
from ..core.findings import TargetResult
from ..discovery.discover import TargetSpec
from . import worker_start, zygote
from .memory import DEFAULT as DEFAULT_MEMORY_LIMIT
from .memory import format_size, resident
from .messages import (
    Checked,
    Exited,
    Fork,
    Forked,
    ForkServerMessage,
    Lint,
    Linted,
    Ready,
    Unsafe,
    WorkerMessage,
    tool_error,
)
from .programs import ProgramFolder
from .schedule import Scaling, Schedule

# Starting the fork server or a spawned worker imports JAX, brainstate and
# braintrace; on a loaded machine that can take a while, but a worker that
# never gets ready must not hang the run.
STARTUP_LIMIT = 180.0
_POLL = 0.5  # how often the progress line is refreshed while waiting
_MEMORY_POLL = 0.05  # how often a busy worker's memory is read, under a memory limit

# what a run waits on: a pipe it receives from, or a spawned process's sentinel
Waitable: TypeAlias = "Connection[Never, object] | int"


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _crash_message(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (out of memory?)" if name == "SIGKILL" else ""
        return f"linting crashed the worker process with {name}{hint}; the model or a library it calls died"
    if exitcode is None:
        return "linting ended the worker process"
    return f"linting ended the worker process (exit code {exitcode})"


class _Worker:
    """The parent's handle on one worker: its pipe, and the targets of the file it is on."""

    def __init__(self, conn: Connection[Lint | None, WorkerMessage], pid: int | None = None,
                 process: BaseProcess | None = None) -> None:
        self.conn = conn
        self.pid = pid
        self.process = process  # spawned workers only; forked ones belong to the fork server
        self.ready = False
        self.born = time.monotonic()
        self.index: int | None = None
        self.checking = False  # its last target's result is in, the check of its process not yet
        self.started = 0.0
        self.queue: list[int] = []  # the rest of this worker's file
        self.exitcode: int | None = None

    @property
    def waitables(self) -> Sequence[Waitable]:
        return [self.conn] + ([self.process.sentinel] if self.process is not None else [])

    def give(self, index: int, spec: TargetSpec, root: str, settings: EngineSettings, new_group: bool) -> None:
        self.index, self.started = index, time.monotonic()
        self.conn.send(Lint(index, spec, root, settings, new_group, more_in_file=bool(self.queue)))

    def deadline(self, timeout: float) -> float:
        return self.started + timeout if self.index is not None or self.checking else self.born + STARTUP_LIMIT

    def alive(self) -> bool:
        if self.process is not None:
            return self.process.is_alive()
        return self.exitcode is None

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
        elif self.pid is not None:
            try:  # with what the target started in the worker's own process group
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except OSError:
                    pass

    def stop(self, force: bool = False) -> None:
        if not force:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                force = True
        if force:
            self.kill()
        if self.process is not None:
            self.process.join(timeout=5)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(timeout=5)
        self.conn.close()


class _ForkServer:
    """The parent's handle on the fork server (:mod:`.zygote`)."""

    def __init__(self, context: SpawnContext, preload: list[str], compilation_cache: str | None) -> None:
        self.conn: Connection[Fork | None, ForkServerMessage]
        self.conn, child = context.Pipe()
        self.process = context.Process(target=zygote.serve_forks, args=(child, list(preload), compilation_cache),
                                       daemon=True, name="etrace-lint-fork-server")
        self.process.start()
        child.close()
        self.ready = False
        self.unsafe: str | None = None
        self.exits: dict[int, int] = {}

    def wait_ready(self) -> bool:
        """Block until the server has imported its modules; False when it cannot fork safely."""
        deadline = time.monotonic() + STARTUP_LIMIT
        while not self.ready and self.unsafe is None:
            if not self.conn.poll(max(0.0, deadline - time.monotonic())):
                self.unsafe = "did not start in time"
                break
            self.receive()
        return self.ready

    def receive(self) -> ForkServerMessage | None:
        try:
            message: ForkServerMessage = self.conn.recv()
        except (EOFError, OSError):
            self.ready, self.unsafe = False, self.unsafe or "stopped"
            return None
        if isinstance(message, Ready):
            self.ready = True
        elif isinstance(message, Unsafe):
            self.unsafe = message.module or "the backend started"
        elif isinstance(message, Exited):
            self.exits[message.pid] = message.code
        return message

    def fork(self, context: SpawnContext) -> _Worker:
        parent_end, child_end = context.Pipe()
        self.conn.send(Fork(child_end))
        child_end.close()
        while True:
            message = self.receive()
            if message is None:
                raise OSError("the fork server stopped")
            if isinstance(message, Forked):
                return _Worker(parent_end, pid=message.pid)

    def close(self) -> None:
        if not self.ready:  # importing still (it forked no worker), or ended: it would read no message
            self.process.kill()
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


class WorkerPool:
    """Warm worker processes, kept between runs until :meth:`close`.

    ``preload`` names libraries (``brainpy``, ...) the fork server imports
    for every worker; one whose import starts JAX's backend cannot be
    preloaded and is left to the workers, with a warning.
    ``compilation_cache``: the folder where the workers keep the programs XLA
    compiled for them (JAX's persistent compilation cache), whose unsigned
    programs are removed before any worker starts (:mod:`.programs`); without
    one, a temporary folder lives as long as the pool.
    """

    def __init__(self, preload: list[str] | tuple[str, ...] = (), start_method: str | None = None,
                 warn: Callable[[str], None] | None = None, compilation_cache: ProgramFolder | None = None):
        self.preload = list(preload)
        self._own_compilation_cache = compilation_cache is None
        self.programs = compilation_cache or ProgramFolder(tempfile.mkdtemp(prefix="etrace-lint-xla-"))
        self.programs.admit()
        self.start_method = start_method or ("fork" if _can_fork() else "spawn")
        self.warn = warn or (lambda text: print(f"etrace-lint: warning: {text}", file=sys.stderr))
        self._context = multiprocessing.get_context("spawn")
        self._server: _ForkServer | None = None
        self.workers: list[_Worker] = []

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- starting workers -------------------------------------------------

    def _fork_server(self) -> _ForkServer | None:
        while self.start_method == "fork" and (self._server is None or not self._server.ready):
            if self._server is not None:
                self._server.close()
            self._server = _ForkServer(self._context, self.preload, self.programs.path)
            if self._server.wait_ready():
                break
            unsafe = self._server.unsafe
            if unsafe in self.preload:
                self.warn(f"preload: importing {unsafe!r} starts JAX's backend, so it cannot be preloaded into "
                          "the fork server; each worker imports it when a model needs it")
                self.preload.remove(unsafe)
                continue
            self.warn(f"workers cannot be forked ({unsafe}); starting each worker afresh instead")
            self._server.close()
            self._server = None
            self.start_method = "spawn"
        return self._server

    def _start_worker(self) -> _Worker:
        server = self._fork_server()
        if server is not None:
            try:
                return server.fork(self._context)
            except OSError:
                self._server = None
                return self._start_worker()
        parent_end, child_end = self._context.Pipe()
        process = self._context.Process(target=worker_start.spawned_main,
                                        args=(child_end, self.preload, self.programs.path),
                                        daemon=True, name="etrace-lint-worker")
        process.start()
        child_end.close()
        return _Worker(parent_end, process=process)

    def add_worker(self) -> _Worker:
        """Start one more worker (forked, else spawned); it says when it is ready."""
        worker = self._start_worker()
        self.workers.append(worker)
        return worker

    def waitables(self) -> list[Waitable]:
        """What a run waits on: each worker's pipe (and process), and the fork server's pipe."""
        waitables: list[Waitable] = [x for w in self.workers for x in w.waitables]
        if self._server is not None:
            waitables.append(self._server.conn)
        return waitables

    def note_exits(self) -> None:
        """Take in the fork server's news of forked workers that ended (their exit codes)."""
        if self._server is None:
            return
        while self._server.conn.poll(0):
            if self._server.receive() is None:
                break
        for worker in self.workers:
            if worker.pid in self._server.exits:
                worker.exitcode = self._server.exits.pop(worker.pid)

    def exitcode(self, worker: _Worker) -> int | None:
        """The exit code of a worker that ended (None: not known within a moment)."""
        if worker.process is not None:
            worker.process.join(timeout=1)
            return worker.process.exitcode
        deadline = time.monotonic() + 2.0  # the fork server reaps its children every 0.2 s
        while worker.exitcode is None and time.monotonic() < deadline and self._server is not None:
            if self._server.conn.poll(0.1):
                self._server.receive()
                worker.exitcode = self._server.exits.pop(worker.pid, None) if worker.pid is not None else None
        return worker.exitcode

    def warm(self) -> None:
        """Start the fork server and one worker now, so that the first run does not wait for imports."""
        if not self.workers:
            self.add_worker()

    def stop_busy(self) -> None:
        """Stop the workers in the middle of a target (their file's modules are in an unknown state)."""
        for worker in [w for w in self.workers if w.index is not None or w.queue or not w.ready]:
            worker.stop(force=True)
            self.workers.remove(worker)

    def close(self) -> None:
        for worker in self.workers:
            worker.stop(force=worker.index is not None or not worker.ready)
        self.workers = []
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._own_compilation_cache:
            shutil.rmtree(self.programs.path, ignore_errors=True)

    # -- a run ------------------------------------------------------------

    def run(self, specs: list[TargetSpec], root: str, settings: EngineSettings, jobs: int, timeout: float,
            progress: Callable[[int, int, TargetSpec], None] | None = None,
            durations: dict[str, float] | None = None, memory_limit: int = DEFAULT_MEMORY_LIMIT
            ) -> list[TargetResult]:
        """Lint ``specs`` on up to ``jobs`` workers; results come back in the order of ``specs``.
        ``memory_limit``: bytes a worker may hold while it lints a target (0: no limit; :mod:`.memory`)."""
        started = time.time_ns() - 1_000_000_000  # a file's time stamp may lag the clock a little
        try:
            return _Run(self, specs, root, settings, jobs, timeout, progress, durations, memory_limit).run()
        finally:
            self.programs.keep(since_ns=started)


class _Run:
    def __init__(self, pool: WorkerPool, specs: list[TargetSpec], root: str, settings: EngineSettings, jobs: int,
                 timeout: float, progress: Callable[[int, int, TargetSpec], None] | None,
                 durations: dict[str, float] | None, memory_limit: int) -> None:
        self.pool, self.specs, self.root = pool, specs, os.path.abspath(root)
        self.settings, self.timeout, self.progress = settings, timeout, progress
        self.memory_limit = memory_limit
        self.results: list[TargetResult | None] = [None] * len(specs)
        self.most = max(1, min(jobs, len({spec.path for spec in specs})))
        self.schedule = Schedule(specs, self.most, durations)
        self.scaling = Scaling()
        self.done = 0
        self.current = specs[0] if specs else None

    def finish(self, index: int, result: TargetResult) -> None:
        self.results[index] = result
        self.done += 1

    def pending(self) -> int:
        return len(self.schedule) + sum(1 for w in self.pool.workers if w.queue)

    def assign(self) -> None:
        for worker in self.pool.workers:
            if not worker.ready or worker.index is not None or worker.checking:
                continue
            new_group = not worker.queue
            if new_group:
                group = self.schedule.next_group(worker, alive=set(self.pool.workers))
                if group is None:
                    continue
                worker.queue = list(group)
            index = worker.queue.pop(0)
            self.current = self.specs[index]
            worker.give(index, self.current, self.root, self.settings, new_group)

    def replace(self, slot: int, worker: _Worker, why: str, reason: str) -> None:
        """A worker died or overran: its target fails, the rest of its file goes to another worker."""
        if worker.index is not None:
            spec = self.specs[worker.index]
            self.finish(worker.index, TargetResult(target=spec.key, tool_errors=[tool_error(spec, why, reason)]))
            worker.index = None
        if worker.queue:
            self.schedule.put_back(worker.queue)
            worker.queue = []
        worker.stop(force=True)
        self.pool.workers.pop(slot)

    def memory_held(self, worker: _Worker) -> int | None:
        """The resident memory of a worker busy on a target, when it is past the limit."""
        if not self.memory_limit or worker.index is None:
            return None
        # a forked worker has a pid, a spawned one a process
        pid = worker.pid if worker.pid is not None else worker.process.pid if worker.process is not None else None
        held = resident(pid) if pid else None
        return held if held is not None and held > self.memory_limit else None

    def retire(self, slot: int, worker: _Worker) -> None:
        """A worker whose process a target changed leaves; the rest of its file goes to a fresh one."""
        if worker.queue:
            self.schedule.put_back(worker.queue)
            worker.queue = []
        worker.stop()
        self.pool.workers.pop(slot)
        if self.pending():
            self.pool.add_worker()

    def run(self) -> list[TargetResult]:
        if not self.specs:
            return []
        pool = self.pool
        if not pool.workers:
            pool.add_worker()
        failed_starts = 0
        try:
            while self.done < len(self.specs):
                for _ in range(self.scaling.more_workers(pool.workers, self.pending(), self.most)):
                    pool.add_worker()
                if not pool.workers:
                    pool.add_worker()
                self.assign()
                if self.progress is not None and self.current is not None:
                    self.progress(self.done, len(self.specs), self.current)
                waiting = [w for w in pool.workers if w.index is not None or w.checking or not w.ready]
                deadline = min((w.deadline(self.timeout) for w in waiting), default=time.monotonic() + _POLL)
                look = self.scaling.next_look(pool.workers, self.pending(), self.most)
                if look is not None:
                    deadline = min(deadline, look + 0.001)
                poll = _MEMORY_POLL if self.memory_limit else _POLL
                ready = wait(pool.waitables(), timeout=max(0.0, min(deadline - time.monotonic(), poll)))
                pool.note_exits()
                for slot in range(len(pool.workers) - 1, -1, -1):
                    worker = pool.workers[slot]
                    message: WorkerMessage | None = None
                    if worker.conn in ready:
                        try:
                            message = worker.conn.recv()
                        except (EOFError, OSError):
                            message = None
                    if isinstance(message, Ready):
                        worker.ready, failed_starts = True, 0
                        self.scaling.started(time.monotonic() - worker.born)
                        continue
                    if isinstance(message, Linted) and message.index == worker.index:
                        self.scaling.finished(time.monotonic() - worker.started)
                        self.finish(message.index, TargetResult.from_json(message.result))
                        worker.index, worker.checking = None, True
                        continue
                    if isinstance(message, Checked) and worker.checking:
                        worker.checking = False
                        if message.changes:  # the target left the process changed: the next one gets a fresh worker
                            self.retire(slot, worker)
                        continue
                    dead = (worker.conn in ready or not worker.alive()
                            or any(x in ready for x in worker.waitables[1:]))
                    overdue = time.monotonic() >= worker.deadline(self.timeout)
                    held = self.memory_held(worker) if not dead and not overdue else None
                    if held is not None:
                        self.replace(slot, worker, (
                            f"linting held {format_size(held, up=True)}, more than the memory limit of "
                            f"{format_size(self.memory_limit)}, and was stopped (--memory-limit, memory-limit in "
                            "[tool.etrace-lint])"), "memory")
                        continue
                    if not dead and not overdue:
                        continue
                    if worker.index is None and not worker.ready:
                        failed_starts += 1
                    if dead:
                        why, reason = _crash_message(pool.exitcode(worker)), "crash"
                    else:
                        why, reason = (f"linting took longer than the timeout of {self.timeout:g} s "
                                       "and was stopped (--timeout)"), "timeout"
                    self.replace(slot, worker, why, reason)
                if failed_starts > 2 * self.most:
                    failed_starts = 0
                    self.give_up("no worker process could start (see the messages above)")
        except BaseException:
            # Ctrl-C, a caller giving up (the server drops a stale lint) or a bug of ours: the
            # targets in flight are stopped; idle workers and the fork server stay for the next run
            pool.stop_busy()
            raise
        return [r for r in self.results if r is not None]

    def give_up(self, reason: str) -> None:
        for group in self.schedule.take_all():
            for index in group:
                spec = self.specs[index]
                self.finish(index, TargetResult(target=spec.key,
                                                tool_errors=[tool_error(spec, reason, "worker-start")]))
