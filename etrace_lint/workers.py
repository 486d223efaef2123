"""Long-lived worker processes: each imports JAX once and lints many targets.

A target that runs past the timeout, or that kills its worker (a segfault,
``os._exit``, running out of memory), becomes a tool error about that target;
the worker is replaced and every other target is still linted. Workers are
started with ``spawn``: forking a process that has imported JAX is unsafe.

Protocol over one pipe per worker: the worker sends ``("ready",)`` once its
imports are done (so a target's clock never counts the JAX import), then
answers each ``(index, spec fields)`` with ``("result", index, json)``;
``None`` asks it to leave.
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

# Starting a worker imports JAX, brainstate and braintrace; on a loaded
# machine that can take a while, but a worker that never gets ready must not
# hang the run.
STARTUP_LIMIT = 180.0
_POLL = 0.5  # how often the progress line is refreshed while waiting


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _compiler_options(run_options: dict) -> dict:
    """Build the compiler's objects from the plain data configuration holds."""
    options = dict(run_options.get("compile_options") or {})
    policy = options.get("control_flow")
    if isinstance(policy, dict):
        import braintrace

        options["control_flow"] = braintrace.ControlFlowPolicy(**policy)
    return dict(run_options, compile_options=options)


def _warm_up() -> None:
    """Import what every target needs once, before the first target's clock starts."""
    import jax.numpy as jnp

    from . import analysis, braintrace_adapter, locate, rules_compiler  # noqa: F401
    from .registry import all_rules

    all_rules()
    jnp.zeros(()).block_until_ready()  # the backend starts on first use


def _worker_main(conn, root: str, run_options: dict) -> None:
    # the parent handles Ctrl-C; a worker dying of it would look like a crash
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # what a model prints must not end up in the JSON or SARIF on the parent's stdout
    os.dup2(2, 1)
    from .cache import DependencyTracker
    from .engine import lint_target

    setup_error = None
    try:
        run_options = _compiler_options(run_options)
    except Exception as exc:  # a bad control-flow table: every target says so
        setup_error = f"the configured compile options are not valid: {type(exc).__name__}: {exc}"
    _warm_up()
    tracker = DependencyTracker(root)
    conn.send(("ready",))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        index, spec_fields = message
        spec = TargetSpec(*spec_fields)
        if setup_error is not None:
            result = TargetResult(target=spec.key, tool_errors=[_tool_error(spec, setup_error, "usage")])
        else:
            try:
                result = lint_target(spec, root, run_options)
                result.dependencies = tracker.complete(spec.path, result.dependencies)
            except BaseException as exc:  # noqa: BLE001 - a factory may even call sys.exit()
                result = TargetResult(target=spec.key, tool_errors=[_tool_error(
                    spec, f"linting stopped with {type(exc).__name__}: {exc}", "internal-error")])
        conn.send(("result", index, result.to_json()))


def _label(spec: TargetSpec) -> str:
    return f"{os.path.basename(spec.path)}::{spec.factory}"


def _tool_error(spec: TargetSpec, message: str, reason: str) -> ToolError:
    return ToolError(spec.display_name, f"{_label(spec)}: {message}", Location(spec.path, spec.line), reason)


def _crash_message(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (out of memory?)" if name == "SIGKILL" else ""
        return f"linting crashed the worker process with {name}{hint}; the model or a library it calls died"
    return f"linting ended the worker process (exit code {exitcode})"


class _Worker:
    def __init__(self, context, root: str, run_options: dict):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, root, run_options), daemon=True,
                                       name="etrace-lint-worker")
        self.process.start()
        child.close()
        self.ready = False
        self.born = time.monotonic()
        self.index: int | None = None
        self.started = 0.0

    def give(self, index: int, spec: TargetSpec) -> None:
        self.index, self.started = index, time.monotonic()
        self.conn.send((index, (spec.path, spec.factory, spec.line, spec.name)))

    def deadline(self, timeout: float) -> float:
        return self.started + timeout if self.index is not None else self.born + STARTUP_LIMIT

    def stop(self, force: bool = False) -> None:
        if not force:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                force = True
        if force:
            self.process.kill()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()


