"""``etrace-lint run``: the models a program really compiles, linted on the program's own lines, and the
program computing exactly what it computes under plain ``python``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from helpers import REPO, descendants, ended, run_cli, sarif_validator

PROGRAMS = os.path.join(REPO, "tests", "data", "programs")


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """A copy of the programs, so that their runs write nothing into the repository."""
    folder = tmp_path_factory.mktemp("programs")
    shutil.copytree(PROGRAMS, folder, dirs_exist_ok=True)
    return str(folder)


def _run(programs: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "etrace_lint", "run", *args], cwd=programs, input=stdin,
                          capture_output=True, text=True, timeout=600)


def _python(programs: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=programs, input=stdin, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def every_compile(programs):
    """``run --all`` of a script that trains a few steps, with JSON and SARIF, beside plain python."""
    plain = _python(programs, "train_gru.py", stdin="hello\n")
    linted = _run(programs, "--all", "--show-info", "--output-format", "json", "-o", "out.json",
                  "--sarif", "out.sarif", "train_gru.py", stdin="hello\n")
    with open(os.path.join(programs, "out.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    with open(os.path.join(programs, "out.sarif"), encoding="utf-8") as handle:
        sarif = json.load(handle)
    return plain, linted, report, sarif


def test_the_program_computes_the_same_numbers_with_every_compile_linted(every_compile):
    plain, linted, _, _ = every_compile
    assert plain.returncode == 0, plain.stderr
    assert linted.returncode == 1, linted.stderr  # the linter's exit code: warnings were found
    # argv, __main__, sys.path[0], the working folder, stdin, the losses of three training steps, the
    # random key after them and brainstate.environ's dt: all as under python
    assert linted.stdout.splitlines() == plain.stdout.splitlines()
    assert "losses" in linted.stdout and "stdin hello" in linted.stdout


def test_each_distinct_compile_is_a_target_named_by_its_call(every_compile):
    _, _, report, _ = every_compile
    targets = {finding["model"] for finding in report["findings"]}
    # the same model compiled again with D_RTRL is linted once, at its first compile; pp_prop is another
    assert targets == {"train_gru.py:31 (D_RTRL)", "train_gru.py:47 (pp_prop)"}
    excluded = [f for f in report["findings"] if f["rule"] == "ETL005"]
    assert {f["location"]["path"] for f in excluded} == {"train_gru.py"}
    assert {f["location"]["line"] for f in excluded} == {18}  # the GRU cell's line in the user's class
    compiled_here = [loc for f in excluded for loc in f["related"] if loc["label"] == "compiled here"]
    assert {(loc["path"], loc["line"]) for loc in compiled_here} == {("train_gru.py", 31), ("train_gru.py", 47)}


def test_no_finding_is_located_outside_the_users_files(every_compile):
    _, _, report, _ = every_compile
    places = [f["location"]["path"] for f in report["findings"]]
    places += [loc["path"] for f in report["findings"] for loc in f["related"]]
    assert places and all(path == "train_gru.py" for path in places), sorted(set(places))


def test_sarif_carries_the_compile_call_as_a_related_location(every_compile):
    _, _, _, sarif = every_compile
    sarif_validator().validate(sarif)
    results = sarif["runs"][0]["results"]
    assert results
    for result in results:
        related = [(r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"],
                    r["message"]["text"]) for r in result.get("relatedLocations", [])]
        assert any(uri.endswith("train_gru.py") and text == "compiled here" for uri, _, text in related), related


def test_by_default_the_program_stops_after_its_first_compile_is_linted(programs):
    result = _run(programs, "train_gru.py", stdin="hello\n")
    assert result.returncode == 1, result.stderr
    assert "compiled" in result.stdout and "losses" not in result.stdout  # no training step ran
    assert "[train_gru.py:31 (D_RTRL)]" in result.stdout
    assert "= compiled here: train_gru.py:31:" in result.stdout
    assert "train_gru.py:47" not in result.stdout
    assert "in 1 model" in result.stdout


def test_a_users_own_algorithm_and_compile_graph_are_captured(programs):
    result = _run(programs, "--output-format", "github", "own_algorithm.py")
    assert result.returncode == 0, result.stdout + result.stderr
    # a machine-readable output on stdout: the program's own prints go to stderr
    assert "my compile_graph" in result.stderr  # the user's override ran as the program's compile
    assert "done" not in result.stdout + result.stderr


def test_a_vmapped_compile_is_linted_per_sample_with_github_annotations(programs):
    result = _run(programs, "--show-info", "--output-format", "github", "vmapped.py")
    lines = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert lines, result.stdout + result.stderr
    assert all("file=vmapped.py" in line and "vmapped.py:19 (d_rtrl)" in line for line in lines), lines
    assert "vmapped (4, 2)" not in result.stdout


def test_a_compile_braintrace_refuses_is_an_error_on_the_call(programs):
    result = _run(programs, "--output-format", "json", "no_hidden_state.py")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout[result.stdout.index("{"):])
    errors = [f for f in report["findings"] if f["level"] == "error"]
    assert [(f["rule"], f["location"]["line"]) for f in errors] == [("ETL204", 18)]
    assert "refused:" not in result.stdout + result.stderr  # stopped before the program's except clause


def test_a_module_runs_as_python_dash_m(programs):
    result = _run(programs, "-m", "pkg", "x", "--flag")
    assert result.returncode == 0, result.stderr
    assert "module argv ['x', '--flag']" in result.stdout
    assert "after compile" not in result.stdout


@pytest.mark.parametrize("script, words", [
    ("fails_early.py", ["fails_early.py raised FileNotFoundError", "before compiling any model",
                        "Traceback (most recent call last)", 'File "fails_early.py", line 3']),
    ("compiles_nothing.py", ["compiles_nothing.py ended without compiling a model"]),
])
def test_a_program_that_compiles_nothing_exits_2_saying_why(programs, script, words):
    result = _run(programs, script)
    assert result.returncode == 2
    for word in words:
        assert word in result.stderr, result.stderr
    assert "etrace_lint" not in result.stderr.split("Traceback")[-1].split("etrace-lint: error")[0]


def test_a_lint_over_its_time_is_a_tool_error_on_the_call(programs):
    # uncached: an earlier test's lint of the same compile would be read back in no time
    result = _run(programs, "--no-cache", "--timeout", "0.05", "own_algorithm.py")
    assert result.returncode == 2
    assert "own_algorithm.py:25 (MyRTRL)" in result.stdout + result.stderr
    assert "--timeout" in result.stdout + result.stderr


@pytest.mark.parametrize("args, words", [
    ([], "name the program to run"),
    (["--bogus", "x.py"], "unknown option --bogus"),
    (["missing.py"], "can't open file 'missing.py'"),
    (["--fix", "train_gru.py"], "--fix lints files"),
])
def test_bad_arguments_exit_2(programs, args, words):
    result = _run(programs, *args)
    assert result.returncode == 2
    assert words in result.stderr


def test_help_lists_run():
    assert "etrace-lint run SCRIPT" in run_cli("--help").stdout
    result = run_cli("run", "--help")
    assert result.returncode == 0 and "--all" in result.stdout and "-m MODULE" in result.stdout


def test_a_lint_over_its_memory_is_a_tool_error_on_the_call(programs):
    result = _run(programs, "--no-cache", "--memory-limit", "1MB", "own_algorithm.py")
    assert result.returncode == 2
    assert "own_algorithm.py:25 (MyRTRL)" in result.stdout + result.stderr
    assert "beyond the program's" in result.stdout and "over --memory-limit 1 MiB" in result.stdout


@pytest.mark.parametrize("stop", ["terminal-ctrl-c", "sigint", "sigterm", "sigkill"])
def test_a_stopped_run_stops_the_program(programs, stop):
    """Ctrl-C at the terminal (the whole foreground group), SIGINT to etrace-lint alone (`kill -INT`), SIGTERM
    (`timeout`) or SIGKILL: the program etrace-lint runs ends with it."""
    import signal
    import time

    process = subprocess.Popen([sys.executable, "-m", "etrace_lint", "run", "waits.py"], cwd=programs,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        program = descendants(process.pid)
        assert program, "the program runs in a process of its own"
        since = time.monotonic()
        if stop == "terminal-ctrl-c":
            os.killpg(process.pid, signal.SIGINT)  # the terminal's Ctrl-C reaches the whole foreground group
        else:
            os.kill(process.pid, {"sigint": signal.SIGINT, "sigterm": signal.SIGTERM, "sigkill": signal.SIGKILL}[stop])
        process.wait(timeout=60)
        assert ended(program, since) is not None, "the program outlived etrace-lint"
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    if stop in ("terminal-ctrl-c", "sigint"):
        assert process.returncode == 130
        assert "etrace-lint: interrupted" in stderr
    else:
        assert process.returncode == -{"sigterm": signal.SIGTERM, "sigkill": signal.SIGKILL}[stop]


def test_a_multi_step_learner_is_linted_for_the_vjp_it_uses(programs):
    """braintrace 0.2.6's single-step learners give a stateless readout no gradient (ETL209), and a single-step
    learner none to a weight that drives a hidden state through a plain op (ETL201); the program's multi-step
    learner differentiates through the whole window: its readout learns, and the plain input projection learns
    within each window (ETL213)."""
    result = _run(programs, "--show-info", "--output-format", "json", "multi_step.py")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout[result.stdout.index("{"):])
    verdicts = {(f["rule"], tuple(f["properties"].get("weightPath") or ())) for f in report["findings"]}
    assert not {rule for rule, _ in verdicts} & {"ETL201", "ETL208", "ETL209"}, verdicts
    assert ("ETL001", ("rnn", "W", "weight")) in verdicts
    assert ("ETL213", ("w_in",)) in verdicts
