"""The command line's side: whether a run goes to the project's daemon, starting one, and running
directly, with one line on stderr saying why, when a daemon is gone or does not answer.

The daemon writes nothing of a run on the caller's streams: it sends back what the run printed,
in order, with its exit code, and this process prints it. A daemon that fails before it answers
leaves nothing half printed, so the direct run that follows prints the whole answer.

Ctrl-C asks the daemon to cancel the run and waits, for at most :data:`CANCEL_LIMIT` seconds (a
second Ctrl-C waits no longer), until it has: its workers on the run's targets are stopped by then.
A process that ends otherwise (SIGTERM, SIGKILL) closes its connection, which cancels the run too.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from ...core.exit_codes import EXIT_INTERRUPTED
from ...core.json_types import JsonObject
from . import wire
from .key import digest
from .place import Place, PlaceError, peer_refusal, peer_uid, private_folder, runtime_dir, socket_refusal, supported
from .quick import Address
from .relay import RAW
from .wire import LintRequest

if TYPE_CHECKING:  # the settings load only for a command line that is not plain (see .quick)
    from ...config.settings import Settings

NO_DAEMON_VARIABLE = "ETRACE_LINT_NO_DAEMON"
# seconds without a word from the daemon (it says it is alive every second of a run) before this
# process gives up on it and runs directly
TIMEOUT_VARIABLE = "ETRACE_LINT_DAEMON_TIMEOUT"
DEFAULT_TIMEOUT = 20.0
START_LIMIT = 30.0  # seconds a new daemon has to open its socket
CANCEL_LIMIT = 10.0  # seconds Ctrl-C waits for the daemon to say it has cancelled the run
_TRUE = ("1", "true", "yes", "on")


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in _TRUE


def refusal(address: Address, environ: Mapping[str, str]) -> str | None:
    """Why a run goes directly; None when it goes to the daemon."""
    if not address.enabled:
        return "--no-daemon"
    if _true(environ.get(NO_DAEMON_VARIABLE)):
        return NO_DAEMON_VARIABLE
    if _true(environ.get("CI")) and not address.asked:
        return "CI is set"  # a CI job runs once: a daemon would only outlive it
    if not supported():
        return "no Unix sockets with peer credentials here"
    return None


def address_of_settings(settings: Settings) -> Address | None:
    """The daemon's address for a run's settings; None for a run that keeps to itself (watching, reading
    stdin, printing its settings or targets)."""
    if settings.watch or settings.show_settings or settings.list_targets or settings.paths == ["-"]:
        return None
    project = os.path.dirname(settings.config_file) if settings.config_file else settings.root
    return Address(project, settings.config_file, settings.daemon_idle_timeout, asked="daemon" in settings.origins,
                   enabled=settings.daemon)


def place_of(address: Address, environ: Mapping[str, str]) -> Place:
    return Place(runtime_dir(environ), address.project, digest(address.config_file, environ))


def _say(message: str) -> None:
    print(f"etrace-lint: {message}; running without the daemon", file=sys.stderr, flush=True)


def timeout(environ: Mapping[str, str]) -> float:
    try:
        return max(0.1, float(environ.get(TIMEOUT_VARIABLE, "")))
    except ValueError:
        return DEFAULT_TIMEOUT


def serve_through_daemon(argv: list[str], address: Address | None) -> int | None:
    """The exit code of this run, served by the project's daemon (started if none runs) and its
    output printed here; None when the run goes directly."""
    environ = os.environ
    if address is None or refusal(address, environ) is not None:
        return None
    place = place_of(address, environ)
    try:
        private_folder(place.folder)
    except PlaceError as exc:
        _say(f"the daemon's folder cannot be used ({exc})")
        return None
    connection = _connect(place, address)
    if connection is None:
        return None
    with connection:
        try:
            return _lint(connection, argv, place, timeout(environ), address.idle_timeout)
        except KeyboardInterrupt:
            try:
                _cancel(connection)
            except KeyboardInterrupt:  # a second Ctrl-C: the daemon stops the run all the same
                pass
            print("etrace-lint: interrupted", file=sys.stderr)  # as a direct run says it
            return EXIT_INTERRUPTED


def _cancel(connection: socket.socket, limit: float = CANCEL_LIMIT) -> None:
    """Ask the daemon to cancel the run on ``connection`` and wait until it has (it then ends the
    connection); what it still sends is dropped."""
    deadline = time.monotonic() + limit
    try:
        wire.send(connection, {"kind": "cancel"})
        while (left := deadline - time.monotonic()) > 0:
            connection.settimeout(left)
            if not connection.recv(1 << 16):
                return
    except OSError:  # gone already, or not within the limit
        return


def _open(path: str) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
    except OSError:
        connection.close()
        raise
    return connection


def _connect(place: Place, address: Address) -> socket.socket | None:
    """A connection to this project's daemon for this digest, started when none runs."""
    try:
        info = os.lstat(place.socket)
    except FileNotFoundError:
        return _start(place, address)
    except OSError as exc:
        _say(f"{place.socket}: {exc.strerror or exc}")
        return None
    why = socket_refusal(info, os.getuid())
    if why is not None:
        _say(f"{place.socket} is not used: {why}")
        return None
    try:
        connection = _open(place.socket)
    except (ConnectionRefusedError, FileNotFoundError):
        _remove(place.socket)
        _say("the daemon of this project is gone (its socket was left behind and is removed)")
        return None
    except OSError as exc:
        _say(f"cannot reach the daemon ({exc.strerror or exc})")
        return None
    return _checked(connection, place)


