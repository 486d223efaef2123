"""A live progress line on a terminal.

Nothing is written when stderr is not a terminal (CI logs, pre-commit,
pipes) or with ``-q``; the line is erased before the report is printed.
Models that must be linted (not served by the cache) start a worker, whose
first job is to import JAX, brainstate and braintrace (tens of seconds on a
first run): from the first second the line says so, with the seconds spent,
until the first model is linted; then it counts models.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import TextIO

from ..discovery.discover import TargetSpec

WARM_LIBRARIES = "jax, brainstate, braintrace"


class Progress:
    def __init__(self, enabled: bool, stream: TextIO | None = None, delay: float = 1.0, tick: float = 0.5) -> None:
        self.stream = stream or sys.stderr
        try:
            is_tty = self.stream.isatty()
        except (AttributeError, ValueError):
            is_tty = False
        self.enabled = enabled and is_tty
        self.start = time.monotonic()
        self.delay = delay
        self.tick = tick
        self.width = 0
        self.last = ""
        self._lock = threading.Lock()
        self._first_result = threading.Event()
        self._ticker: threading.Thread | None = None

    def starting(self, count: int, preload: list[str] | tuple[str, ...] = ()) -> None:
        """Workers start for ``count`` models: say what they import until the first model is linted."""
        if not self.enabled or self._ticker is not None:
            return
        libraries = ", ".join([WARM_LIBRARIES, *preload])
        begun = time.monotonic()

        def tick() -> None:
            while not self._first_result.wait(self.tick):
                seconds = time.monotonic() - begun
                self._show(f"etrace-lint: importing {libraries} ({seconds:.0f} s), {count} to lint")

        self._ticker = threading.Thread(target=tick, name="etrace-lint-progress", daemon=True)
        self._ticker.start()

    def __call__(self, done: int, total: int, spec: TargetSpec) -> None:
        self._first_result.set()
        if not self.enabled or time.monotonic() - self.start < self.delay:
            return
        self._show(f"etrace-lint: {done}/{total} models linted, {os.path.basename(spec.path)}::{spec.factory}")

    def _show(self, text: str) -> None:
        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        text = text[:width]
        with self._lock:
            if text == self.last:
                return
            self.stream.write("\r" + text.ljust(self.width))
            self.stream.flush()
            self.width, self.last = max(self.width, len(text)), text

    def close(self) -> None:
        self._first_result.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self.width:
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
                self.width = 0
            self.last = ""
