"""A lint or a verify of `etrace-lint server` that the editor stops (the progress bar's cancel,
``$/cancelRequest``, shutdown) stops the worker running its target, and what the target started, as
``--timeout`` stops them; the server goes on linting.

The target hangs (a timeout far beyond the test), so only stopping the lint can end it; it writes the pids
of its process and of the process it started to a file before it loops, which the tests wait on.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time

import pytest

pytest.importorskip("pygls")
from helpers import ended, fixture  # noqa: E402
from lsprotocol import types  # noqa: E402

sys.path.insert(0, fixture("server"))
from lsp_session import LspSession, uri  # noqa: E402

RNN_BAD_LINE = 16  # `drive = x @ self.w_in.value` in rnn.py
SETTINGS = "[tool.etrace-lint]\ntimeout = 600\n"


def _workspace(root) -> str:
    (root / "pyproject.toml").write_text(SETTINGS, encoding="utf-8")
    return str(root)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    root = _workspace(tmp_path_factory.mktemp("stops"))
    lsp = LspSession(root, init_options={"trusted": True})
    yield lsp
    lsp.close()


def _hanging(root: str, name: str) -> tuple[str, str]:
    """The hanging target in a folder of its own: its file, and the file its pids will be in."""
    folder = os.path.join(root, name)
    os.makedirs(folder)
    shutil.copy(fixture("hermetic", "stopped", "hangs_marked.py"), folder)
    return os.path.join(folder, "hangs_marked.py"), os.path.join(folder, "hangs_marked.pids")


def _started(session: LspSession, marker: str) -> list[int]:
    """The processes running the target, once it runs."""
    session.wait_for(lambda s: os.path.exists(marker), timeout=300, what="the hanging target to start")
    with open(marker, encoding="utf-8") as handle:
        return [int(pid) for pid in handle.read().split()]


def _ended(pids: list[int], since: float) -> bool:
    seconds = ended(pids, since)
    if seconds is not None:
        print(f"the target's processes ended {seconds:.2f} s after the request to stop")
    return seconds is not None


def _goes_on(session: LspSession, root: str, name: str) -> None:
    path = os.path.join(root, name)
    shutil.copy(fixture("server", "workspace", "rnn.py"), path)
    session.open(path)
    session.wait_for(lambda s: uri(path) in s.diagnostics and (RNN_BAD_LINE, "ETL201") in s.codes(path),
                     what="the next lint's diagnostics")


def test_cancelling_a_lint_from_its_progress_stops_its_worker(session):
    path, marker = _hanging(session.workspace, "progress")
    begun = len(session.progress)
    session.open(path)
    pids = _started(session, marker)

    def token(s: LspSession) -> str | None:
        for params in s.progress[begun:]:
            value = params.value if isinstance(params.value, dict) else vars(params.value)
            if value.get("kind") == "begin" and "hangs_marked.py" in value.get("title", ""):
                return str(params.token)
        return None

    found = session.wait_for(token, what="the lint's progress")
    since = time.monotonic()
    session._on_loop(session.client.protocol.notify, types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                     types.WorkDoneProgressCancelParams(token=found))
    assert _ended(pids, since), "the cancelled lint's target kept running"
    _goes_on(session, session.workspace, "after_progress_cancel.py")


def test_cancel_request_stops_the_worker_of_a_verify(session):
    path, marker = _hanging(session.workspace, "verify")  # not opened: only the verify runs it

    async def verify() -> object:
        return await session.client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="etrace-lint.verify", arguments=[uri(path)]), msg_id="verify-hangs")

    answer = asyncio.run_coroutine_threadsafe(verify(), session.loop)
    pids = _started(session, marker)
    since = time.monotonic()
    session._on_loop(session.client.protocol.notify, types.CANCEL_REQUEST, types.CancelParams(id="verify-hangs"))
    assert _ended(pids, since), "the cancelled verify's target kept running"
    with pytest.raises(Exception, match="cancel"):
        answer.result(timeout=30)
    _goes_on(session, session.workspace, "after_cancel_request.py")


def test_shutdown_stops_the_lint_in_flight_and_its_worker(tmp_path):
    root = _workspace(tmp_path)
    path, marker = _hanging(root, "shutdown")
    lsp = LspSession(root, init_options={"trusted": True})
    try:
        lsp.open(path)
        pids = _started(lsp, marker)
        since = time.monotonic()
    finally:
        lsp.close()  # shutdown, exit: the server ends
    assert lsp.client._server.returncode == 0
    assert _ended(pids, since), "the target outlived the server's shutdown"
