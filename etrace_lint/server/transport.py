"""The server's stdio loop: frames from ``framing``, messages to pygls's protocol, an answer to every request.

pygls's own loop trusts each ``Content-Length`` and drops a request whose
params do not fit the method (it logs and sends nothing, so the editor waits
forever). This loop reads frames with ``FrameReader``, which recovers from
bad ones, and answers every request it cannot hand on:

- params that do not fit the method: -32602 (Invalid params), naming what
  did not fit;
- a message that is not JSON-RPC 2.0, or whose id is not a string or number:
  -32600 (Invalid Request), with its id where it has a usable one;
- a request after ``shutdown``: -32600, and one before ``initialize``:
  -32002 (ServerNotInitialized), as the protocol asks; a notification or
  response after ``shutdown`` (other than ``exit``) is dropped quietly.

A frame that cannot be read, and a notification whose params do not fit,
are logged to the client once (``window/logMessage``) and to the server's log.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
from dataclasses import dataclass
from typing import BinaryIO, Callable, TypeGuard

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcServerNotInitialized
from pygls.protocol import JsonRPCProtocol

from .framing import BadFrame, FrameReader, JsonObject, Message

log = logging.getLogger(__name__)

_READ_SIZE = 65536


@dataclass(frozen=True)
class Lifecycle:
    """What the loop asks the server: where it stands, and how to tell the client something."""

    tell_client: Callable[[str], None]
    initialized: Callable[[], bool]
    shutting_down: Callable[[], bool]


def _read_stdin(stdin: BinaryIO, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes]) -> None:
    """In a daemon thread: a blocked read must not keep the process alive after ``exit``. It reads
    the file descriptor itself: a daemon thread blocked inside a buffered reader holds its lock, and
    the interpreter aborts when it finds that lock taken at exit."""
    read: Callable[[int], bytes]
    try:
        fd = stdin.fileno()
        read = functools.partial(os.read, fd)
    except (AttributeError, OSError, ValueError):  # not a real file: a test's stream
        read = getattr(stdin, "read1", stdin.read)
    try:
        while chunk := read(_READ_SIZE):
            loop.call_soon_threadsafe(queue.put_nowait, chunk)
    except (OSError, ValueError):
        log.exception("reading stdin failed")
    except RuntimeError:  # the loop has closed (the server ended on `exit`) while a read was pending
        return
    try:
        loop.call_soon_threadsafe(queue.put_nowait, b"")  # the end of the input
    except RuntimeError:
        pass


async def serve(protocol: JsonRPCProtocol, stdin: BinaryIO, stop: threading.Event, server: Lifecycle) -> None:
    """Read messages from ``stdin`` until it closes or ``stop`` is set; hand each to ``protocol``."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    threading.Thread(target=_read_stdin, args=(stdin, loop, queue), name="etrace-lint-stdin", daemon=True).start()
    frames = FrameReader()
    while not stop.is_set():
        chunk = await queue.get()
        if not chunk:
            break
        for event in frames.feed(chunk):
            if isinstance(event, BadFrame):
                log.warning("unreadable input: %s", event.description)
                server.tell_client(f"etrace-lint: unreadable input, skipped: {event.description}")
            elif isinstance(event, Message):
                try:
                    dispatch(protocol, event.data, server)
                except Exception:  # one message the server cannot handle must not end the loop
                    log.exception("handling %s failed", event.data.get("method", "a message"))


def _is_request(data: JsonObject) -> bool:
    return "method" in data and "id" in data


def _usable_id(value: object) -> TypeGuard[str | int]:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def dispatch(protocol: JsonRPCProtocol, data: JsonObject, server: Lifecycle) -> None:
    """Hand one decoded message to the protocol, or answer (or log) why it cannot be handled."""
    method = data.get("method")
    tell_client = server.tell_client
    if data.get("jsonrpc") != "2.0" or ("id" in data and not _usable_id(data["id"]) and data["id"] is not None):
        _refuse(protocol, data, JsonRpcInvalidRequest(message="Invalid Request: not a JSON-RPC 2.0 message "
                                                              "with a string or number id"), tell_client)
        return
    if _is_request(data) and method != types.INITIALIZE and not server.initialized():
        _refuse(protocol, data, JsonRpcServerNotInitialized(message=f"Server not initialized: {method} before "
                                                                    "initialize"), tell_client)
        return
    if _is_request(data) and server.shutting_down():
        _refuse(protocol, data, JsonRpcInvalidRequest(message=f"Invalid Request: {method} after shutdown"),
                tell_client)
        return
    if server.shutting_down() and method != types.EXIT:
        # the protocol drops a notification or a response after shutdown; one a client sends while it
        # closes (didClose, a late answer) is usual, not a fault worth a warning
        log.debug("after shutdown, dropped: %s", method or "a response")
        return
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as exc:
        cause = exc.__cause__
        detail = "; ".join(cattrs.transform_error(cause)) if isinstance(cause, cattrs.BaseValidationError) \
            else str(cause or exc)
        _refuse(protocol, data, JsonRpcInvalidParams(message=f"Invalid params for {method}: {detail}"), tell_client)
        return
    protocol.handle_message(message)


def _refuse(protocol: JsonRPCProtocol, data: JsonObject, error: JsonRpcException,
            tell_client: Callable[[str], None]) -> None:
    """A request gets the error as its response; anything else is logged, as it has no one to answer."""
    if _is_request(data):
        msg_id = data["id"] if _usable_id(data["id"]) else None
        log.warning("request %r (%s) refused: %s", msg_id, data.get("method"), error.message)
        # pygls's one way to send an error. A request whose id cannot be used is answered with a null id, which
        # pygls sends (its ResponseErrorMessage.id is Optional) though its MsgId annotation leaves None out
        protocol._send_response(msg_id, error=error.to_response_error())  # type: ignore[arg-type]  # MsgId omits None
    else:
        log.warning("message ignored: %s", error.message)
        tell_client(f"etrace-lint: message ignored: {error.message}")
