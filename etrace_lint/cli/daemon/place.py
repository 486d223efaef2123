"""Where a project's daemon listens, and the checks that keep another user out.

The sockets live in one folder per user: ``ETRACE_LINT_DAEMON_DIR``, else
``$XDG_RUNTIME_DIR/etrace-lint``, else ``/tmp/etrace-lint-UID``. The folder
must be the user's own, a real folder and closed to everyone else (0700);
a socket file must be the user's own socket; the process at the other end
must run as the user (``SO_PEERCRED``). Each check returns why it refuses,
or None.
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat
import struct
from collections.abc import Mapping
from dataclasses import dataclass

DIR_VARIABLE = "ETRACE_LINT_DAEMON_DIR"
_PEER = struct.Struct("3i")  # struct ucred: pid, uid, gid


def runtime_dir(environ: Mapping[str, str]) -> str:
    """The user's folder of sockets, by the variables above."""
    if environ.get(DIR_VARIABLE):
        return os.path.abspath(environ[DIR_VARIABLE])
    if environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(environ["XDG_RUNTIME_DIR"], "etrace-lint")
    return f"/tmp/etrace-lint-{os.getuid()}"


def folder_refusal(info: os.stat_result, uid: int) -> str | None:
    """Why a folder (its ``lstat``) must not hold our sockets: not a real folder, another owner, open to others."""
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if info.st_uid != uid:
        return f"it belongs to user {info.st_uid}"
    if info.st_mode & 0o077:
        return f"others may open it (mode {stat.S_IMODE(info.st_mode):o}, not 700)"
    return None


def socket_refusal(info: os.stat_result, uid: int) -> str | None:
    """Why a socket file (its ``lstat``) must not be used: not a socket, or another user's."""
    if not stat.S_ISSOCK(info.st_mode):
        return "it is not a socket"
    if info.st_uid != uid:
        return f"it belongs to user {info.st_uid}"
    return None


def peer_refusal(peer_uid: int, uid: int) -> str | None:
    """Why the process at the other end of a connection must not be answered, or believed."""
    if peer_uid != uid:
        return f"the process at the other end runs as user {peer_uid}"
    return None


def peer_uid(connection: socket.socket) -> int:
    """The user id of the process at the other end of a Unix socket (``SO_PEERCRED``)."""
    _, uid, _ = _PEER.unpack(connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER.size))
    return int(uid)


class PlaceError(Exception):
    """The folder of sockets cannot be used safely: the run goes on without a daemon."""


def private_folder(path: str) -> str:
    """``path``, made if missing (0700), and checked to be the user's own and closed to others."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        raise PlaceError(f"{path}: {exc.strerror or exc}") from None
    why = folder_refusal(info, os.getuid())
    if why is not None:
        raise PlaceError(f"{path}: {why}")
    return path


def supported() -> bool:
    """Unix sockets whose peer's user can be read (Linux)."""
    return hasattr(socket, "AF_UNIX") and hasattr(socket, "SO_PEERCRED")


@dataclass(frozen=True)
class Place:
    """The files of one project's daemon for one digest: its socket, process id and log."""

    folder: str
    project: str  # the project's folder
    digest: str

    @property
    def prefix(self) -> str:
        """The names of every daemon of this project start with it, whatever its digest."""
        return hashlib.sha256(os.path.realpath(self.project).encode()).hexdigest()[:16]

    @property
    def socket(self) -> str:
        return os.path.join(self.folder, f"{self.prefix}-{self.digest[:16]}.sock")

    @property
    def log(self) -> str:
        return self.socket[:-len(".sock")] + ".log"

    def siblings(self) -> list[str]:
        """The sockets of this project's daemons, this one's included."""
        try:
            names = sorted(os.listdir(self.folder))
        except OSError:
            return []
        return [os.path.join(self.folder, name) for name in names
                if name.startswith(self.prefix + "-") and name.endswith(".sock")]
