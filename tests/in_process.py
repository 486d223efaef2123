"""The command line run inside the test's own process, its targets linted here too.

For tests about what a run reports (output formats, rule selection, configuration, levels, fixes),
not about worker processes: the hermetic, isolation, workers, limits and cache tests drive real
workers, and so does any test whose models end, crash or hang their process (here they would take
the test session with them). A command-line run in a process of its own starts a fork server that imports JAX,
brainstate and braintrace again, about as much CPU as linting a small model; here they are already
imported. ``bench/suite_cpu.py`` measures the difference per test file.

What a worker does around each target is done here as the worker loop does it
(:func:`etrace_lint.running.worker_loop.lint_one` under the run's settings, the file's modules
dropped before the next file, the random state of its import kept for each of its targets), and
each result goes through JSON as a worker's does. Whatever a run changes in this process (the
environment, the working folder, JAX's flags, brainstate's environ, ``sys.path``, the user's
modules) is put back when it ends.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from typing import Iterator

from helpers import REPO

from etrace_lint.cli.main import main
from etrace_lint.core.findings import TargetResult
from etrace_lint.engine import fresh_state
from etrace_lint.engine.fresh_state import GlobalState
from etrace_lint.running import worker_loop, workers
from etrace_lint.running.isolation import ModuleBaseline


class InProcessPool:
    """A :class:`~etrace_lint.running.workers.WorkerPool` whose one worker is this process."""

    def __init__(self, preload=(), start_method=None, warn=None, compilation_cache=None):
        self.workers: list = []  # the runner asks whether a warm worker is there: never

    def close(self) -> None:
        pass

    def run(self, specs, root, settings, jobs, timeout, progress=None, durations=None, memory_limit=0):
        results: list[TargetResult] = []
        baseline = ModuleBaseline()
        saved = GlobalState()
        previous = None
        try:
            for done, spec in enumerate(specs):
                worker_loop.apply_run_settings(settings)
                file_reads: frozenset[str] = frozenset()
                if spec.path != previous:
                    baseline.reset()
                    worker_loop.forget_imported_files()
                    baseline.enter(spec.path, root)
                    os.chdir(root)
                    fresh_state.forget_file_random_state()
                    if sum(1 for other in specs if other.path == spec.path) > 1:
                        fresh_state.reseed()
                        recorder = worker_loop.reads.recorder()
                        recorder.start()
                        try:
                            worker_loop.import_file(spec.path, root)
                        except BaseException:  # noqa: BLE001 - every target of the file reports it
                            pass
                        finally:
                            file_reads = frozenset(recorder.stop())
                        fresh_state.remember_file_random_state()
                    previous = spec.path
                with contextlib.redirect_stdout(sys.stderr):  # a model's prints, as a worker sends them
                    result = worker_loop.lint_one(spec, root, settings, file_reads)
                results.append(TargetResult.from_json(result.to_json()))
                if progress is not None:
                    progress(done + 1, len(specs), spec)
        finally:
            baseline.reset()
            worker_loop.forget_imported_files()
            fresh_state.forget_file_random_state()
            saved.restore()
        return results


def _text_stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")


def _read(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


def _jax_flags_from(env: dict) -> None:
    """JAX reads its ``JAX_*`` variables when it is imported: here it already is, so a run's own ones
    (``JAX_DISABLE_MOST_OPTIMIZATIONS``, ...) are set as the flags they name."""
    import jax  # why here: only a run given JAX variables needs it

    for name, value in env.items():
        flag = name.lower()
        if name.startswith("JAX_") and flag in jax.config.values:
            current = jax.config.values[flag]
            jax.config.update(flag, value.lower() in ("1", "true", "yes") if isinstance(current, bool) else value)


@contextlib.contextmanager
def _process_as_run(cwd: str, env: dict | None) -> Iterator[None]:
    environ, folder, path = dict(os.environ), os.getcwd(), list(sys.path)
    original = workers.WorkerPool
    saved = GlobalState()
    os.environ.update(env or {})
    _jax_flags_from(env or {})
    os.chdir(cwd)
    workers.WorkerPool = InProcessPool  # type: ignore[misc, assignment]
    try:
        yield
    finally:
        saved.restore()
        workers.WorkerPool = original  # type: ignore[misc]
        os.chdir(folder)
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:] = path


def run_cli(*args: str, cwd: str = REPO, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``etrace-lint ARGS`` in ``cwd`` as :func:`helpers.run_cli` runs it, in this process."""
    stdout, stderr = _text_stream(), _text_stream()
    with _process_as_run(cwd, env), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return subprocess.CompletedProcess(["etrace-lint", *args], code, _read(stdout), _read(stderr))
