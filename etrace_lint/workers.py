"""Long-lived worker processes: each imports JAX once and lints many targets.

A target that runs past the timeout, or that kills its worker (a segfault,
``os._exit``, running out of memory), becomes a tool error about that target;
the worker is replaced and every other target is still linted. Workers are
started with ``spawn``: forking a process that has imported JAX is unsafe.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from multiprocessing.connection import wait
from typing import Callable

from .discover import TargetSpec
from .findings import Location, TargetResult, ToolError


def _worker_main(conn, root: str, run_options: dict) -> None:
    # the parent handles Ctrl-C; a worker dying of it would look like a crash
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .engine import lint_target

    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        index, spec_fields = message
        result = lint_target(TargetSpec(*spec_fields), root, run_options)
        conn.send((index, result.to_json()))


def _spec_fields(spec: TargetSpec) -> tuple:
    return (spec.path, spec.factory, spec.line, spec.name)


class _Worker:
    def __init__(self, context, root: str, run_options: dict):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, root, run_options), daemon=True)
        self.process.start()
        child.close()
        self.index: int | None = None
        self.started = 0.0

    def give(self, index: int, spec: TargetSpec) -> None:
        self.index, self.started = index, time.monotonic()
        self.conn.send((index, _spec_fields(spec)))

    def stop(self, force: bool = False) -> None:
        if force:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except (OSError, BrokenPipeError):
                self.process.kill()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()


def _crash_message(spec: TargetSpec, exitcode: int | None) -> str:
    label = f"{os.path.basename(spec.path)}::{spec.factory}"
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"{label}: linting crashed the worker process ({name}); the model or a library it calls died"
    return f"{label}: linting ended the worker process (exit code {exitcode})"


def run_in_workers(specs: list[TargetSpec], root: str, run_options: dict, jobs: int, timeout: float,
                   progress: Callable[[int, int, TargetSpec], None] | None = None) -> list[TargetResult]:
    """Lint ``specs`` in ``jobs`` worker processes; results come back in the order of ``specs``."""
    results: list[TargetResult | None] = [None] * len(specs)
    if not specs:
        return []
    context = multiprocessing.get_context("spawn")
    jobs = max(1, min(jobs, len(specs)))
    pending = list(range(len(specs)))
    pending.reverse()
    workers = [_Worker(context, root, run_options) for _ in range(jobs)]
    done = 0
    try:
        while done < len(specs):
            for worker in workers:
                if worker.index is None and pending:
                    index = pending.pop()
                    if progress is not None:
                        progress(done, len(specs), specs[index])
                    worker.give(index, specs[index])
            busy = [w for w in workers if w.index is not None]
            deadline = min(w.started + timeout for w in busy)
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy],
                         timeout=max(0.0, deadline - time.monotonic()))
            for worker in list(busy):
                finished = worker.conn in ready or worker.process.sentinel in ready
                overdue = time.monotonic() >= worker.started + timeout
                if not finished and not overdue:
                    continue
                index, spec = worker.index, specs[worker.index]
                result = None
                if worker.conn in ready:
                    try:
                        _, payload = worker.conn.recv()
                        result = TargetResult.from_json(payload)
                    except (EOFError, OSError):
                        result = None
                if result is None:
                    worker.process.join(timeout=0 if worker.process.sentinel not in ready else 1)
                    if not worker.process.is_alive():
                        message = _crash_message(spec, worker.process.exitcode)
                        reason = "crash"
                    else:
                        message = (f"{os.path.basename(spec.path)}::{spec.factory}: linting took longer than "
                                   f"the timeout of {timeout:g} s and was stopped")
                        reason = "timeout"
                    result = TargetResult(target=spec.key, tool_errors=[
                        ToolError(spec.display_name, message, Location(spec.path, spec.line), reason)])
                    worker.stop(force=True)
                    workers[workers.index(worker)] = replacement = _Worker(context, root, run_options)
                    worker = replacement
                results[index] = result
                worker.index = None
                done += 1
    finally:
        for worker in workers:
            worker.stop(force=worker.index is not None)
    return [r for r in results if r is not None]
