"""On a terminal, a first run says what it is doing from its first second: the workers' imports."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys

from helpers import fixture


def _run_on_a_terminal(args: list[str], cwd: str) -> tuple[int, str]:
    """Run the command line with stderr on a pseudo-terminal; what the terminal showed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "etrace_lint", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process is gone
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return proc.wait(timeout=600), shown.decode("utf-8", "replace")


def test_the_first_run_names_what_it_imports_before_any_model_is_done(tmp_path):
    shutil.copy(fixture("clean", "lstm.py"), tmp_path / "lstm.py")
    code, shown = _run_on_a_terminal(["lstm.py", "--cache-dir", str(tmp_path / "cache")], str(tmp_path))
    assert code == 0, shown  # the probe measures braintrace's LSTMCell's doubled gates: ETL412 notes
    updates = [part for part in shown.split("\r") if part.strip()]
    assert updates, "nothing was shown on the terminal"
    assert updates[0].startswith("etrace-lint: importing jax, brainstate, braintrace ("), updates
    assert updates[0].rstrip().endswith("s), 1 to lint"), updates
    assert any(part.startswith("etrace-lint: 0/1 models linted, lstm.py::") for part in updates), updates
    assert shown.endswith("\r"), "the line is erased at the end"
    # from the cache, no worker starts and nothing is imported: nothing to say
    code, again = _run_on_a_terminal(["lstm.py", "--cache-dir", str(tmp_path / "cache")], str(tmp_path))
    assert code == 0 and "importing" not in again
