"""Work-done progress for one lint or verify: created on the event loop, reported from a lane's thread."""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..discovery.discover import TargetSpec


class WorkDone:
    """A progress bar the lint does not wait for: the client is asked for a token when the lint starts, and
    the bar begins once it answers. A client that is slow to answer, or never does, delays no lint; the bar
    of a lint that ended before the answer came begins and ends at once, so every lint shows its bar."""

    def __init__(self, server: LanguageServer, title: str, on_cancel: Callable[[], None]) -> None:
        self.server = server
        self.title = title
        self.on_cancel = on_cancel
        self.token: str | None = None
        self._loop = asyncio.get_running_loop()
        self._last: tuple[int, int] | None = None
        self._ended: str | None = None  # the end's message, once the lint has ended

    def _supported(self) -> bool:
        window = self.server.client_capabilities.window
        return bool(window and window.work_done_progress)

    def start(self) -> None:
        """Ask the client for a token (on the event loop); the bar begins when it answers."""
        if self._supported():
            self._loop.create_task(self._begin())

    async def _begin(self) -> None:
        token = f"etrace-lint-{uuid.uuid4()}"
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception:  # refused: lint without a progress bar
            return
        self.token = token
        self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=self.title, cancellable=True, percentage=0))
        future = self.server.work_done_progress.tokens.get(token)
        if future is not None:
            future.add_done_callback(lambda f: f.cancelled() and self.on_cancel())
        if self._ended is not None:
            self._finish(self._ended)

    def report(self, done: int, total: int, spec: TargetSpec) -> None:
        """Called from a lane's thread; sends only what changed, once the bar has begun."""
        if (done, total) == self._last:
            return
        self._last = (done, total)
        message = f"{done}/{total} models, {os.path.basename(spec.path)}::{spec.factory}"
        value = types.WorkDoneProgressReport(message=message, percentage=int(100 * done / max(1, total)))
        self._loop.call_soon_threadsafe(self._report, value)

    def _report(self, value: types.WorkDoneProgressReport) -> None:
        if self.token is not None and self._ended is None:
            self.server.work_done_progress.report(self.token, value)

    def end(self, message: str) -> None:
        """On the event loop: end the bar now, or as soon as it begins."""
        self._ended = message
        if self.token is not None:
            self._finish(message)

    def _finish(self, message: str) -> None:
        assert self.token is not None
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(self.token, None)
        self.token = None
