"""A live progress line on a terminal, for runs that take more than a second.

Nothing is written when stderr is not a terminal (CI logs, pre-commit,
pipes) or with ``-q``; the line is erased before the report is printed.
"""

from __future__ import annotations

import os
import shutil
import sys
import time


class Progress:
    def __init__(self, enabled: bool, stream=None, delay: float = 1.0):
        self.stream = stream or sys.stderr
        try:
            is_tty = self.stream.isatty()
        except (AttributeError, ValueError):
            is_tty = False
        self.enabled = enabled and is_tty
        self.start = time.monotonic()
        self.delay = delay
        self.width = 0
        self.last = ""

    def __call__(self, done: int, total: int, spec) -> None:
        if not self.enabled or time.monotonic() - self.start < self.delay:
            return
        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        text = f"etrace-lint: {done}/{total} models linted, {os.path.basename(spec.path)}::{spec.factory}"
        text = text[:width]
        if text == self.last:
            return
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width, self.last = max(self.width, len(text)), text

    def close(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
