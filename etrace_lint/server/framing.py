"""Base-protocol frames (``Content-Length: N`` headers, then N bytes of JSON) from a byte stream.

An editor, a proxy or a stray ``print`` can send a frame whose length is
wrong, or bytes that are no frame at all. A reader that trusts the length
stays out of step for good: the leftover bytes are glued onto the next
header, and no later message is ever found. This reader recovers instead:

- bytes before a header are skipped (junk, or the tail of a frame whose
  length was too small);
- a frame whose length runs past the start of the next header is cut
  there: a raw ``Content-Length: N`` line followed by a line break can never
  be part of a JSON text (JSON strings cannot hold a raw line break, and
  outside strings the words are not JSON), so a header inside a body is
  always the next frame, whatever the length said;
- a body that is not a JSON object is a bad frame.

Each bad frame is reported once, together with the bytes skipped right
after it. No event depends on timing: only on the bytes received so far.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TypeAlias

_NAME = rb"[A-Za-z][A-Za-z0-9-]*"
_LINE = _NAME + rb"[ \t]*:[^\r\n]*\r\n"
_LENGTH_LINE = re.compile(rb"Content-Length[ \t]*:[ \t]*(\d+)[ \t]*\r\n", re.IGNORECASE)
_OTHER_HEADERS = re.compile(rb"(?:" + _LINE + rb")*\r\n")  # after Content-Length, to the blank line
_HEADERS = re.compile(rb"(?:" + _LINE + rb")*")  # header lines before Content-Length
_ARRIVING = re.compile(rb"(?:" + _LINE + rb")*(?:" + _NAME + rb"(?:[ \t]*:[^\r\n]*)?\r?|\r)?")  # a header, cut short
_KEEP_WITHOUT_HEADER = 4096  # a header split across reads is at most this long
_PREVIEW = 60

JsonObject: TypeAlias = dict[str, object]  # a decoded JSON object, as the client sent it


@dataclass(frozen=True)
class Message:
    """A frame whose body is a JSON object."""

    data: JsonObject


@dataclass(frozen=True)
class BadFrame:
    """Bytes that were not a readable frame, described for the log."""

    description: str


def _preview(data: bytes) -> str:
    text = data[:_PREVIEW].decode("utf-8", errors="replace")
    return repr(text) + ("..." if len(data) > _PREVIEW else "")


class FrameReader:
    """Feed it bytes as they arrive; it returns the messages and bad frames they complete."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._skipped = 0  # bytes dropped while no header was in sight
        self._after_bad = False  # bytes skipped right after a bad frame belong to its report

    def feed(self, data: bytes) -> list[Message | BadFrame]:
        self._buffer.extend(data)
        events: list[Message | BadFrame] = []
        while (event := self._next()) is not None:
            if isinstance(event, BadFrame):
                self._after_bad = True
            elif isinstance(event, Message):
                self._after_bad = False
            events.append(event)
        return events

    def _next(self) -> Message | BadFrame | None:
        buffer = self._buffer
        match = self._header(0)
        if match is None:
            if len(buffer) > _KEEP_WITHOUT_HEADER:  # no header in sight: keep only what may start one
                drop = len(buffer) - _KEEP_WITHOUT_HEADER
                self._skipped += drop
                del buffer[:drop]
            return None
        start, body_start, length = match
        leading = bytes(buffer[:start])
        # header lines before Content-Length (a Content-Type) belong to the frame; anything else is junk
        if self._skipped or not _HEADERS.fullmatch(leading):
            count = self._skipped + start
            self._skipped = 0
            del buffer[:start]
            if self._after_bad:  # the tail of the bad frame just reported
                return self._next()
            return BadFrame(f"skipped {count} bytes that were not a frame: {_preview(leading)}")
        body_end = body_start + length
        following = self._header(body_start, before=body_end)
        if following is not None:
            next_start = following[0]
            body = bytes(buffer[body_start:next_start])
            del buffer[:next_start]
            return BadFrame(f"a frame said Content-Length: {length} but the next header came after "
                            f"{len(body)} bytes: {_preview(body)}")
        if len(buffer) < body_end:
            return None  # the rest of the body is on its way
        body = bytes(buffer[body_start:body_end])
        try:
            data = json.loads(body)
        except ValueError as exc:
            # Read its bytes again as junk: a length too small leaves the body's tail before the
            # next header, and one too large may end inside a header still arriving.
            del buffer[:body_start]
            return BadFrame(f"a frame of Content-Length: {length} is not JSON ({exc}): {_preview(body)}")
        del buffer[:body_end]
        if not isinstance(data, dict):
            return BadFrame(f"a frame of Content-Length: {length} is not a JSON object: {_preview(body)}")
        return Message(data)

    def _header(self, pos: int, before: int | None = None) -> tuple[int, int, int] | None:
        """The first complete header block at or after ``pos`` whose Content-Length line starts
        before ``before``: (where its header lines start, where its body starts, the length)."""
        buffer = self._buffer
        while (match := _LENGTH_LINE.search(buffer, pos)) is not None:
            if before is not None and match.start() >= before:
                return None
            rest = _OTHER_HEADERS.match(buffer, match.end())
            if rest is not None:
                return match.start(), rest.end(), int(match.group(1))
            if _ARRIVING.fullmatch(buffer, match.end()):
                return None  # the header block is still arriving
            pos = match.end()  # a Content-Length line not followed by headers: not a header block
        return None
