"""What a ruff user tries first works the same way here, each driven through the command line.

The project is one model file that imports a helper beside it and applies its
input weight with a plain ``@`` (ETL201, with a safe fix).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from helpers import run_cli

from etrace_lint.analysis import braintrace_adapter

HELPER = "N_IN, N = 3, 6\n"
NET = '''"""A leaky layer whose input weight goes through a plain `@`."""

import brainstate
import jax.numpy as jnp

from helper import N, N_IN


class Leaky(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.w_in = brainstate.ParamState(brainstate.random.randn(N_IN, N) * 0.5)
        self.h = brainstate.HiddenState(jnp.zeros((N,)))

    def update(self, x):
        self.h.value = 0.8 * self.h.value + x @ self.w_in.value
        return jnp.tanh(self.h.value)


def etrace_target_leaky():
    return Leaky(), (jnp.ones((N_IN,)),)
'''
FIXED_CALL = "braintrace.matmul(x, self.w_in.value)"
# braintrace 0.2.8 refuses a model whose only weight is used through a plain op: ETL204 on the factory's line
REFUSED = 1 if braintrace_adapter.adds_same_step_gradients() else 0
FOUND = [("ETL201", "models/net.py", 16)] + [("ETL204", "models/net.py", 20)] * REFUSED


def _project(folder):
    (folder / "models").mkdir(parents=True)
    (folder / "models" / "helper.py").write_text(HELPER, encoding="utf-8")
    (folder / "models" / "net.py").write_text(NET, encoding="utf-8")
    (folder / "pyproject.toml").write_text('[tool.etrace-lint]\nfail-level = "warning"\n', encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project linted once: later runs of its unchanged files come from the cache."""
    folder = _project(tmp_path_factory.mktemp("conventions"))
    first = run_cli("models", "--output-format", "json", cwd=str(folder))
    assert first.returncode == 1, first.stderr
    return folder


def _cli(project, *args, **kwargs):
    return run_cli(*args, cwd=str(project), **kwargs)


def _piped(project, stdin: str, *args):
    return subprocess.run([sys.executable, "-m", "etrace_lint", *args], cwd=str(project), input=stdin,
                          capture_output=True, text=True, timeout=600)


def test_check_is_the_default_command_by_its_name(project):
    plain = _cli(project, "models", "--output-format", "json")
    named = _cli(project, "check", "models", "--output-format", "json")
    assert named.returncode == plain.returncode == 1
    assert json.loads(named.stdout)["findings"] == json.loads(plain.stdout)["findings"]
    assert "no such file" not in named.stderr


def test_a_buffer_on_stdin_is_linted_as_the_file_it_names(project):
    source = NET.replace("0.8 * self.h.value", "0.5 * self.h.value")  # an unsaved edit
    proc = _piped(project, source, "-", "--stdin-filename", "models/net.py", "--output-format", "json")
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    assert document["toolErrors"] == []  # `from helper import ...` resolved beside models/net.py
    assert [(f["rule"], f["location"]["path"], f["location"]["line"]) for f in document["findings"]] == FOUND
    assert sorted(os.listdir(project / "models")) == ["helper.py", "net.py"]  # nothing left behind
    listed = _piped(project, NET, "-", "--stdin-filename", "models/net.py", "--list-targets")
    assert listed.stdout == "models/net.py:20: etrace_target_leaky\n"
    dash = _piped(project, "def etrace_target_x():\n    import nothing_here\n", "-", "--output-format", "json")
    assert dash.returncode == 2
    assert [e["location"]["path"] for e in json.loads(dash.stdout)["toolErrors"]] == ["-"]


def test_fix_on_stdin_prints_the_fixed_source(project):
    proc = _piped(project, NET, "-", "--stdin-filename", "models/net.py", "--fix")
    assert proc.returncode == 0, proc.stderr
    assert FIXED_CALL in proc.stdout and "import braintrace" in proc.stdout
    assert proc.stdout.replace("import braintrace\n", "").replace(FIXED_CALL, "x @ self.w_in.value") == NET
    assert "1 fix applied, 0 remaining" in proc.stderr
    assert (project / "models" / "net.py").read_text(encoding="utf-8") == NET  # the file itself is untouched


def test_verbose_says_what_was_read_and_silent_says_nothing(project):
    _cli(project, "models")  # the cache holds this version's result
    verbose = _cli(project, "models", "-v")
    assert verbose.returncode == 1
    assert f"configuration: {project / 'pyproject.toml'}" in verbose.stderr
    assert f"models/net.py::etrace_target_leaky linted from the cache: {len(FOUND)} findings" in verbose.stderr
    silent = _cli(project, "models", "-s")
    assert (silent.returncode, silent.stdout, silent.stderr) == (1, "", "")


def test_show_settings_says_where_each_value_came_from(project):
    proc = _cli(project, "models", "--show-settings", "--timeout", "7", "--extend-select", "ETL205")
    assert proc.returncode == 0, proc.stderr
    lines = {line.split(" = ")[0]: line for line in proc.stdout.splitlines() if " = " in line}
    assert lines["fail-level"].endswith("# pyproject.toml (fail-level)")
    assert lines["timeout"].startswith("timeout = 7.0") and lines["timeout"].endswith("# command line (--timeout)")
    assert lines["check-online-grad"].endswith("# selecting ETL205")
    assert lines["jobs"].endswith("# default")
    as_json = json.loads(_cli(project, "--show-settings", "--output-format", "json").stdout)
    assert as_json["configFile"] == str(project / "pyproject.toml")


