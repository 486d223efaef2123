"""What a run in the daemon prints, kept in order for the caller to print.

The run sees streams that answer ``isatty`` as the caller's do (colour and the progress line
follow the caller's terminal), and the caller's encoding.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from .relay import Relay


class CapturedStream(io.TextIOBase):
    """A text stream that appends what is written to a shared list of ``[name, text]``; with a
    relay, after what the workers wrote before it (the relay's lock keeps the list in order)."""

    def __init__(self, name: str, output: list[list[str]], tty: bool, encoding: str, relay: Relay | None) -> None:
        super().__init__()
        self._name, self._output, self._tty, self._encoding = name, output, tty, encoding
        self._relay = relay

    @property  # read-only on io.TextIOBase, which typeshed declares a plain attribute
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "strict"

    def isatty(self) -> bool:
        return self._tty

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            if self._relay is None:
                self._append(text)
            else:
                with self._relay.lock:
                    self._relay.take()
                    self._append(text)
        return len(text)

    def _append(self, text: str) -> None:
        if self._output and self._output[-1][0] == self._name:
            self._output[-1][1] += text
        else:
            self._output.append([self._name, text])


@contextmanager
def captured(tty: dict[str, bool], encoding: str = "utf-8", relay: Relay | None = None) -> Iterator[list[list[str]]]:
    """``sys.stdout`` and ``sys.stderr`` replaced for the block, and the workers' stderr relayed into
    it; yields what they were given."""
    output: list[list[str]] = []
    saved = sys.stdout, sys.stderr
    sys.stdout = CapturedStream("stdout", output, bool(tty.get("stdout")), encoding, relay)
    sys.stderr = CapturedStream("stderr", output, bool(tty.get("stderr")), encoding, relay)
    if relay is not None:
        relay.start(output)
    try:
        yield output
    finally:
        sys.stdout, sys.stderr = saved
        if relay is not None:
            relay.stop()
