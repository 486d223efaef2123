"""Linting runs the user's code; what runs, and in which environment, is visible and under control."""

from __future__ import annotations

import json
import os
import textwrap

from in_process import run_cli

HOSTILE = """
import pathlib
pathlib.Path(__file__).with_name("imported.marker").write_text("ran")
raise RuntimeError("importing this file has side effects")


def etrace_target_never_called():
    pathlib.Path(__file__).with_name("called.marker").write_text("ran")


import etrace_lint


@etrace_lint.target(name="named")
def decorated():
    pass
"""

READS_SECRET = """
import os


def etrace_target_reads_secret():
    raise ValueError(f"secret={os.environ.get('ETL_TEST_SECRET')!r} token={os.environ.get('ETL_TEST_TOKEN_A')!r} "
                     f"home={'HOME' in os.environ}")
"""


def test_list_targets_imports_nothing(tmp_path):
    source = textwrap.dedent(HOSTILE).lstrip()
    (tmp_path / "hostile.py").write_text(source, encoding="utf-8")
    lines = source.splitlines()
    first = lines.index("def etrace_target_never_called():") + 1
    second = lines.index("def decorated():") + 1
    text = run_cli(".", "--list-targets", cwd=str(tmp_path))
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines() == [f"hostile.py:{first}: etrace_target_never_called",
                                        f"hostile.py:{second}: decorated [named]"]
    as_json = run_cli(".", "--list-targets", "--output-format", "json", cwd=str(tmp_path))
    assert json.loads(as_json.stdout)["targets"] == [
        {"path": "hostile.py", "line": first, "factory": "etrace_target_never_called",
         "name": "etrace_target_never_called"},
        {"path": "hostile.py", "line": second, "factory": "decorated", "name": "named"}]
    assert sorted(os.listdir(tmp_path)) == ["hostile.py"], "nothing was imported, called or cached"


def _secret_error(tmp_path, *args, env_extra=None):
    env = dict(os.environ, ETL_TEST_SECRET="s3cr3t", ETL_TEST_TOKEN_A="tok", **(env_extra or {}))
    proc = run_cli("model.py", "--no-cache", "--output-format", "json", *args, cwd=str(tmp_path), env=env)
    errors = json.loads(proc.stdout)["toolErrors"]
    assert len(errors) == 1, proc.stdout + proc.stderr
    return errors[0]["message"]


def test_dropped_variables_are_unset_before_model_code_runs(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent(READS_SECRET).lstrip(), encoding="utf-8")
    assert "secret='s3cr3t' token='tok'" in _secret_error(tmp_path)
    dropped = _secret_error(tmp_path, "--drop-env", "ETL_TEST_SECRET,ETL_TEST_TOKEN_*")
    assert "secret=None token=None home=True" in dropped
    (tmp_path / "pyproject.toml").write_text('[tool.etrace-lint]\ndrop-env = ["ETL_TEST_SECRET"]\n')
    assert "secret=None token='tok'" in _secret_error(tmp_path)
