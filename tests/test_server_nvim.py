"""End to end with a real editor: headless Neovim runs the README's recipe (as after/ftplugin/python.lua),
which starts `etrace-lint server`; a model saved there shows its finding. Skipped where `nvim` is not
installed. Debian 12's Neovim is 0.7, which has no vim.lsp.start: the recipe's other branch."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, fixture

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed")


def _readme_recipe() -> str:
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    section = readme[readme.index("**Neovim**"):]
    return re.search(r"```lua\n(.*?)```", section, re.DOTALL).group(1)


def test_neovim_runs_the_readme_recipe_and_shows_the_finding_of_a_saved_model(tmp_path):
    pytest.importorskip("pygls")
    bin_dir = os.path.dirname(sys.executable)
    if shutil.which("etrace-lint", path=bin_dir) is None:
        pytest.skip("the etrace-lint script is not installed beside this Python")
    root = tmp_path / "models"
    shutil.copytree(fixture("server", "workspace"), root)
    after = tmp_path / "config" / "after" / "ftplugin"
    after.mkdir(parents=True)
    (after / "python.lua").write_text(_readme_recipe())
    model = root / "rnn.py"
    lines = model.read_text().splitlines()
    bad_line = 16
    # the file starts clean; the edit made in Neovim and saved there brings the finding
    lines[bad_line - 1] = "        drive = braintrace.matmul(x, self.w_in.value)"
    model.write_text("\n".join(lines) + "\n")
    out = tmp_path / "diagnostics.txt"
    env = dict(os.environ, ETL_CONFIG=str(tmp_path / "config"), ETL_FILE=str(model), ETL_OTHER=str(root / "train.py"),
               ETL_OUT=str(out), ETL_LINE=str(bad_line), ETL_TEXT="        drive = x @ self.w_in.value",
               PATH=os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
               PYTHONPATH=os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")])),
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    # started from the folder above the project: the recipe finds the project's root from the file
    subprocess.run([NVIM, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {fixture('server', 'nvim_lint.lua')}"],
                   env=env, cwd=tmp_path, timeout=300, capture_output=True, check=False)
    status, clients, *diagnostics = out.read_text().splitlines()
    assert status == "linted", (status, clients, diagnostics)
    assert clients == f"clients|1|{root}", "one server for the project's two files, rooted at its pyproject.toml"
    assert "x @ self.w_in.value" in model.read_text()  # Neovim wrote the edit
    [entry] = diagnostics
    line, col, code, source, severity, message = entry.split("|", 5)
    assert (int(line), code, source, int(severity)) == (bad_line, "ETL201", "etrace-lint", 2)
    assert int(col) == len("        drive = ")
    assert "w_in" in message and "[etrace_target_rnn]" in message
