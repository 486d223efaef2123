"""End to end with a real editor: headless Neovim attaches `etrace-lint server`, saves a model,
and holds the diagnostics. Skipped where `nvim` is not installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, fixture

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed")


def test_neovim_shows_the_finding_of_a_saved_model(tmp_path):
    pytest.importorskip("pygls")
    root = tmp_path / "models"
    shutil.copytree(fixture("server", "workspace"), root)
    model = root / "rnn.py"
    lines = model.read_text().splitlines()
    bad_line = 16
    # the file starts clean; the edit made in Neovim and saved there brings the finding
    lines[bad_line - 1] = "        drive = braintrace.matmul(x, self.w_in.value)"
    model.write_text("\n".join(lines) + "\n")
    out = tmp_path / "diagnostics.txt"
    env = dict(os.environ, ETL_PYTHON=sys.executable, ETL_ROOT=str(root), ETL_FILE=str(model), ETL_OUT=str(out),
               ETL_LINE=str(bad_line), ETL_TEXT="        drive = x @ self.w_in.value",
               PYTHONPATH=os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")])),
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    subprocess.run([NVIM, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {fixture('server', 'nvim_lint.lua')}"],
                   env=env, cwd=root, timeout=300, capture_output=True, check=False)
    status, *diagnostics = out.read_text().splitlines()
    assert status == "linted", (status, diagnostics)
    assert "x @ self.w_in.value" in model.read_text()  # Neovim wrote the edit
    [entry] = diagnostics
    line, col, code, source, severity, message = entry.split("|", 5)
    assert (int(line), code, source, int(severity)) == (bad_line, "ETL201", "etrace-lint", 2)
    assert int(col) == len("        drive = ")
    assert "w_in" in message and "[etrace_target_rnn]" in message
