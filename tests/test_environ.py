"""``dt`` and other brainstate.environ settings: a model that needs dt fails clearly without it,
and is clean with each of the three ways to set it (pyproject.toml, --environ, the decorator)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from helpers import assert_fixture, expected_markers, fixture

from etrace_lint.cli import main as cli
from etrace_lint.config.environ import EnvironError, check_value, parse_assignments, target_environ

LEAKY = fixture("environ", "leaky.py")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The environ fixtures copied into a project of their own, with one cache for every run."""
    root = tmp_path_factory.mktemp("environ")
    shutil.copytree(os.path.dirname(LEAKY), root / "models")
    return root


def lint(project, *args: str, config: str | None = None) -> tuple[int, dict]:
    """Run the CLI in-process from ``project`` (through worker processes, as users do); JSON out."""
    out = project / "out.json"
    options = ["--config", str(project / config)] if config else ["--isolated"]
    cwd = os.getcwd()
    os.chdir(project)
    try:
        code = cli.main([*args, *options, "--cache-dir", str(project / ".cache"), "-j", "1",
                         "--output-format", "json", "-o", str(out)])
    finally:
        os.chdir(cwd)
    return code, json.loads(out.read_text(encoding="utf-8"))


def _by_model(document: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for item in document["findings"] + document["toolErrors"]:
        found.setdefault(item["model"], []).append(item)
    return found


def test_unset_dt_is_one_finding_on_the_line_that_reads_it():
    findings = [f for f in assert_fixture(LEAKY) if f.level.value != "note"]
    (finding,) = findings
    ((line, _),) = expected_markers(LEAKY)
    assert (finding.rule_id, finding.level.value, finding.line) == ("ETL112", "error", line)
    message = finding.message
    assert "'dt'" in message
    for way in ("[tool.etrace-lint.environ]", "--environ dt=0.1ms", "@etrace_lint.target(environ="):
        assert way in message
    # brainstate's own KeyError text is a repr with escaped newlines; none of it reaches the user
    assert "\\n" not in message and "\n" not in message and "KeyError" not in message
    assert "not found in environment" not in message


def test_without_dt_each_target_says_what_is_missing(project):
    code, document = lint(project, "models")
    found = _by_model(document)
    assert code == 2  # the factory that reads dt cannot build its model: a tool error
    assert [f.get("rule") for f in found["etrace_target_leaky"]] == ["ETL112"], found
    # its decorator gives dt: clean, and linted before leaky.py in the same worker without leaking dt
    assert "leaky_with_dt" not in found and document["summary"]["models"] == 3
    (error,) = found["etrace_target_built_with_dt"]
    assert error["reason"] == "factory-error"
    assert "'dt'" in error["message"] and "--environ dt=0.1ms" in error["message"]
    assert "\\n" not in error["message"] and "not found in environment" not in error["message"]


def test_dt_on_the_command_line_makes_the_model_clean(project):
    lint(project, "models/leaky.py")  # cached without dt: ETL112
    code, document = lint(project, "models/leaky.py", "models/factory_reads_dt.py", "--environ", "dt=0.1ms")
    assert code == 0, document  # the cache must not serve the result that had no dt
    assert document["findings"] == [] and document["toolErrors"] == []
    _, document = lint(project, "models/leaky.py")  # and the other way round
    assert [f.get("rule") for f in _by_model(document)["etrace_target_leaky"]] == ["ETL112"], document


def test_dt_in_pyproject_makes_the_model_clean(project):
    (project / "pyproject.toml").write_text('[tool.etrace-lint.environ]\ndt = "0.1 ms"\n', encoding="utf-8")
    code, document = lint(project, "models/leaky.py", config="pyproject.toml")
    assert code == 0 and document["findings"] == [] and document["toolErrors"] == []


def test_the_decorator_wins_over_the_configuration(project):
    # a unit saiunit does not know passes the syntax check and fails in the worker,
    # as a tool error for each target that uses it, never a crash of the run
    (project / "typo.toml").write_text('[tool.etrace-lint.environ]\ndt = "0.1 mss"\n', encoding="utf-8")
    code, document = lint(project, "models/leaky.py", "models/declared.py", config="typo.toml")
    found = _by_model(document)
    assert code == 2
    (error,) = found["etrace_target_leaky"]
    assert error["reason"] == "bad-environ" and "'mss'" in error["message"] and "dt" in error["message"]
    assert "leaky_with_dt" not in found  # its own "0.1 ms" replaced the configured value: clean


def test_values_stay_plain_until_a_worker_converts_them():
    assert check_value("dt", "0.1 ms") == "0.1 ms"
    assert check_value("precision", "64") == 64 and check_value("fit", "true") is True
    assert parse_assignments("dt=0.1ms, tau = 2 ms") == {"dt": "0.1ms", "tau": "2 ms"}
    for bad in ("dt", "dt=fast", "1x=2", "=3"):
        with pytest.raises(EnvironError):
            parse_assignments(bad)
    import saiunit as u

    values = target_environ({"dt": "0.1ms", "precision": 32}, {"tau": 5 * u.ms})
    assert values == {"dt": 0.1 * u.ms, "precision": 32, "tau": 5 * u.ms}
    with pytest.raises(EnvironError, match="'mss'"):
        target_environ({"dt": "0.1 mss"}, None)


def test_reading_environ_settings_imports_no_jax(tmp_path):
    """A fully cached run imports no JAX: checking environ values must not import saiunit."""
    (tmp_path / "pyproject.toml").write_text('[tool.etrace-lint.environ]\ndt = "0.1 ms"\n', encoding="utf-8")
    script = ("import sys\nfrom etrace_lint.cli.main import build_parser, settings_from_args\n"
              "s = settings_from_args(build_parser().parse_args(['--environ', 'tau=2ms']))\n"
              "assert s.environ == {'dt': '0.1 ms', 'tau': '2ms'}, s.environ\n"
              "print(sorted(m for m in ('jax', 'saiunit', 'brainstate') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
