"""``[tool.etrace-lint]``: layered under the command line, and every mistake is a clear usage error."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from etrace_lint.cli.main import build_parser, main, settings_from_args
from etrace_lint.core.findings import Finding, Level, Location
from etrace_lint.policy.decide import level_for, rule_selected


def _settings(tmp_path, monkeypatch, toml: str | None, *argv: str):
    if toml is not None:
        (tmp_path / "pyproject.toml").write_text(toml, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return settings_from_args(build_parser().parse_args(list(argv)))


def _usage_error(tmp_path, monkeypatch, capsys, toml: str, *argv: str) -> str:
    (tmp_path / "pyproject.toml").write_text(toml, encoding="utf-8")
    (tmp_path / "model.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["model.py", "--no-cache", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


FULL = """
[tool.etrace-lint]
paths = ["models"]
extend-exclude = ["models/legacy"]
select = ["ETL0"]
extend-select = ["ETL205"]
ignore = ["ETL013"]
fail-level = "error"
timeout = 12.5
jobs = 3
cache-dir = ".cache/etl"
show-info = true

[tool.etrace-lint.per-file-ignores]
"models/experimental/*" = ["ETL201"]

[tool.etrace-lint.levels]
ETL005 = "error"
ETL0 = "note"

[tool.etrace-lint.compile-options]
include-recurrent-mixing = true
control-flow = { cond = "opaque", scan-unroll-limit = 4 }

[tool.etrace-lint.verify]
steps = 32
batch = 2
algorithms = ["d_rtrl"]
seed = 7
cosine-floor = 0.95
device = "cpu"

