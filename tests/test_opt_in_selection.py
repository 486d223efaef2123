"""An opt-in rule selected by its id or name runs; a selection that cannot run says why.

ETL205 needs one online gradient step built, which costs time, so it is off by
default; ``--extend-select ETL205`` (as the documented configuration example has
it), ``check-online-grad = true`` and ``--check-online-grad`` all turn it on.

The runs share one project and one cache folder: a selection that turns the check
on is served the result of the first run that built it, and one that leaves it off
(whose cache key differs) the result without it, so a way of selecting that failed
to turn the check on would show no ETL205 here.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from helpers import REPO, fixture
from in_process import run_cli

TARGET = "models/not_differentiable.py::etrace_target_readout_while"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One project whose configuration each test writes, and the cache folder its runs share."""
    root = tmp_path_factory.mktemp("opt-in")
    (root / "models").mkdir()
    shutil.copy(fixture("own", "online_grad", "not_differentiable.py"), root / "models")
    return root


def _run(project, *args: str):
    return run_cli(TARGET, *args, "--cache-dir", "cache", cwd=str(project))


def _project(shared, pyproject: str):
    (shared / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return shared


def _rules(proc) -> list[str]:
    assert proc.returncode in (0, 1), proc.stderr
    return [finding["rule"] for finding in json.loads(proc.stdout)["findings"]]


def test_extend_select_on_the_command_line_runs_the_opt_in_rule(shared):
    project = _project(shared, "")
    selected = _run(project, "--extend-select", "ETL205", "--output-format", "json")
    # the probe, on by default, runs the step and sees it raise too (ETL410)
    assert _rules(selected) == ["ETL205", "ETL410"]
    by_name = _run(project, "--extend-select", "not-online-differentiable", "--output-format", "json")
    assert _rules(by_name) == ["ETL205", "ETL410"]
    plain = _run(project, "--output-format", "json")
    assert _rules(plain) == ["ETL410"]
    assert _rules(_run(project, "--output-format", "json", "--no-probe")) == []


def test_check_online_grad_is_a_configuration_key(shared):
    project = _project(shared, "[tool.etrace-lint]\ncheck-online-grad = true\n")
    proc = _run(project, "--output-format", "json")
    assert _rules(proc) == ["ETL205", "ETL410"]


def test_the_documented_configuration_example_works_as_written(shared):
    with open(f"{REPO}/docs/configuration.md", encoding="utf-8") as handle:
        page = handle.read()
    example = re.search(r"```toml\n(.*?)```", page, re.S).group(1)
    assert 'extend-select = ["ETL205"]' in example
    project = _project(shared, example)
    proc = _run(project, "--output-format", "json")
    assert _rules(proc) == ["ETL205", "ETL410"]
    assert "unknown key" not in proc.stderr


def test_a_selection_of_rules_that_cannot_run_says_why(shared):
    project = _project(shared, "")
    proc = _run(project, "--select", "ETL4", "--no-probe")
    assert proc.returncode == 0, proc.stderr
    assert "selection 'ETL4' has no effect: its rules run only with --probe or --verify" in proc.stderr
    # the probe's rules run by default: a selection of --verify's alone is the one that cannot run
    proc = _run(project, "--select", "ETL40")
    assert proc.returncode == 0, proc.stderr
    assert "selection 'ETL40' has no effect: its rules run only with --verify" in proc.stderr
    assert "has no effect" not in _run(project, "--select", "ETL4").stderr
