"""The daemon: it listens on its socket, answers ``status`` and ``stop`` at once, and runs each
lint request in its main thread, one at a time, as a fresh ``etrace-lint`` would run it: in the
caller's folder, under the caller's environment, its output kept for the caller to print.

A request that comes while a run is going is answered ``busy`` (the caller runs directly). The
daemon ends after its idle time, on ``stop`` or SIGTERM, and when its socket file is no longer its
own (removed by a caller that gave up on it, or by ``etrace-lint clean`` of the folder). A ``stop``
from a daemon that replaces it lets the run going on end first; ``etrace-lint daemon stop`` and
SIGTERM cancel it.

A run stops as a direct run stops on Ctrl-C once its caller asks it to (the caller's Ctrl-C), once
the caller is gone (its connection ends: SIGTERM, or it died), and when the daemon is told to end at
once: the workers busy on its targets are killed, as ``--timeout`` kills them, and the daemon serves
the next run. The run stops at the pool's next look at its progress; one that has not stopped within
:data:`INTERRUPT_AFTER` seconds (it was starting its workers, or linting on a pool of its own) is
interrupted as Ctrl-C interrupts a direct run, and the warm workers are then started afresh.
"""

from __future__ import annotations

import os
import queue
import select
import signal
import socket
import sys
import threading
import time
import traceback
import warnings

from ...core.exit_codes import EXIT_INTERRUPTED
from ...core.json_types import JsonObject
from ...running.cache import pin_versions
from ..main import lint_command
from . import wire
from .capture import captured
from .place import peer_refusal, peer_uid
from .pools import RunCancelled, WarmPools
from .relay import Relay
from .wire import LintRequest

HEARTBEAT = 1.0  # seconds between the "alive" messages of a run
INTERRUPT_AFTER = 2.0  # seconds a cancelled run has to stop in the pool's loop before it is interrupted
_TICK = 0.5
_WATCH = 0.05  # seconds between looks at a run's connection: the caller asks to cancel, or is gone


