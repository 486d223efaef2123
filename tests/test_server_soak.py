"""A soak through the protocol: random saves (clean and flagged models, a syntax error, a failed import,
a crash, a hang, a raising factory) with bad frames between them. Each save's diagnostics equal the
command line's verdict on the same content; the server's memory stays flat; nothing outlives it.

The long form is `python bench/bench_server.py --soak 300`.
"""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("pygls")

from helpers import fixture  # noqa: E402

sys.path.insert(0, fixture("server"))
from soak import KINDS, cli_verdicts, run_soak  # noqa: E402

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