class _Scaling:
    """How many workers are worth starting: a start costs seconds of importing JAX.

    One worker starts first. More start once the work left, judged by the
    targets linted so far, would keep each of them busy for longer than a
    start costs, or once a target has run longer than a start (slow models,
    or one that hangs while the rest wait).
    """

    def __init__(self):
        self.startup: float | None = None
        self.durations: list[float] = []

    def started(self, seconds: float) -> None:
        if self.startup is None:
            self.startup = seconds

    def finished(self, seconds: float) -> None:
        self.durations.append(seconds)

    def more_workers(self, workers: list, pending: int, most: int) -> int:
        if len(workers) >= most or not pending or self.startup is None or not all(w.ready for w in workers):
            return 0
        wanted = len(workers)
        if self.durations:
            work_left = sum(self.durations) / len(self.durations) * pending
            wanted = max(wanted, int(work_left / (1.5 * self.startup)))
        now = time.monotonic()
        if any(w.index is not None and now - w.started > self.startup for w in workers):
            wanted = max(wanted, len(workers) + 1)
        return max(0, min(most, wanted) - len(workers))


def run_in_workers(specs: list[TargetSpec], root: str, run_options: dict, jobs: int, timeout: float,
                   progress: Callable[[int, int, TargetSpec], None] | None = None) -> list[TargetResult]:
    """Lint ``specs`` in up to ``jobs`` worker processes; results come back in the order of ``specs``."""
    if not specs:
        return []
    results: list[TargetResult | None] = [None] * len(specs)
    context = multiprocessing.get_context("spawn")
    pending = list(range(len(specs)))[::-1]
    most = max(1, min(jobs, len(specs)))
    workers = [_Worker(context, root, run_options)]
    scaling = _Scaling()
    failed_starts = 0
    done = 0
    current = specs[0]

    def finish(index: int, result: TargetResult) -> None:
        nonlocal done
        results[index] = result
        done += 1

    try:
        while done < len(specs):
            for _ in range(scaling.more_workers(workers, len(pending), most)):
                workers.append(_Worker(context, root, run_options))
            for worker in workers:
                if worker.ready and worker.index is None and pending:
                    index = pending.pop()
                    current = specs[index]
                    worker.give(index, current)
            if progress is not None:
                progress(done, len(specs), current)
            deadline = min(w.deadline(timeout) for w in workers if w.index is not None or not w.ready) \
                if any(w.index is not None or not w.ready for w in workers) else time.monotonic() + _POLL
            ready = wait([w.conn for w in workers] + [w.process.sentinel for w in workers],
                         timeout=max(0.0, min(deadline - time.monotonic(), _POLL)))
            for slot, worker in enumerate(workers):
                message = None
                if worker.conn in ready:
                    try:
                        message = worker.conn.recv()
                    except (EOFError, OSError):
                        message = None
                if message is not None and message[0] == "ready":
                    worker.ready, failed_starts = True, 0
                    scaling.started(time.monotonic() - worker.born)
                    continue
                if message is not None and message[0] == "result" and message[1] == worker.index:
                    scaling.finished(time.monotonic() - worker.started)
                    finish(worker.index, TargetResult.from_json(message[2]))
                    worker.index = None
                    continue
                dead = worker.process.sentinel in ready or worker.conn in ready or not worker.process.is_alive()
                overdue = time.monotonic() >= worker.deadline(timeout)
                if not dead and not overdue:
                    continue
                if worker.index is not None:
                    spec = specs[worker.index]
                    worker.process.join(timeout=1 if dead else 0)
                    if dead or not worker.process.is_alive():
                        error = _tool_error(spec, _crash_message(worker.process.exitcode), "crash")
                    else:
                        error = _tool_error(spec, f"linting took longer than the timeout of {timeout:g} s "
                                                  "and was stopped (--timeout)", "timeout")
                    finish(worker.index, TargetResult(target=spec.key, tool_errors=[error]))
                else:
                    failed_starts += 1
                worker.stop(force=True)
                workers[slot] = _Worker(context, root, run_options)
            if failed_starts > 2 * len(workers):
                reason = "no worker process could start (see the messages above)"
                while pending:
                    index = pending.pop()
                    finish(index, TargetResult(target=specs[index].key,
                                               tool_errors=[_tool_error(specs[index], reason, "worker-start")]))
                if all(w.index is None for w in workers):
                    break
    finally:
        for worker in workers:
            worker.stop(force=worker.index is not None or not worker.ready)
    return [r for r in results if r is not None]