class Daemon:
    def __init__(self, listener: socket.socket, path: str, digest: str, idle_timeout: float) -> None:
        self.listener, self.path, self.digest = listener, path, digest
        self.idle_timeout = idle_timeout
        self.inode = os.stat(path).st_ino
        self.started = time.time()
        self.last_activity = time.monotonic()
        self.busy = threading.Event()
        self.stopping = threading.Event()
        self.ending = threading.Event()  # stopping at once: the run going on, or taken next, is cancelled
        self.cancelled = threading.Event()  # the run going on is to stop
        self.requests: queue.Queue[tuple[socket.socket, LintRequest]] = queue.Queue()
        self.pools = WarmPools(self.cancelled)
        self._interruptible = False  # the main thread is in a run that may be interrupted
        self._interrupted = False  # a run was: the warm workers' state is not known
        self.relay = Relay()  # before any worker starts: they inherit its pipe as their stderr
        self.runs = 0

    # -- the listening thread ----------------------------------------------------------------

    def listen(self) -> None:
        self.listener.settimeout(_TICK)
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            try:
                self._greet(connection)
            except (OSError, wire.WireError):
                connection.close()

    def _greet(self, connection: socket.socket) -> None:
        if peer_refusal(peer_uid(connection), os.getuid()) is not None:
            connection.close()
            return
        connection.settimeout(5.0)
        request = wire.receive(connection)
        kind = request.get("kind")
        lint = LintRequest.from_json(request) if kind == "lint" else None
        if lint is not None and lint.digest == self.digest and not self.busy.is_set():
            self.busy.set()
            self.requests.put((connection, lint))
            return
        with connection:
            if kind == "status":
                wire.send(connection, self.status())
            elif kind == "stop":
                wire.send(connection, {"kind": "stopping", "pid": os.getpid()})
                self.stop(cancel=request.get("cancel") is True)
            elif kind == "lint":
                wire.send(connection, {"kind": "busy" if self.busy.is_set() else "refused"})

    def stop(self, cancel: bool) -> None:
        """End the daemon once the run going on has ended; ``cancel``: that run is cancelled."""
        if cancel:
            self.ending.set()
            self.cancelled.set()
        self.stopping.set()

    def status(self) -> JsonObject:
        idle = 0.0 if self.busy.is_set() else time.monotonic() - self.last_activity
        return {"kind": "status", "pid": os.getpid(), "started": self.started, "age": time.time() - self.started,
                "idle": idle, "idle_timeout": self.idle_timeout, "runs": self.runs, "busy": self.busy.is_set(),
                "socket": self.path, "digest": self.digest}

    # -- the main thread ---------------------------------------------------------------------

    def own_socket(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def serve_forever(self) -> None:
        listening = threading.Thread(target=self.listen, name="etrace-lint-daemon-listener", daemon=True)
        listening.start()
        try:
            while not self.stopping.is_set():
                try:
                    connection, request = self.requests.get(timeout=_TICK)
                except queue.Empty:
                    if time.monotonic() - self.last_activity > self.idle_timeout or not self.own_socket():
                        break
                    continue
                with connection:
                    self.serve(connection, request)
                if self._interrupted:  # stopped outside the pool's loop: start its workers afresh
                    self._interrupted = False
                    self.pools.close()
                self.last_activity = time.monotonic()
                self.busy.clear()
        finally:
            self.stopping.set()
            if self.own_socket():
                os.unlink(self.path)
                try:
                    os.unlink(self.path[:-len(".sock")] + ".log")  # nothing went wrong: its log goes with it
                except OSError:
                    pass
            self.listener.close()
            self.pools.close()

    def serve(self, connection: socket.socket, request: LintRequest) -> None:
        lock = threading.Lock()
        done = threading.Event()

        def tell(message: JsonObject) -> None:
            with lock:
                try:
                    wire.send(connection, message)
                except OSError:
                    pass  # the caller went away: the watching thread cancels the run

        def watch() -> None:
            """Say the run is alive every second; cancel it once the caller asks (the only thing it
            sends after its request) or its connection ends, and interrupt it if it does not stop."""
            looking = select.poll()
            looking.register(connection, select.POLLIN)  # a hang-up or an error is always reported
            beat = time.monotonic() + HEARTBEAT
            while not done.is_set() and not self.cancelled.is_set():
                if looking.poll(_WATCH * 1000):
                    self.cancelled.set()
                elif time.monotonic() >= beat:
                    tell({"kind": "alive"})
                    beat += HEARTBEAT
            if not done.wait(INTERRUPT_AFTER):
                self.interrupt()

        self.cancelled.clear()
        if self.ending.is_set():  # a stop that came as the run was taken
            self.cancelled.set()
        tell({"kind": "accepted"})
        watching = threading.Thread(target=watch, name="etrace-lint-daemon-watch", daemon=True)
        watching.start()
        try:
            self.idle_timeout = request.idle_timeout
            code, output = self.run(request)
        except Exception:  # noqa: BLE001 - a request it cannot run (its folder is gone): the caller runs directly
            traceback.print_exc()
            code, output = -1, []
        finally:
            done.set()
            watching.join()
        self.runs += 1
        tell({"kind": "done", "code": code, "output": [list(line) for line in output]} if code >= 0
             else {"kind": "failed"})

    def run(self, request: LintRequest) -> tuple[int, list[list[str]]]:
        """One command line, as a fresh process in the caller's folder and environment runs it."""
        os.chdir(request.cwd)
        os.environ.clear()
        os.environ.update(request.env)
        # a fresh process shows a warning once per place: forget the places earlier runs warned at
        with warnings.catch_warnings(), captured(request.tty, request.encoding, self.relay) as output:
            try:
                code = self._lint(list(request.argv))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if exc.code is not None and not isinstance(exc.code, int):
                    print(exc.code, file=sys.stderr)
            except Exception:  # noqa: BLE001 - as the interpreter reports an uncaught exception, and goes on
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
        return code, output

    def _lint(self, argv: list[str]) -> int:
        """``lint_command``, which :meth:`interrupt` may interrupt, once, while it runs."""
        try:
            self._interruptible = True
            try:
                return lint_command(argv, pools=self.pools)
            finally:
                self._interruptible = False
        except KeyboardInterrupt:  # interrupted where lint_command does not say it: as it says it
            print("etrace-lint: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED

    def interrupt(self) -> None:
        """Interrupt the main thread's run, as Ctrl-C interrupts a direct run (see :meth:`on_interrupt`)."""
        if self._interruptible:
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    def on_interrupt(self, signum: int, frame: object) -> None:
        """SIGINT, sent by :meth:`interrupt` (the daemon has no terminal): the run going on ends."""
        if self._interruptible:
            self._interruptible, self._interrupted = False, True
            raise RunCancelled()


def listen(path: str) -> socket.socket | None:
    """A socket listening at ``path``, closed to other users (0600, in a 0700 folder); None when a
    live daemon holds it already (a stale one is replaced)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)
    try:
        try:
            listener.bind(path)
        except OSError:
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(path)
                listener.close()
                return None  # another daemon of this digest started first
            except ConnectionRefusedError:
                os.unlink(path)
                listener.bind(path)
            finally:
                probe.close()
    finally:
        os.umask(old_mask)
    listener.listen(16)
    return listener


def main(argv: list[str]) -> int:
    """``python -m etrace_lint.cli.daemon SOCKET DIGEST IDLE_TIMEOUT``, started by the command line."""
    path, digest, idle_timeout = argv[0], argv[1], float(argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # until a run may be interrupted
    listener = listen(path)
    if listener is None:
        return 0
    pin_versions()  # read once: the digest in the socket's name changes with any of them
    daemon = Daemon(listener, path, digest, idle_timeout)
    signal.signal(signal.SIGINT, daemon.on_interrupt)
    signal.signal(signal.SIGTERM, lambda *_: daemon.stop(cancel=True))
    print(f"etrace-lint daemon {os.getpid()} serves {path}", flush=True)
    daemon.serve_forever()
    return 0
