"""An opt-in rule selected by its id or name runs; a selection that cannot run says why.

ETL205 needs one online gradient step built, which costs time, so it is off by
default; ``--extend-select ETL205`` (as the README's configuration example has
it), ``check-online-grad = true`` and ``--check-online-grad`` all turn it on.
"""

from __future__ import annotations

import json
import re
import shutil

from helpers import REPO, fixture, run_cli

TARGET = "models/not_differentiable.py::etrace_target_readout_while"


def _project(tmp_path, pyproject: str):
    (tmp_path / "models").mkdir()
    shutil.copy(fixture("own", "online_grad", "not_differentiable.py"), tmp_path / "models")
    (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return tmp_path


def _rules(proc) -> list[str]:
    assert proc.returncode in (0, 1), proc.stderr
    return [finding["rule"] for finding in json.loads(proc.stdout)["findings"]]


def test_extend_select_on_the_command_line_runs_the_opt_in_rule(tmp_path):
    project = _project(tmp_path, "")
    selected = run_cli(TARGET, "--extend-select", "ETL205", "--no-cache", "--output-format", "json",
                       cwd=str(project))
    assert _rules(selected) == ["ETL205"]
    by_name = run_cli(TARGET, "--extend-select", "not-online-differentiable", "--no-cache", "--output-format",
                      "json", cwd=str(project))
    assert _rules(by_name) == ["ETL205"]
    plain = run_cli(TARGET, "--no-cache", "--output-format", "json", cwd=str(project))
    assert _rules(plain) == []


def test_check_online_grad_is_a_configuration_key(tmp_path):
    project = _project(tmp_path, "[tool.etrace-lint]\ncheck-online-grad = true\n")
    proc = run_cli(TARGET, "--no-cache", "--output-format", "json", cwd=str(project))
    assert _rules(proc) == ["ETL205"]


def test_the_readme_configuration_example_works_as_written(tmp_path):
    with open(f"{REPO}/README.md", encoding="utf-8") as handle:
        readme = handle.read()
    section = readme[readme.index("## Configuration"):]
    example = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    assert 'extend-select = ["ETL205"]' in example
    project = _project(tmp_path, example)
    proc = run_cli(TARGET, "--no-cache", "--output-format", "json", cwd=str(project))
    assert _rules(proc) == ["ETL205"]
    assert "unknown key" not in proc.stderr


def test_a_selection_of_rules_that_cannot_run_says_why(tmp_path):
    project = _project(tmp_path, "")
    proc = run_cli(TARGET, "--select", "ETL4", "--no-cache", cwd=str(project))
    assert proc.returncode == 0, proc.stderr
    assert "selection 'ETL4' has no effect: its rules run only with --probe or --verify" in proc.stderr
