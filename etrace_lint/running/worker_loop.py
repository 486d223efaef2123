"""What runs inside a worker process: lint the targets the parent sends, one at a time.

A worker is either forked from the warm fork server (:mod:`.zygote`), which has
already imported JAX, brainstate and braintrace, or spawned afresh and imports
them itself (:mod:`.worker_start`). Either way it starts JAX's backend, says
:class:`~.messages.Ready` and then answers each :class:`~.messages.Lint` with
:class:`~.messages.Linted`, the target's result, and then :class:`~.messages.Checked`,
which says what the target left changed in the process (nothing: fit for the
next one); ``None`` or a closed pipe asks it to leave (:mod:`.messages`).

``new_group`` marks the first target of a file on this worker: every module of
the user's tree that an earlier file imported is dropped first
(:mod:`.isolation`), so no file sees another file's modules.

This module imports JAX, braintrace and the engine at its top: only a worker's
process imports it (:func:`.worker_start.forked_main`, :func:`.worker_start.spawned_main`),
and the program ``etrace-lint run`` lints in; a run's own process never does.
"""

from __future__ import annotations

import dataclasses
import os
import time
from multiprocessing.connection import Connection

import braintrace
import jax
import jax.numpy as jnp

from ..config.settings import EngineSettings
from ..core.findings import TargetResult
from ..discovery.discover import TargetSpec
from ..engine import fresh_state
from ..engine.lint import lint_target
from ..engine.targets import forget_imported_files, import_file
from . import children, isolation, process_state, reads
from .messages import Checked, Lint, Linted, Ready, WorkerMessage, next_message, tool_error


def start_backend() -> None:
    # several workers share one GPU: none may take three quarters of its memory up front
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jnp.zeros(()).block_until_ready()  # the backend starts on first use, not on a target's clock


def _compiler_options(settings: EngineSettings) -> EngineSettings:
    """The engine settings with the compiler's objects built from the plain data configuration holds."""
    options = dict(settings.compile_options)
    policy = options.get("control_flow")
    if isinstance(policy, dict):
        options["control_flow"] = braintrace.ControlFlowPolicy(**policy)
    return dataclasses.replace(settings, compile_options=options)


def use_compile_mode(settings: EngineSettings) -> None:
    """Linting never reads what a model's initialisers compute, only the programs JAX traces; yet
    each initialiser runs once per shape through XLA, and optimising those programs is most of a
    cold lint. Without --verify, XLA is asked not to (JAX's ``jax_disable_most_optimizations``:
    LLVM at level 0, about 3x quicker compiles); --verify compiles as the user's training does.
    ``JAX_DISABLE_MOST_OPTIMIZATIONS`` in the environment is the user's choice and stays."""
    if "JAX_DISABLE_MOST_OPTIMIZATIONS" in os.environ:
        return
    jax.config.update(  # type: ignore[no-untyped-call]  # jax's Config.update has no annotations
        "jax_disable_most_optimizations", not (settings.verify or settings.advise))


def apply_run_settings(settings: EngineSettings) -> None:
    """What a run asks of the process before any of its targets: taken into the process's fingerprint."""
    isolation.drop_environment(settings.drop_env)
    use_compile_mode(settings)


def lint_one(spec: TargetSpec, root: str, settings: EngineSettings,
             file_reads: frozenset[str] = frozenset()) -> TargetResult:
    """One target, from clean global settings, with what it read (:mod:`.reads`): the modules in this
    worker, and the files opened while it ran and, ``file_reads``, while its file was imported."""
    try:
        compiler_ready = _compiler_options(settings)
    except Exception as exc:  # a bad control-flow table: every target says so
        message = f"the configured compile options are not valid: {type(exc).__name__}: {exc}"
        return TargetResult(target=spec.key, tool_errors=[tool_error(spec, message, "usage")])
    started = time.perf_counter()
    recorder = reads.recorder()
    recorder.start()
    try:
        result = lint_target(spec, root, compiler_ready)
    except BaseException as exc:  # noqa: BLE001 - a factory may even call sys.exit()
        result = TargetResult(target=spec.key, tool_errors=[tool_error(
            spec, f"linting stopped with {type(exc).__name__}: {exc}", "internal-error")])
    finally:
        opened = recorder.stop()
    result.seconds = round(time.perf_counter() - started, 3)
    # since this worker dropped the last file's modules, whatever is imported belongs to this file's targets
    read = reads.collect(opened | file_reads, _tool_folders())
    result.dependencies = sorted(set(read.files) | {spec.path})
    result.distributions = dict(read.distributions)
    return result


def _tool_folders() -> tuple[str, ...]:
    """Folders whose files JAX opens for itself: its compiled programs."""
    folder = os.environ.get("JAX_COMPILATION_CACHE_DIR")
    return (os.path.abspath(folder).rstrip(os.sep) + os.sep,) if folder else ()


def serve(conn: Connection[WorkerMessage, Lint | None]) -> None:
    """Answer the parent until it says goodbye; the modules and backend are ready.

    Each result is followed by whether the process is still fit for what comes next
    (:mod:`.process_state`): for the next target of the same file, the state
    right after the file was imported; for another file, the state before
    the first target. The parent retires a worker that is not. The check
    walks every module's namespace (tens of milliseconds), so it runs once
    the result is sent: a save's diagnostics in the language server do not
    wait for it, and the parent gives the worker nothing before it is in.
    """
    baseline = isolation.ModuleBaseline()
    names = process_state.namespaces()
    start = imported = None
    file_reads: frozenset[str] = frozenset()
    import_seconds = 0.0  # the file's import, counted with its first target (slow files are scheduled first)
    linted = False
    conn.send(Ready(os.getpid()))
    while (message := next_message(conn)) is not None:
        assert isinstance(message, Lint)  # the only request a worker gets
        index, spec, root, settings = message.index, message.spec, message.root, message.settings
        new_group, more_in_file = message.new_group, message.more_in_file
        apply_run_settings(settings)
        if new_group:
            if linted:
                baseline.reset()
                forget_imported_files()
            baseline.enter(spec.path, root)
            os.chdir(root)  # relative paths in a model resolve as in the user's project
            if start is None:
                start = process_state.fingerprint(names)
            imported, file_reads = None, frozenset()
            fresh_state.forget_file_random_state()
            if more_in_file:
                # the file's import, from the seed every target starts from, is part of the state each
                # of its targets starts from
                fresh_state.reseed()
                recorder = reads.recorder()
                recorder.start()
                started = time.perf_counter()
                try:
                    import_file(spec.path, root)
                except BaseException:  # noqa: BLE001 - every target of the file reports it
                    pass
                finally:
                    file_reads = frozenset(recorder.stop())
                    import_seconds = time.perf_counter() - started
                fresh_state.remember_file_random_state()
                imported = process_state.fingerprint(names)
        result = lint_one(spec, root, settings, file_reads)
        result.seconds = round(result.seconds + import_seconds, 3)
        import_seconds = 0.0
        stopped = children.stop_children()
        if stopped:
            result.tool_errors.append(tool_error(
                spec, "the target left processes running, which were stopped when it ended: " + ", ".join(stopped),
                "left-processes"))
        linted = True
        conn.send(Linted(index, result.to_json()))
        reference = imported if more_in_file and imported is not None else start
        assert reference is not None  # a worker's first target starts a file (new_group), which takes ``start``
        conn.send(Checked(tuple(reference.changes(names))))