def _checked(connection: socket.socket, place: Place) -> socket.socket | None:
    why = peer_refusal(peer_uid(connection), os.getuid())
    if why is not None:
        connection.close()
        _say(f"{place.socket} is not used: {why}")
        return None
    return connection


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def stop_others(place: Place) -> None:
    """Stop this project's daemons of other digests (an older configuration or environment), each once
    the run it serves has ended."""
    for other in place.siblings():
        if other != place.socket:
            request_stop(other)


def request_stop(path: str, cancel: bool = False) -> JsonObject | None:
    """Ask the daemon at ``path`` to end (``cancel``: at once, the run it serves cancelled; else once that
    run has ended); its answer, or None when none answered (a stale socket is removed)."""
    return _ask(path, "stop", remove_stale=True, cancel=cancel)


def request_status(path: str) -> JsonObject | None:
    """The status of the daemon at ``path`` (its pid, age, idle time, runs); None when none answers."""
    return _ask(path, "status", remove_stale=False)


def _ask(path: str, kind: str, remove_stale: bool, cancel: bool = False) -> JsonObject | None:
    try:
        if socket_refusal(os.lstat(path), os.getuid()) is not None:
            return None
        connection = _open(path)
    except (ConnectionRefusedError, FileNotFoundError):
        if remove_stale:
            _remove(path)
        return None
    except OSError:
        return None
    with connection:
        if peer_refusal(peer_uid(connection), os.getuid()) is not None:
            return None
        connection.settimeout(5.0)
        try:
            wire.send(connection, {"kind": kind, "cancel": cancel} if cancel else {"kind": kind})
            return wire.receive(connection)
        except (OSError, wire.WireError):
            return None


def _start(place: Place, address: Address) -> socket.socket | None:
    stop_others(place)
    log = os.open(place.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        # -P: the folder it starts in is not put on sys.path (a project's own json.py must not shadow the
        # standard library's in the daemon, as it does not in the console script)
        pid = os.posix_spawn(sys.executable, [sys.executable, "-P", "-m", "etrace_lint.cli.daemon", place.socket,
                                              place.digest, str(address.idle_timeout)],
                             dict(os.environ), setsid=True,
                             file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                                           (os.POSIX_SPAWN_DUP2, log, 1), (os.POSIX_SPAWN_DUP2, log, 2)])
    except OSError as exc:
        _say(f"the daemon could not be started ({exc.strerror or exc})")
        return None
    finally:
        os.close(log)
    deadline = time.monotonic() + START_LIMIT
    while time.monotonic() < deadline:
        try:
            return _checked(_open(place.socket), place)
        except OSError:
            pass
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended and not os.path.exists(place.socket):
            _say(f"the daemon ended as it started (exit status {os.waitstatus_to_exitcode(status)}; see {place.log})")
            return None
        time.sleep(0.02)
    _say(f"the daemon did not open its socket within {START_LIMIT:.0f} s (see {place.log})")
    return None


def _streams() -> dict[str, bool]:
    def tty(stream: TextIO) -> bool:
        try:
            return bool(stream.isatty())
        except (AttributeError, ValueError):
            return False
    return {"stdout": tty(sys.stdout), "stderr": tty(sys.stderr)}


def _lint(connection: socket.socket, argv: list[str], place: Place, limit: float, idle_timeout: float) -> int | None:
    connection.settimeout(limit)
    # a caller's sys.stdout may be any object with a write method (a test's, an IDE's): it may have no encoding
    request = LintRequest(argv, os.getcwd(), dict(os.environ), _streams(),
                          getattr(sys.stdout, "encoding", None) or "utf-8", place.digest, idle_timeout)
    try:
        wire.send(connection, request.to_json())
        while True:
            answer = wire.receive(connection)
            if answer.get("kind") in ("accepted", "alive"):
                continue
            if answer.get("kind") == "done":
                code = answer.get("code", 1)
                _replay(wire.printed(answer))
                return code if isinstance(code, int) and not isinstance(code, bool) else 1
            return None  # busy with another run, not this digest's daemon, or failed: quietly run directly
    except TimeoutError:
        _remove(place.socket)  # the next run starts a fresh daemon; this one ends when it sees its socket gone
        _say(f"the daemon did not answer within {limit:g} s")
    except (OSError, wire.WireError) as exc:
        _remove_if_stale(place.socket)
        _say(f"the daemon ended without an answer ({exc})")
    return None


def _remove_if_stale(path: str) -> None:
    """Remove ``path`` when no process listens on it any more."""
    try:
        _open(path).close()
    except ConnectionRefusedError:
        _remove(path)
    except OSError:
        pass


def _replay(output: list[tuple[str, str]]) -> None:
    """What the run printed, on the same streams in the same order."""
    last = None
    for name, text in output:
        stream = sys.stdout if name == "stdout" else sys.stderr
        if last is not None and last is not stream:
            last.flush()
        if name == RAW and hasattr(stream, "buffer"):  # the workers' bytes, as they wrote them
            stream.flush()
            stream.buffer.write(text.encode("latin-1"))
            stream.buffer.flush()
        elif name == RAW:  # a stream without bytes underneath (a caller's StringIO)
            stream.write(text.encode("latin-1").decode("utf-8", errors="replace"))
        else:
            stream.write(text)
        last = stream
    sys.stdout.flush()
    sys.stderr.flush()
