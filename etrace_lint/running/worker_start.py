"""How a worker process starts, forked from the fork server (:mod:`.zygote`) or spawned afresh.

The parent process imports this module to name what a new process runs, so it imports no JAX; the
worker's own loop, :mod:`.worker_loop`, imports JAX, brainstate, braintrace and the engine at its top
and is imported where a worker starts (in the fork server, with the other :data:`WARM_MODULES`).
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
from multiprocessing.connection import Connection

from ..core.registry import all_rules
from . import children, process_state, reads
from .messages import Lint, WorkerMessage

# What every worker needs before its first target: imported once in the fork
# server, so that no forked worker pays for it again.
WARM_MODULES = ("jax", "jax.numpy", "brainstate", "braintrace", "saiunit",
                "etrace_lint.engine.lint", "etrace_lint.analysis.context", "etrace_lint.analysis.braintrace_adapter",
                "etrace_lint.analysis.locate", "etrace_lint.engine.rules_compiler", "etrace_lint.engine.fresh_state",
                "etrace_lint.verify", "etrace_lint.running.worker_loop")


def use_compilation_cache(directory: str | None) -> None:
    """Compiled XLA programs shared on disk by the workers of a run (and by later runs when it is the
    cache's folder): the second worker loads the small programs every model needs instead of
    compiling them again. Set before JAX is imported; a user's own JAX_* settings win."""
    if not directory:
        return
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", directory)
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    # No size bound for JAX to keep: with one, every write lists and reads the whole folder under a
    # lock, which workers then queue for (a run took 1.4x as long); the pool trims it between runs.


def import_warm_modules() -> None:
    for name in WARM_MODULES:
        importlib.import_module(name)

    all_rules()
    reads.warm()
    reads.recorder()


def prepare_for_workers() -> None:
    """Once the imports are done (in the fork server, once for every worker it forks): place each
    loaded module (:mod:`.reads`) and gather the namespaces the check after each target compares
    (:mod:`.process_state`)."""
    reads.place_loaded_modules()
    process_state.gather()


def backend_started() -> bool:
    """Whether JAX's backend (and its threads) exist in this process: forking is then unsafe."""
    # the fork server asks once its imports are done; the parent never does, and never imports JAX
    from jax._src import xla_bridge

    return bool(getattr(xla_bridge, "_backends", None))  # a private name JAX may drop


def prepare_process() -> None:
    # the parent handles Ctrl-C; a worker dying of it would look like a crash
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # a process group of its own, which the parent kills whole on a timeout; the orphans of the
    # processes a target starts become this worker's children, to be stopped after the target
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    children.become_subreaper()
    # what a model prints must not end up in the JSON or SARIF on the parent's stdout
    os.dup2(2, 1)


def _work(conn: Connection[WorkerMessage, Lint | None]) -> None:
    """Start JAX's backend and answer the parent until it says goodbye."""
    # imports JAX and the engine: a worker's process, where the fork server (WARM_MODULES) or
    # spawned_main has imported them already; the parent imports this module, never JAX
    from . import worker_loop

    worker_loop.start_backend()
    worker_loop.serve(conn)


def forked_main(conn: Connection[WorkerMessage, Lint | None]) -> None:
    """A worker forked from the fork server: the modules are there, the backend is not."""
    prepare_process()
    _work(conn)


def spawned_main(conn: Connection[WorkerMessage, Lint | None], preload: list[str],
                 compilation_cache: str | None = None) -> None:
    """A worker started afresh (no fork server on this platform, or it could not be used)."""
    prepare_process()
    gc.disable()  # as in the fork server: no collection walks the imports while they are made
    use_compilation_cache(compilation_cache)
    import_warm_modules()
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a target that needs it says so itself
            pass
    prepare_for_workers()
    gc.freeze()
    gc.enable()
    _work(conn)
