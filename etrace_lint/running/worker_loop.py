"""What runs inside a worker process: lint the targets the parent sends, one at a time.

A worker is either forked from the warm fork server (:mod:`.zygote`), which has
already imported JAX, brainstate and braintrace, or spawned afresh and imports
them itself. Either way it starts JAX's backend, says :class:`~.messages.Ready`
and then answers each :class:`~.messages.Lint` with :class:`~.messages.Linted`,
which says what the target left changed in the process (nothing: fit for the
next one); ``None`` or a closed pipe asks it to leave (:mod:`.messages`).

``new_group`` marks the first target of a file on this worker: every module of
the user's tree that an earlier file imported is dropped first
(:mod:`.isolation`), so no file sees another file's modules.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import os
import signal
import time
from multiprocessing.connection import Connection
from typing import Never

from ..config.settings import EngineSettings
from ..core.findings import Location, TargetResult, ToolError
from ..core.registry import all_rules
from ..discovery.discover import TargetSpec
from ..engine.targets import forget_imported_files, import_file
from . import children, isolation, process_state, reads
from .messages import Fork, Lint, Linted, Ready, WorkerMessage

# What every worker needs before its first target: imported once in the fork
# server, so that no forked worker pays for it again.
WARM_MODULES = ("jax", "jax.numpy", "brainstate", "braintrace", "saiunit",
                "etrace_lint.engine.lint", "etrace_lint.analysis.context", "etrace_lint.analysis.braintrace_adapter",
                "etrace_lint.analysis.locate", "etrace_lint.engine.rules_compiler", "etrace_lint.running.isolation",
                "etrace_lint.verify")


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
    from jax._src import xla_bridge  # a cached run never imports jax

    return bool(getattr(xla_bridge, "_backends", None))


def _start_backend() -> None:
    # several workers share one GPU: none may take three quarters of its memory up front
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax.numpy as jnp  # a cached run never imports jax

    jnp.zeros(()).block_until_ready()  # the backend starts on first use, not on a target's clock


def _compiler_options(settings: EngineSettings) -> EngineSettings:
    """The engine settings with the compiler's objects built from the plain data configuration holds."""
    options = dict(settings.compile_options)
    policy = options.get("control_flow")
    if isinstance(policy, dict):
        import braintrace  # a cached run never imports braintrace

        options["control_flow"] = braintrace.ControlFlowPolicy(**policy)
    return dataclasses.replace(settings, compile_options=options)


def _label(spec: TargetSpec) -> str:
    return f"{os.path.basename(spec.path)}::{spec.factory}"


def tool_error(spec: TargetSpec, message: str, reason: str) -> ToolError:
    return ToolError(spec.display_name, f"{_label(spec)}: {message}", Location(spec.path, spec.line), reason)


def use_compile_mode(settings: EngineSettings) -> None:
    """Linting never reads what a model's initialisers compute, only the programs JAX traces; yet
    each initialiser runs once per shape through XLA, and optimising those programs is most of a
    cold lint. Without --verify, XLA is asked not to (JAX's ``jax_disable_most_optimizations``:
    LLVM at level 0, about 3x quicker compiles); --verify compiles as the user's training does.
    ``JAX_DISABLE_MOST_OPTIMIZATIONS`` in the environment is the user's choice and stays."""
    if "JAX_DISABLE_MOST_OPTIMIZATIONS" in os.environ:
        return
    import jax  # a cached run never imports jax

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
    # imports JAX: the fork server has (WARM_MODULES); a run's own process imports this module, never JAX
    from ..engine.lint import lint_target

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


def next_message(conn: Connection[Never, Lint | Fork | None]) -> Lint | Fork | None:
    """The parent's next message (to a worker, or to the fork server); None when it says goodbye or is gone."""
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None


def serve(conn: Connection[WorkerMessage, Lint | None]) -> None:
    """Answer the parent until it says goodbye; the modules and backend are ready.

    Each answer says whether the process is still fit for what comes next
    (:mod:`.process_state`): for the next target of the same file, the state
    right after the file was imported; for another file, the state before
    the first target. The parent retires a worker that is not.
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
            isolation.forget_file_random_state()
            if more_in_file:
                # the file's import, from the seed every target starts from, is part of the state each
                # of its targets starts from
                isolation.reseed()
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
                isolation.remember_file_random_state()
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
        reference = imported if more_in_file and imported is not None else start
        assert reference is not None  # a worker's first target starts a file (new_group), which takes ``start``
        disturbed = reference.changes(names)
        conn.send(Linted(index, result.to_json(), tuple(disturbed)))


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


def forked_main(conn: Connection[WorkerMessage, Lint | None]) -> None:
    """A worker forked from the fork server: the modules are there, the backend is not."""
    prepare_process()
    _start_backend()
    serve(conn)


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
    _start_backend()
    serve(conn)
