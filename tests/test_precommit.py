"""The pre-commit hooks, run by pre-commit itself on a scratch git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from helpers import REPO, fixture

BIN = os.path.dirname(sys.executable)
PRE_COMMIT = os.path.join(BIN, "pre-commit")

pytestmark = pytest.mark.skipif(not os.path.exists(PRE_COMMIT), reason="pre-commit is not installed")


def _env(tmp_path) -> dict:
    # the system hook runs the etrace-lint of the active environment: its bin must be on PATH
    return dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""),
                PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t", NO_COLOR="1")


def _git(repo, env, *args):
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True)


def _try_repo(repo, env):
    return subprocess.run([PRE_COMMIT, "try-repo", REPO, "etrace-lint-system", "--all-files", "--color", "never"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=600)


def test_manifest_is_valid():
    proc = subprocess.run([PRE_COMMIT, "validate-manifest", os.path.join(REPO, ".pre-commit-hooks.yaml")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_system_hook_fails_on_a_finding_and_passes_when_clean(tmp_path):
    repo = tmp_path / "project"
    (repo / "models").mkdir(parents=True)
    shutil.copy(fixture("daily", "suppressed.py"), repo / "models" / "plain_ops.py")
    shutil.copy(fixture("daily", "clean.py"), repo / "models" / "clean.py")
    env = _env(tmp_path)
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", ".")
    _git(repo, env, "commit", "-qm", "models")

    failing = _try_repo(repo, env)
    output = failing.stdout + failing.stderr
    assert failing.returncode != 0, output
    assert "models/plain_ops.py:17" in output and "ETL201" in output
    assert "Traceback" not in output

    _git(repo, env, "rm", "-q", "models/plain_ops.py")
    _git(repo, env, "commit", "-qm", "only the clean model")
    passing = _try_repo(repo, env)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout


# the docs' recipe for linting what a smoke script compiles (docs/guide/run.md), as written there
RUN_RECIPE = """\
repos:
  - repo: local
    hooks:
      - id: etrace-lint-run
        name: etrace-lint run smoke.py
        entry: etrace-lint run smoke.py
        language: system
        pass_filenames: false
        types: [python]
"""


def test_the_run_recipe_lints_what_a_smoke_script_compiles(tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    shutil.copy(os.path.join(REPO, "tests", "data", "programs", "no_hidden_state.py"), repo / "smoke.py")
    (repo / ".pre-commit-config.yaml").write_text(RUN_RECIPE)
    env = _env(tmp_path)
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", ".")
    _git(repo, env, "commit", "-qm", "a smoke script")
    proc = subprocess.run([PRE_COMMIT, "run", "--all-files", "--color", "never"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "smoke.py:18:5: ETL204" in output and "[smoke.py:18 (d_rtrl)]" in output
    assert "Traceback" not in output
