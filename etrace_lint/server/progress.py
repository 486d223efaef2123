"""Work-done progress for one lint or verify: created on the event loop, reported from the lint thread."""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..discovery.discover import TargetSpec

_CREATE_LIMIT = 5.0  # a client that never answers the create request gets no progress


class WorkDone:
    def __init__(self, server: LanguageServer, title: str, on_cancel: Callable[[], None]) -> None:
        self.server = server
        self.title = title
        self.on_cancel = on_cancel
        self.token: str | None = None
        self._loop = asyncio.get_running_loop()
        self._last: tuple[int, int] | None = None

    def _supported(self) -> bool:
        window = self.server.client_capabilities.window
        return bool(window and window.work_done_progress)

    async def begin(self) -> None:
        if not self._supported():
            return
        token = f"etrace-lint-{uuid.uuid4()}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token), _CREATE_LIMIT)
        except Exception:  # refused or unanswered: lint without a progress bar
            return
        self.token = token
        self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=self.title, cancellable=True, percentage=0))
        future = self.server.work_done_progress.tokens.get(token)
        if future is not None:
            future.add_done_callback(lambda f: f.cancelled() and self.on_cancel())

    def report(self, done: int, total: int, spec: TargetSpec) -> None:
        """Called from the lint thread; sends only what changed."""
        if self.token is None or (done, total) == self._last:
            return
        self._last = (done, total)
        message = f"{done}/{total} models, {os.path.basename(spec.path)}::{spec.factory}"
        value = types.WorkDoneProgressReport(message=message, percentage=int(100 * done / max(1, total)))
        self._loop.call_soon_threadsafe(self.server.work_done_progress.report, self.token, value)

    def end(self, message: str) -> None:
        if self.token is None:
            return
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(self.token, None)
        self.token = None
