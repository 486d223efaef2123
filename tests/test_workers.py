"""Worker processes: a target that hangs or kills its worker is named, every other one is linted,
and the output does not depend on the number of workers."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest
from helpers import fixture, run_cli

from etrace_lint.config.settings import EngineSettings
from etrace_lint.discovery.discover import discover
from etrace_lint.running.programs import trim
from etrace_lint.running.worker_loop import _compiler_options
from etrace_lint.running.workers import WorkerPool

TIMEOUT = 8.0


@pytest.fixture(scope="module")
def daily_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("daily")
    for name in ("clean.py", "suppressed.py", "layers.py", "leaky.py", "misbehaving.py"):
        shutil.copy(fixture("daily", name), root / name)
    return root


@pytest.fixture(scope="module")
def misbehaving_run(daily_tree):
    paths = [str(daily_tree / "misbehaving.py"), str(daily_tree / "clean.py"), str(daily_tree / "suppressed.py")]
    specs = discover(paths, str(daily_tree)).targets
    start = time.monotonic()
    with WorkerPool() as pool:
        results = pool.run(specs, str(daily_tree), EngineSettings(), 2, TIMEOUT)
    return specs, results, time.monotonic() - start


def _by_factory(specs, results):
    return {spec.factory: result for spec, result in zip(specs, results)}


def test_every_good_target_is_linted_beside_bad_ones(misbehaving_run):
    specs, results, _ = misbehaving_run
    assert len(results) == len(specs)
    by_factory = _by_factory(specs, results)
    for good in ("etrace_target_prints", "etrace_target_clean", "etrace_target_two_plain_ops"):
        assert not by_factory[good].tool_errors, by_factory[good].tool_errors
    assert [f.line for f in by_factory["etrace_target_two_plain_ops"].findings if f.rule_id == "ETL201"] == [17, 18]


@pytest.mark.parametrize("factory, words", [
    ("etrace_target_hangs", ["misbehaving.py::etrace_target_hangs", "timeout", "8 s"]),
    ("etrace_target_exits", ["misbehaving.py::etrace_target_exits", "exit code 3"]),
    ("etrace_target_segfaults", ["misbehaving.py::etrace_target_segfaults", "SIGSEGV"]),
    ("etrace_target_calls_sys_exit", ["misbehaving.py::etrace_target_calls_sys_exit"]),
])
def test_bad_targets_are_named_tool_errors(misbehaving_run, factory, words):
    specs, results, _ = misbehaving_run
    result = _by_factory(specs, results)[factory]
    assert len(result.tool_errors) == 1 and not result.findings
    message = result.tool_errors[0].message
    for word in words:
        assert word in message


def test_a_hang_costs_one_timeout_not_the_run(misbehaving_run):
    _, _, elapsed = misbehaving_run
    assert elapsed < TIMEOUT + 60


def test_control_flow_table_becomes_a_policy_in_the_worker():
    import braintrace

    settings = EngineSettings(compile_options={"control_flow": {"cond": "opaque"}, "sparse_n": 2}, verify=True)
    options = _compiler_options(settings)
    policy = options.compile_options["control_flow"]
    assert isinstance(policy, braintrace.ControlFlowPolicy) and policy.cond == "opaque"
    assert options.compile_options["sparse_n"] == 2 and options.verify is True
    assert settings.compile_options["control_flow"] == {"cond": "opaque"}, "the run's settings are left as they were"


def _run(tree, jobs: str, sarif: str):
    proc = run_cli("clean.py", "suppressed.py", "leaky.py", "misbehaving.py::etrace_target_prints",
                   "--output-format", "json", "--sarif", sarif, "-j", jobs, "--no-cache", "--show-info",
                   cwd=str(tree))
    with open(os.path.join(tree, sarif), encoding="utf-8") as handle:
        log = json.load(handle)
    for run in log["runs"]:
        run.pop("invocations", None)
    return proc, json.loads(proc.stdout), json.dumps(log)


def test_output_does_not_depend_on_the_number_of_workers(daily_tree):
    one_proc, one_json, one_sarif = _run(daily_tree, "1", "one.sarif")
    two_proc, two_json, two_sarif = _run(daily_tree, "2", "two.sarif")
    assert one_proc.returncode == two_proc.returncode == 1, one_proc.stderr
    assert one_json["findings"] == two_json["findings"]
    assert one_sarif == two_sarif
    # the model's print went to stderr, so stdout is still one JSON document
    assert "a model that talks on stdout" in one_proc.stderr
    assert {(f["rule"], f["location"]["path"]) for f in one_json["findings"]} >= {
        ("ETL201", "suppressed.py"), ("ETL201", "layers.py")}


class _Stream:
    def __init__(self, tty: bool):
        self.tty, self.text = tty, ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_progress_line_only_on_a_terminal_and_after_a_second(monkeypatch):
    from etrace_lint.cli import progress as progress_module
    from etrace_lint.discovery.discover import TargetSpec

    clock = [100.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: clock[0])
    spec = TargetSpec("/p/models/rnn.py", "etrace_target_rnn")
    for tty, enabled, expect_line in ((True, True, True), (False, True, False), (True, False, False)):
        stream = _Stream(tty)
        line = progress_module.Progress(enabled=enabled, stream=stream)
        line(0, 3, spec)
        assert stream.text == "", "nothing during the first second"
        clock[0] += 1.5
        line(1, 3, spec)
        assert ("1/3" in stream.text and "rnn.py::etrace_target_rnn" in stream.text) is expect_line
        line.close()
        assert stream.text.endswith("\r") is expect_line  # the line is erased before the report


class _FakeWorker:
    def __init__(self, ready=True, index=None, started=0.0):
        self.ready, self.index, self.started = ready, index, started


def test_more_workers_start_only_when_the_work_left_pays_for_them(monkeypatch):
    from etrace_lint.running import schedule

    monkeypatch.setattr(schedule.time, "monotonic", lambda: 100.0)
    scaling = schedule.Scaling()
    one = [_FakeWorker(index=0, started=99.5)]
    assert scaling.more_workers(one, pending=50, most=8) == 0, "nothing is known before a worker is up"
    scaling.started(4.0)
    scaling.finished(0.05)
    assert scaling.more_workers(one, pending=50, most=8) == 0, "50 quick models: one worker is enough"
    scaling.finished(2.0)
    scaling.finished(2.0)
    assert scaling.more_workers(one, pending=50, most=8) == 7, "50 slow models: start every worker allowed"
    assert scaling.more_workers(one, pending=50, most=3) == 2
    assert scaling.more_workers(one + [_FakeWorker(ready=False)], pending=50, most=8) == 0, "one start at a time"
    fresh = schedule.Scaling()
    fresh.started(4.0)
    stuck = [_FakeWorker(index=0, started=90.0)]  # busy for 10 s, longer than a start
    assert fresh.more_workers(stuck, pending=3, most=2) == 1
    # the run wakes up to start one as soon as a worker has been busy longer than a start, not later
    assert fresh.next_look([_FakeWorker(index=0, started=99.5)], pending=3, most=2) == 103.5
    assert fresh.next_look([_FakeWorker(index=0, started=99.5)], pending=3, most=1) is None
    assert fresh.next_look([_FakeWorker(index=None)], pending=3, most=2) is None


def test_forked_workers_start_together_as_far_as_the_files_go(monkeypatch):
    from etrace_lint.running import schedule

    monkeypatch.setattr(schedule.time, "monotonic", lambda: 100.0)
    forked = schedule.Scaling()
    forked.started(0.3)  # a fork of the fork server, not seconds of imports
    one = [_FakeWorker(index=0, started=99.95)]
    assert forked.more_workers(one, pending=50, most=2) == 1, "nothing linted yet, and the second starts"
    assert forked.more_workers(one, pending=3, most=8) == 2, "no more workers than files left"
    assert forked.more_workers(one, pending=0, most=8) == 0


_REPORTS_COMPILE_MODE = '''\
import jax
import etrace_lint


@etrace_lint.target(name="mode")
def mode():
    raise RuntimeError(f"disable_most_optimizations={jax.config.values['jax_disable_most_optimizations']}")
'''


def _compile_mode_seen(tmp_path, settings) -> str:
    from etrace_lint.running.workers import WorkerPool

    path = tmp_path / "mode.py"
    path.write_text(_REPORTS_COMPILE_MODE)
    specs = discover([str(path)], str(tmp_path)).targets
    with WorkerPool() as pool:
        (result,) = pool.run(specs, str(tmp_path), settings, jobs=1, timeout=60)
    message = result.tool_errors[0].message
    assert "disable_most_optimizations=" in message, message
    return message.split("disable_most_optimizations=")[1].split()[0]


def test_linting_compiles_quickly_and_verify_compiles_as_training_does(tmp_path, monkeypatch):
    monkeypatch.delenv("JAX_DISABLE_MOST_OPTIMIZATIONS", raising=False)
    assert _compile_mode_seen(tmp_path, EngineSettings()) == "True"
    assert _compile_mode_seen(tmp_path, EngineSettings(verify=True)) == "False"
    monkeypatch.setenv("JAX_DISABLE_MOST_OPTIMIZATIONS", "0")  # the user's choice stays
    assert _compile_mode_seen(tmp_path, EngineSettings()) == "False"


_SLOW_TO_IMPORT = '''\
import time

import etrace_lint

time.sleep(0.5)


@etrace_lint.target(name="first")
def first():
    raise RuntimeError("no model")


@etrace_lint.target(name="second")
def second():
    raise RuntimeError("no model")
'''


def test_a_files_import_counts_in_its_first_targets_time(tmp_path):
    """The times recorded for the next run's schedule (slowest files first) include the file's import."""
    path = tmp_path / "slow_import.py"
    path.write_text(_SLOW_TO_IMPORT)
    specs = discover([str(path)], str(tmp_path)).targets
    with WorkerPool() as pool:
        first, second = pool.run(specs, str(tmp_path), EngineSettings(), jobs=1, timeout=60)
    assert [e.message.endswith("no model") for e in first.tool_errors + second.tool_errors] == [True, True]
    assert first.seconds >= 0.5 > second.seconds


def test_findings_do_not_depend_on_how_the_workers_compile(daily_tree, monkeypatch):
    from etrace_lint.running.workers import WorkerPool

    paths = [str(daily_tree / name) for name in ("layers.py", "suppressed.py", "leaky.py")]
    specs = discover(paths, str(daily_tree)).targets
    runs = []
    for optimise in ("0", "1"):
        monkeypatch.setenv("JAX_DISABLE_MOST_OPTIMIZATIONS", optimise)
        with WorkerPool() as pool:
            runs.append([r.to_json() for r in pool.run(specs, str(daily_tree), EngineSettings(), jobs=1,
                                                       timeout=120)])
    for result in runs[0] + runs[1]:
        result.pop("seconds", None)
    assert runs[0] == runs[1]
    assert any(result["findings"] for result in runs[0])


def test_the_compiled_programs_folder_is_trimmed_oldest_first(tmp_path):
    for age in range(10):  # program-0 is the oldest
        path = tmp_path / f"program-{age}-cache"
        path.write_bytes(b"x" * 100)
        os.utime(path, ns=(1_000_000_000 * (age + 1), 1_000_000_000 * (age + 1)))
    trim(str(tmp_path), max_bytes=2_000)
    assert len(list(tmp_path.iterdir())) == 10, "under the bound nothing goes"
    trim(str(tmp_path), max_bytes=800)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [f"program-{age}-cache" for age in range(4, 10)], "down to three quarters, oldest first"
    trim(str(tmp_path / "missing"))  # no folder: nothing to do, no error
