"""A live progress line on a terminal, for runs that take more than a second."""

from __future__ import annotations

import os
import sys
import time


class Progress:
    def __init__(self, enabled: bool, stream=None, delay: float = 1.0):
        self.stream = stream or sys.stderr
        self.enabled = enabled and self.stream.isatty()
        self.start = time.monotonic()
        self.delay = delay
        self.shown = False

    def __call__(self, done: int, total: int, spec) -> None:
        if not self.enabled or time.monotonic() - self.start < self.delay:
            return
        width = 79
        text = f"[{done}/{total}] {os.path.basename(spec.path)}::{spec.factory}"
        self.stream.write("\r" + text[:width].ljust(width))
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 79 + "\r")
            self.stream.flush()
