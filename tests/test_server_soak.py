"""A soak through the protocol: random saves (clean and flagged models, a syntax error, a failed import,
a crash, a hang, a raising factory) with bad frames between them. Each save's diagnostics equal the
command line's verdict on the same content; the server's memory stays flat; nothing outlives it.

The long form is `python bench/bench_server.py --soak 300`.
"""

from __future__ import annotations

import sys
import time

import pytest

pytest.importorskip("pygls")

from helpers import fixture  # noqa: E402

sys.path.insert(0, fixture("server"))
from raw_client import RawClient, uri  # noqa: E402
from soak import KINDS, alive, cli_verdicts, descendants, run_soak, write_workspace  # noqa: E402

SAVES = 30
TIMEOUT = 10  # s: a hanging target costs this; a model must lint well within it on a loaded machine


def test_random_saves_match_the_command_line_and_leave_nothing_behind(tmp_path):
    result = run_soak(str(tmp_path / "workspace"), saves=SAVES, seed=2026, timeout=TIMEOUT, hangs=1)
    assert {kind for kind, _ in result.saves} == set(KINDS)
    expected = cli_verdicts(str(tmp_path), [text for _, text in result.saves], TIMEOUT)
    wrong = [(number, kind, got, want) for number, ((kind, _), got, want)
             in enumerate(zip(result.saves, result.published, expected)) if got != want]
    assert not wrong, wrong[:3]
    assert any(verdict for verdict in expected), "the soak saw findings and tool errors, not only clean files"
    assert result.extra_publications == 0, "one publication per save"
    assert result.bad_frames_sent and result.bad_frames_logged == result.bad_frames_sent
    assert result.rss_last <= 1.2 * result.rss_first, (result.rss_first, result.rss_last)
    assert result.exit_code == 0
    assert result.left_behind == [], "workers or the fork server outlived the server"


def test_a_client_that_dies_without_shutdown_takes_the_server_and_its_workers_with_it(tmp_path):
    """An editor killed outright sends no shutdown: the server sees its input end and stops everything."""
    path = write_workspace(str(tmp_path), timeout=TIMEOUT)
    client = RawClient(tmp_path)
    try:
        client.open(path)
        client.wait_for(lambda c: uri(path) in c.diagnostics, 120, "the first lint")
        processes = descendants(client.process.pid)
        assert processes, "the workers and the fork server run below the server"
        client.process.stdin.close()  # the client is gone
        assert client.process.wait(timeout=60) == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()
    deadline = time.monotonic() + 30
    while [p for p in processes if alive(p)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p for p in processes if alive(p)] == []