def test_clean_removes_the_cache_and_nothing_else(tmp_path):
    project = _project(tmp_path)
    (project / "models" / ".etrace-lint-cache-notes").mkdir()  # not a cache: no tag
    assert _cli(project, "models", "--list-targets").returncode == 0
    assert _cli(project, "models", "--exit-zero").returncode == 0
    assert (project / ".etrace-lint-cache" / "CACHEDIR.TAG").is_file()
    proc = _cli(project, "clean")
    assert proc.returncode == 0 and "Removing cache at: .etrace-lint-cache" in proc.stderr
    assert not (project / ".etrace-lint-cache").exists()
    assert (project / "models" / ".etrace-lint-cache-notes").is_dir()


def test_junit_report(project):
    proc = _cli(project, "models", "--output-format", "junit")
    assert proc.returncode == 1
    suites = ET.fromstring(proc.stdout)
    assert (suites.tag, suites.get("failures"), suites.get("errors")) == ("testsuites", str(len(FOUND)), "0")
    cases = list(suites.iter("testcase"))
    assert [(c.get("name").removeprefix("etrace-lint."), c.get("classname"), int(c.get("line"))) for c in cases] \
        == FOUND
    assert "plain `dot_general`" in cases[0].find("failure").get("message")


def test_gitlab_code_quality_report(project):
    proc = _cli(project, "models", "--output-format", "gitlab")
    issues = json.loads(proc.stdout)
    assert [(i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"]) for i in issues] == FOUND
    issue = issues[0]
    assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issue)
    assert (issue["check_name"], issue["severity"], issue["location"]["path"], issue["location"]["lines"]["begin"]) \
        == ("ETL201", "minor", "models/net.py", 16)
    again = json.loads(_cli(project, "models", "--output-format", "gitlab").stdout)
    assert again[0]["fingerprint"] == issue["fingerprint"]


def test_json_lines_has_one_finding_a_line(project):
    lines = _cli(project, "models", "--output-format", "json-lines").stdout.splitlines()
    document = json.loads(_cli(project, "models", "--output-format", "json").stdout)
    assert [json.loads(line) for line in lines] == document["findings"]


def test_rdjson_for_reviewdog_carries_the_fix_as_a_suggestion(project):
    document = json.loads(_cli(project, "models", "--output-format", "rdjson").stdout)
    assert document["source"]["name"] == "etrace-lint"
    assert [d["code"]["value"] for d in document["diagnostics"]] == [rule for rule, _, _ in FOUND]
    diagnostic = document["diagnostics"][0]
    assert diagnostic["code"]["value"] == "ETL201" and diagnostic["severity"] == "WARNING"
    assert diagnostic["location"]["path"] == "models/net.py"
    assert diagnostic["location"]["range"]["start"]["line"] == 16
    assert FIXED_CALL in [s["text"] for s in diagnostic["suggestions"]]


def test_the_run_says_where_the_sarif_log_was_written(project):
    # --no-probe: the run is then served from the project's cache (a probed result is another cache key);
    # where the log is written does not depend on it
    proc = _cli(project, "models", "--sarif", "out.sarif", "--no-probe")
    assert f"SARIF log written to {project / 'out.sarif'}" in proc.stderr
    assert json.loads((project / "out.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"


def test_fix_only_and_show_fixes(tmp_path):
    project = _project(tmp_path)
    shown = _cli(project, "models", "--show-fixes")
    assert shown.returncode == 1
    assert "Fixes available for 1 finding (--fix):\n- models/net.py:\n    16:45 ETL201 use braintrace.matmul" \
        in shown.stdout
    fixed = _cli(project, "models", "--fix-only", "--show-fixes")
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout.startswith("Fixed 1 finding:\n- models/net.py:\n    16:45 ETL201 use braintrace.matmul")
    assert "Found" not in fixed.stdout  # nothing about what remains
    assert FIXED_CALL in (project / "models" / "net.py").read_text(encoding="utf-8")


def test_watch_lints_again_when_a_file_changes(tmp_path):
    import queue
    import threading

    project = _project(tmp_path)
    watcher = subprocess.Popen([sys.executable, "-m", "etrace_lint", "models", "--watch", "--output-format",
                                "concise"], cwd=str(project), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in watcher.stdout], daemon=True).start()

    def one_run() -> list[str]:
        """The lines up to the one that says the watcher waits again (a stuck watcher fails, never hangs)."""
        seen = []
        while not seen or "watching for changes" not in seen[-1]:
            try:
                seen.append(lines.get(timeout=120))
            except queue.Empty:
                raise AssertionError(f"the watcher said nothing more after: {seen}") from None
        return seen

    try:
        first = one_run()
        assert any("ETL201" in line for line in first), first
        fixed = NET.replace("x @ self.w_in.value", FIXED_CALL).replace("import brainstate\n",
                                                                        "import brainstate\nimport braintrace\n")
        (project / "models" / "net.py").write_text(fixed, encoding="utf-8")
        second = one_run()
        assert any("1 file changed (models/net.py): linting again" in line for line in second), second
        assert any(line.startswith("Found 0 findings in 1 model.") for line in second), second
    finally:
        watcher.terminate()
        try:
            watcher.wait(timeout=60)
        except subprocess.TimeoutExpired:
            watcher.kill()
