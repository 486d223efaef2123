"""A fork server: one process imports JAX, brainstate and braintrace once, then forks warm workers.

Importing those libraries costs seconds of CPU; a worker forked from a
process that has done it is ready in a fraction of a second, and no import is
paid twice. Forking is only safe while JAX's backend has not started (it runs
threads), so the fork server never creates an array: it imports, checks that
the backend is still down, and says so. A library named in ``preload`` whose
import starts the backend (brainpy.state does) is reported back instead, and
the parent starts a fork server without it.

Protocol over one pipe (:mod:`.messages`): the server sends ``Ready`` or
``Unsafe``; then it answers each ``Fork`` with ``Forked`` and reports each
worker that ends with ``Exited``. ``None`` or a closed pipe stops it.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait

from . import children as processes
from . import worker_start
from .messages import Exited, Fork, Forked, ForkServerMessage, Ready, Unsafe, next_message

_REAP_EVERY = 0.2


def serve_forks(conn: Connection[ForkServerMessage, Fork | None], preload: list[str],
                compilation_cache: str | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    processes.become_subreaper()
    gc.disable()  # importing allocates millions of objects that live as long as the process
    worker_start.use_compilation_cache(compilation_cache)
    worker_start.import_warm_modules()
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a target that needs it will say why
            continue
        if worker_start.backend_started():
            conn.send(Unsafe(name))
            return
    if worker_start.backend_started() or threading.active_count() > 1:
        conn.send(Unsafe(""))
        return
    worker_start.prepare_for_workers()
    # the imported objects go to the collector's permanent generation: no worker walks them again,
    # and a worker's collections leave their pages shared with this process
    gc.freeze()
    conn.send(Ready(os.getpid()))
    children: set[int] = set()
    try:
        while True:
            if wait([conn], timeout=_REAP_EVERY):
                message = next_message(conn)
                if message is None:
                    break
                assert isinstance(message, Fork)  # the only request the fork server gets
                child_conn = message.connection
                pid = os.fork()
                if pid == 0:  # the new worker
                    code = 0
                    try:
                        conn.close()
                        gc.enable()
                        worker_start.forked_main(child_conn)
                    except BaseException:  # noqa: BLE001 - the parent reports the exit code
                        code = 1
                    finally:
                        os._exit(code)
                child_conn.close()
                children.add(pid)
                conn.send(Forked(pid))
            for pid, code in _reap(children):
                conn.send(Exited(pid, code))
    finally:
        _stop_children(children)
    # nothing is left to write: skip tearing down JAX and the libraries at exit (most of a second
    # the parent would wait for)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _stop_children(children: set[int]) -> None:
    """Workers asked to leave get a moment to do so; then they are killed. All are reaped, so
    their CPU time counts in the parent's resource usage and no zombie stays behind; so are the
    processes their targets left, which this process adopted or adopts as the workers die."""
    deadline = time.monotonic() + 2.0
    while children and time.monotonic() < deadline:
        for _ in _reap(children):
            pass
        time.sleep(0.02)
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
    processes.stop_children()


def _reap(workers: set[int]) -> Iterator[tuple[int, int]]:
    """The workers that ended, with their exit codes. As a subreaper, this process also adopts the
    processes a killed worker's target left; they are stopped once their worker is gone."""
    ended = False
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        if pid in workers:
            workers.discard(pid)
            ended = True
            yield pid, (-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
    if ended:
        for pid in processes.children(skip=workers):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