[tool.etrace-lint.environ]
dt = "0.1 ms"
precision = 64
"""


def test_file_values_reach_settings(tmp_path, monkeypatch):
    settings = _settings(tmp_path, monkeypatch, FULL)
    assert settings.paths == [str(tmp_path / "models")]
    assert settings.excludes[-1] == "models/legacy"
    assert settings.select == ["ETL0"] and settings.extend_select == ["ETL205"] and settings.ignore == ["ETL013"]
    assert settings.fail_level is Level.ERROR and settings.timeout == 12.5 and settings.jobs == 3
    assert settings.cache_dir == str(tmp_path / ".cache/etl") and settings.show_info
    assert settings.per_file_ignores == {"models/experimental/*": ["ETL201"]}
    # a control-flow policy stays plain data until a worker builds it
    assert settings.compile_options == {"include_recurrent_mixing": True,
                                        "control_flow": {"cond": "opaque", "scan_unroll_limit": 4}}
    # extend-select names ETL205: its opt-in check runs
    assert settings.for_engine().set_options() == {"check_online_grad": True, "probe": True,
                                                   "verify_steps": 32, "verify_batch": 2,
                                                   "verify_algorithms": ["d_rtrl"],
                                                   "verify_seed": 7, "verify_cosine_floor": 0.95, "device": "cpu",
                                                   "environ": {"dt": "0.1 ms", "precision": 64}}


def test_selection_levels_and_per_file_ignores_apply(tmp_path, monkeypatch):
    settings = _settings(tmp_path, monkeypatch, FULL).for_policy()
    assert rule_selected("ETL005", settings) and rule_selected("ETL205", settings)
    assert not rule_selected("ETL013", settings) and not rule_selected("ETL201", settings)
    settings = dataclasses.replace(settings, select=())
    where = str(tmp_path / "models" / "experimental" / "m.py")
    assert rule_selected("ETL201", settings) and not rule_selected("ETL201", settings, where)

    def level(rule_id):
        return level_for(Finding(rule_id, Level.WARNING, "m", "t", Location(where, 1)), settings)

    # the most specific selector wins
    assert level("ETL005") is Level.ERROR and level("ETL003") is Level.NOTE and level("ETL201") is Level.WARNING


def test_command_line_overrides_the_file(tmp_path, monkeypatch):
    settings = _settings(tmp_path, monkeypatch, FULL, "src", "--select", "ETL2", "--fail-level", "warning",
                         "--timeout", "3", "-j", "1", "--exclude", "skip", "--verify-steps", "4")
    assert settings.paths == ["src"] and settings.select == ["ETL2"]
    assert settings.fail_level is Level.WARNING and settings.timeout == 3 and settings.jobs == 1
    assert settings.excludes == ("skip", "models/legacy")
    assert settings.verify_steps == 4 and settings.verify_batch == 2


def test_environ_flags_override_the_file_per_key_and_change_the_cache_key(tmp_path, monkeypatch):
    from_file = _settings(tmp_path, monkeypatch, FULL)
    settings = _settings(tmp_path, monkeypatch, FULL, "--environ", "dt=0.2ms,tau=2 ms", "--environ", "i=3")
    assert settings.environ == {"dt": "0.2ms", "precision": 64, "tau": "2 ms", "i": 3}
    assert settings.fingerprint_data() != from_file.fingerprint_data()


def test_defaults_without_a_file_and_with_isolated(tmp_path, monkeypatch):
    plain = _settings(tmp_path, monkeypatch, None)
    assert plain.config_file is None and plain.fail_level is Level.WARNING
    isolated = _settings(tmp_path, monkeypatch, FULL, "--isolated")
    assert isolated.fail_level is Level.WARNING and isolated.select == [] and isolated.compile_options == {}


def test_nearest_file_with_the_table_is_used(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.etrace-lint]\nfail-level = "note"\n')
    inner = tmp_path / "pkg" / "sub"
    inner.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "pkg"\n')  # no table: keep looking
    monkeypatch.chdir(inner)
    settings = settings_from_args(build_parser().parse_args([]))
    assert settings.fail_level is Level.NOTE and settings.config_file == str(tmp_path / "pyproject.toml")


def test_search_starts_at_the_first_path(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.etrace-lint]\nfail-level = "error"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    settings = settings_from_args(build_parser().parse_args([str(project / "models")]))
    assert settings.fail_level is Level.ERROR


@pytest.mark.parametrize("toml, words", [
    ('[tool.etrace-lint]\nselct = ["ETL005"]\n', ["unknown key 'selct'", "did you mean 'select'"]),
    ('[tool.etrace-lint]\nfail_level = "error"\n', ["'fail_level'", "did you mean 'fail-level'"]),
    ('[tool.etrace-lint.verify]\nstep = 3\n', ["'verify.step'", "'verify.steps'"]),
    ('[tool.etrace-lint.compile-options]\ninclude-recurent-mixing = true\n',
     ["compile-options.include-recurent-mixing", "compile-options.include-recurrent-mixing"]),
    ('[tool.etrace-lint.compile-options]\ncontrol-flow = { cnd = "opaque" }\n',
     ["control-flow.cnd", "control-flow.cond"]),
    ('[tool.etrace-lint]\nselect = ["ETL0005"]\n', ["pyproject.toml", "'ETL0005'", "ETL005"]),
    ('[tool.etrace-lint.levels]\nETL50 = "error"\n', ["pyproject.toml", "'ETL50'"]),
    ('[tool.etrace-lint.per-file-ignores]\n"a/*" = ["weight-to-weigth"]\n', ["weight-to-weight"]),
    ('[tool.etrace-lint]\nfail-level = "severe"\n', ["pyproject.toml", "fail-level", "note"]),
    ('[tool.etrace-lint]\ntimeout = "long"\n', ["pyproject.toml", "timeout must be a number"]),
    ('[tool.etrace-lint]\ntimeout = 0\n', ["timeout must be positive"]),
    ('[tool.etrace-lint]\njobs = 1.5\n', ["jobs must be an integer"]),
    ('[tool.etrace-lint]\nshow-info = "yes"\n', ["show-info must be true or false"]),
    ('[tool.etrace-lint]\nlevels = "error"\n', ["levels must be a table"]),
    ('[tool.etrace-lint]\nselect = [1, 2]\n', ["select must be a string or a list of strings"]),
    ('[tool.etrace-lint]\nselect = [\n', ["pyproject.toml", "not valid TOML"]),
    ('tool = 3\n', ["pyproject.toml", "[tool] must be a table"]),
    ('[tool.etrace-lint.environ]\ndt = "fast"\n', ["pyproject.toml", "environ", "dt = 'fast'", "0.1 ms"]),
    ('[tool.etrace-lint.environ]\ndt = [1]\n', ["pyproject.toml", "environ", "dt:"]),
    ('[tool.etrace-lint]\nenviron = "dt=1"\n', ["pyproject.toml", "environ must be a table"]),
])
def test_mistakes_are_usage_errors_naming_the_file(tmp_path, monkeypatch, capsys, toml, words):
    err = _usage_error(tmp_path, monkeypatch, capsys, toml)
    for word in words:
        assert word in err


@pytest.mark.parametrize("flag, words", [
    ("dt", ["--environ dt", "KEY=VALUE"]),
    ("dt=soon", ["--environ dt=soon", "dt = 'soon'"]),
    ("2dt=1", ["--environ 2dt=1", "'2dt'"]),
])
def test_bad_environ_flags_are_usage_errors_naming_the_flag(tmp_path, monkeypatch, capsys, flag, words):
    err = _usage_error(tmp_path, monkeypatch, capsys, "", "--environ", flag)
    for word in words:
        assert word in err


def test_unknown_rule_on_the_command_line(tmp_path, monkeypatch, capsys):
    err = _usage_error(tmp_path, monkeypatch, capsys, "", "--ignore", "ETL2001")
    assert "'ETL2001'" in err and "did you mean" in err


def test_missing_explicit_config_is_a_usage_error(tmp_path, monkeypatch, capsys):
    err = _usage_error(tmp_path, monkeypatch, capsys, "", "--config", "nowhere/pyproject.toml")
    assert "nowhere/pyproject.toml" in err and "cannot be read" in err


def test_config_reading_stays_light(tmp_path):
    """The file and the command line are read, rules checked included, before anything decides to import JAX."""
    (tmp_path / "pyproject.toml").write_text(FULL, encoding="utf-8")
    code = ("import sys\n"
            "from etrace_lint.cli.main import build_parser, settings_from_args\n"
            "settings = settings_from_args(build_parser().parse_args(['--environ', 'tau=2ms', '--select', 'ETL2']))\n"
            "assert settings.environ['tau'] == '2ms' and settings.fingerprint_data()\n"
            "print(sorted(m for m in ('jax', 'jaxlib', 'brainstate', 'braintrace', 'saiunit') if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
