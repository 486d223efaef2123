"""Messages between the command line and its daemon: JSON objects, each after its length (4 bytes,
big-endian), over a Unix stream socket."""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

_LENGTH = struct.Struct(">I")
MAX_MESSAGE = 1 << 30


class WireError(Exception):
    """The other end closed the connection, or sent something that is not a message."""


def send(connection: socket.socket, message: dict[str, Any]) -> None:
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


def receive(connection: socket.socket) -> dict[str, Any]:
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
