"""What the workers write on their stderr, on the stderr of the run they work for.

In a direct run a worker's stderr is the caller's (a model that prints, a library's warning). The
daemon's workers inherit its file descriptor 2, so the daemon makes it a pipe: what comes through
goes, in order with what the run itself prints, to the run's captured output, and between runs to
the daemon's log. A thread drains the pipe, so that a worker that prints much never blocks.
"""

from __future__ import annotations

import os
import select
import threading

RAW = "stderr-bytes"  # bytes as they came, carried one character per byte (latin-1)


class Relay:
    def __init__(self) -> None:
        self.log = os.dup(2)
        read_end, write_end = os.pipe()
        os.dup2(write_end, 2)
        os.close(write_end)
        self._read_end = read_end
        self.lock = threading.Lock()
        self._output: list[list[str]] | None = None
        threading.Thread(target=self._drain, name="etrace-lint-daemon-relay", daemon=True).start()

    def _drain(self) -> None:
        while True:
            select.select([self._read_end], [], [])
            with self.lock:
                if not self.take():
                    return

    def take(self) -> bool:
        """Move what the pipe holds now to the run's output or the log; call it holding the lock.
        False when the pipe is closed."""
        while select.select([self._read_end], [], [], 0)[0]:
            data = os.read(self._read_end, 1 << 16)
            if not data:
                return False
            if self._output is None:
                os.write(self.log, data)
            elif self._output and self._output[-1][0] == RAW:
                self._output[-1][1] += data.decode("latin-1")
            else:
                self._output.append([RAW, data.decode("latin-1")])
        return True

    def start(self, output: list[list[str]]) -> None:
        with self.lock:
            self.take()
            self._output = output

    def stop(self) -> None:
        """After a run: what its workers wrote before they answered is in the pipe by now."""
        with self.lock:
            self.take()
            self._output = None
