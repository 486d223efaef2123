"""Messages between the command line and its daemon: JSON objects, each after its length (4 bytes,
big-endian), over a Unix stream socket."""

from __future__ import annotations

import json
import socket
import struct
from dataclasses import dataclass

from ...core.json_types import JsonObject, JsonValue

_LENGTH = struct.Struct(">I")
MAX_MESSAGE = 1 << 30


class WireError(Exception):
    """The other end closed the connection, or sent something that is not a message."""


def send(connection: socket.socket, message: JsonObject) -> None:
    data = json.dumps(message).encode("utf-8")
    connection.sendall(_LENGTH.pack(len(data)) + data)


def _exactly(connection: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = connection.recv(min(size, 1 << 20))
        if not chunk:
            raise WireError("the connection closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def receive(connection: socket.socket) -> JsonObject:
    """The next message; a timeout set on ``connection`` raises ``TimeoutError``."""
    (size,) = _LENGTH.unpack(_exactly(connection, _LENGTH.size))
    if size > MAX_MESSAGE:
        raise WireError(f"a message of {size} bytes")
    try:
        message = json.loads(_exactly(connection, size).decode("utf-8"))
    except ValueError as exc:
        raise WireError(f"not a message: {exc}") from None
    if not isinstance(message, dict):
        raise WireError("not a message: not an object")
    return message


def _strings(value: JsonValue, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise WireError(f"{what}: not a list of strings")
    return [item for item in value if isinstance(item, str)]


@dataclass(frozen=True)
class LintRequest:
    """A command line for the daemon to run as a fresh ``etrace-lint`` would: in the caller's folder,
    under its environment, writing as its streams would (a terminal's colours, its encoding)."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    tty: dict[str, bool]  # "stdout", "stderr": whether the caller's stream is a terminal
    encoding: str
    digest: str  # the daemon it is meant for (see .key)
    idle_timeout: float

    def to_json(self) -> JsonObject:
        return {"kind": "lint", "argv": list(self.argv), "cwd": self.cwd, "env": dict(self.env),
                "tty": dict(self.tty), "encoding": self.encoding, "digest": self.digest,
                "idle_timeout": self.idle_timeout}

    @classmethod
    def from_json(cls, message: JsonObject) -> LintRequest:
        """The request a ``lint`` message holds; WireError for one that is not a request."""
        cwd, env, tty = message.get("cwd"), message.get("env"), message.get("tty", {})
        encoding, digest, idle = message.get("encoding", "utf-8"), message.get("digest"), message.get("idle_timeout")
        if not isinstance(cwd, str) or not isinstance(encoding, str) or not isinstance(digest, str):
            raise WireError("a lint request without its folder, encoding or digest")
        if not isinstance(env, dict) or not all(isinstance(value, str) for value in env.values()):
            raise WireError("a lint request whose environment is not strings")
        if not isinstance(tty, dict) or isinstance(idle, bool) or not isinstance(idle, (int, float)):
            raise WireError("a lint request without its streams or idle time")
        return cls(_strings(message.get("argv"), "argv"), cwd,
                   {name: value for name, value in env.items() if isinstance(value, str)},
                   {name: bool(value) for name, value in tty.items()}, encoding, digest, float(idle))


def printed(message: JsonObject) -> list[tuple[str, str]]:
    """What a run printed, as a ``done`` message holds it: (stream, text) in order; WireError for
    anything else."""
    output = message.get("output", [])
    if not isinstance(output, list):
        raise WireError("a run's output that is not a list")
    pairs = []
    for item in output:
        pair = _strings(item, "a run's output")
        if len(pair) != 2:
            raise WireError("a run's output that is not (stream, text) pairs")
        pairs.append((pair[0], pair[1]))
    return pairs
