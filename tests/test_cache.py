"""The result cache: hits and misses, what a warm run imports, and what it prints."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import replace

import pytest
from helpers import fixture, run_cli

from etrace_lint.core.findings import Finding, Level, Location, Subject, TargetResult, ToolError
from etrace_lint.discovery.discover import TargetSpec
from etrace_lint.running.cache import Cache

ENV = {"python": "3.x", "jax": "0.1", "braintrace": "0.2"}
# the workers here keep their compiled programs in the cache folder, where a test looks for them
pytestmark = pytest.mark.usefixtures("own_compiled_programs")


def _result(spec: TargetSpec, *dependencies: str) -> TargetResult:
    finding = Finding("ETL201", Level.WARNING, "leak is not an ETP op", spec.factory, Location(spec.path, 3))
    return TargetResult(spec.key, [finding], dependencies=[spec.path, *dependencies])


@pytest.fixture
def project(tmp_path):
    (tmp_path / "model.py").write_text("import helper\n\ndef etrace_target_a(): ...\n")
    (tmp_path / "helper.py").write_text("X = 1\n")
    (tmp_path / "other.py").write_text("Y = 1\n")
    spec = TargetSpec(str(tmp_path / "model.py"), "etrace_target_a", 3)
    return tmp_path, spec


def _cache(root, configuration=None, environment=ENV) -> Cache:
    return Cache(str(root / ".etrace-lint-cache"), str(root), configuration or {}, dict(environment))


def test_hit_until_a_dependency_changes(project):
    root, spec = project
    cache = _cache(root)
    assert cache.get(spec) is None
    cache.put(spec, _result(spec, str(root / "helper.py")))
    assert _cache(root).get(spec).findings == _result(spec).findings
    (root / "other.py").write_text("Y = 2\n")
    assert _cache(root).get(spec) is not None, "an unrelated file must not invalidate the result"
    (root / "helper.py").write_text("X = 2\n")
    assert _cache(root).get(spec) is None, "an edited import must invalidate the result"


def test_target_file_edit_is_a_miss(project):
    root, spec = project
    _cache(root).put(spec, _result(spec))
    (root / "model.py").write_text("import helper\n\n\ndef etrace_target_a(): ...\n")
    assert _cache(root).get(spec) is None


def test_a_file_saved_while_its_target_was_linted_keeps_the_result_out_of_the_cache(project):
    """An editor saves while a lint runs: the lookup read one text, the worker may have imported the other, and
    a result kept under the first text's digest would answer for it later (an error the file no longer has)."""
    root, spec = project
    first = "import helper\n\ndef etrace_target_a(): ...\n"
    cache = _cache(root)
    assert cache.get(spec) is None  # the lookup before the lint reads the first text
    (root / "model.py").write_text("import helper\n\n\ndef etrace_target_a(): ...\n")  # saved during the lint
    cache.put(spec, _result(spec))
    assert _cache(root).get(spec) is None, "the result of either text is not the second text's"
    (root / "model.py").write_text(first)
    assert _cache(root).get(spec) is None, "the result of either text is not the first text's"
    cache = _cache(root)
    assert cache.get(spec) is None
    cache.put(spec, _result(spec))  # a lint the file held still for is kept
    assert _cache(root).get(spec) is not None


@pytest.mark.parametrize("change", [{"jax": "0.2"}, {"braintrace": "0.3"}, {"python": "3.y"}])
def test_other_versions_are_a_miss(project, change):
    root, spec = project
    _cache(root).put(spec, _result(spec))
    assert _cache(root).get(spec) is not None
    assert _cache(root, environment={**ENV, **change}).get(spec) is None


def test_other_compile_options_are_a_miss(project):
    root, spec = project
    _cache(root, {"compile_options": {}}).put(spec, _result(spec))
    assert _cache(root, {"compile_options": {"control_flow": {"cond": "opaque"}}}).get(spec) is None


def test_a_cached_finding_keeps_what_its_fix_reads(project):
    """The fix of `x @ W` reads the weight, the op and its operand shapes: a warm run offers the same fix."""
    root, spec = project
    subject = Subject(weight="cell.W.weight", weight_path=("cell", "W", "weight"), primitive="dot_general",
                      operand_shapes=((4, 3), (3,)), algorithm="d_rtrl", suppression_codes=("ETL201",))
    finding = replace(_result(spec).findings[0], subject=subject)
    _cache(root).put(spec, replace(_result(spec), findings=[finding]))
    (found,) = _cache(root).get(spec).findings
    assert found.subject == subject and found == finding


def test_a_result_without_its_notes_serves_only_runs_that_hide_them(project):
    root, spec = project
    hiding = frozenset({"ETL001", "ETL003"})  # notes hidden, no level configured
    partial = replace(_result(spec), notes_left_out={"ETL001": 3}, counted_only=hiding)
    _cache(root).put(spec, partial)
    assert Cache(str(root / ".etrace-lint-cache"), str(root), {}, dict(ENV), count_only=hiding).get(spec)
    assert _cache(root).get(spec) is None, "--show-info must lint again to build the notes"
    raised = frozenset({"ETL003"})  # ETL001 raised to a warning
    cache = Cache(str(root / ".etrace-lint-cache"), str(root), {}, dict(ENV), count_only=raised)
    assert cache.get(spec) is None
    _cache(root).put(spec, _result(spec))  # a result holding every note serves both
    assert Cache(str(root / ".etrace-lint-cache"), str(root), {}, dict(ENV), count_only=hiding).get(spec)
    assert _cache(root).get(spec) is not None


def test_real_versions_come_from_metadata():
    from etrace_lint.running.cache import versions

    found = versions()
    assert found["python"] == sys.version.split()[0]
    assert found["jax"] and found["braintrace"] and found["brainstate"]


def test_corrupted_and_truncated_entries_are_misses(project):
    root, spec = project
    cache = _cache(root)
    cache.put(spec, _result(spec))
    (entry,) = [os.path.join(d, f) for d, _, files in os.walk(root / ".etrace-lint-cache" / "targets")
                for f in files]
    text = open(entry, encoding="utf-8").read()
    for broken in (text[: len(text) // 2], "\x00garbage", "[]", json.dumps({"format": 2, "result": 3,
                                                                            "dependencies": {}})):
        with open(entry, "w", encoding="utf-8") as handle:
            handle.write(broken)
        assert _cache(root).get(spec) is None


def test_cache_folder_is_tagged_json_and_leaves_no_temporary_files(project):
    root, spec = project
    _cache(root).put(spec, _result(spec))
    folder = root / ".etrace-lint-cache"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    files = [os.path.join(d, f) for d, _, names in os.walk(folder / "targets") for f in names]
    assert len(files) == 1 and files[0].endswith(".json")
    json.loads(open(files[0], encoding="utf-8").read())


def test_timeouts_and_crashes_are_not_cached(project):
    root, spec = project
    for reason in ("timeout", "crash"):
        error = ToolError(spec.factory, "stopped", Location(spec.path, 3), reason)
        _cache(root).put(spec, TargetResult(spec.key, tool_errors=[error]))
        assert _cache(root).get(spec) is None


def test_dependents_are_found_by_recorded_imports(project):
    root, spec = project
    _cache(root).put(spec, _result(spec, str(root / "helper.py")))
    assert _cache(root).dependents([str(root / "helper.py")]) == [spec]
    assert _cache(root).dependents([str(root / "other.py")]) == []


# --- the command line: a warm run imports no JAX and prints what the cold run printed ---

PYPROJECT = """
[tool.etrace-lint]
fail-level = "warning"

[tool.etrace-lint.compile-options]
control-flow = { cond = "convert" }

[tool.etrace-lint.verify]
steps = 8
"""


def _entries(root) -> dict:
    found = {}
    for dirpath, _, files in os.walk(os.path.join(root, ".etrace-lint-cache", "targets")):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as handle:
                found[json.loads(json.load(handle)["entry"])["target"][1]] = os.stat(path).st_mtime_ns
    return found


def _sarif(path) -> str:
    with open(path, encoding="utf-8") as handle:
        log = json.load(handle)
    for run in log["runs"]:
        run.pop("invocations", None)  # start and end times
    return json.dumps(log)  # key order matters too: the text must be the same


@pytest.fixture(scope="module")
def cached_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("cached")
    for name in ("clean.py", "layers.py", "leaky.py", "suppressed.py"):
        shutil.copy(fixture("daily", name), root / name)
    (root / "pyproject.toml").write_text(PYPROJECT)
    cold = run_cli(".", "--output-format", "json", "--sarif", "cold.sarif", "-j", "2", cwd=str(root))
    return root, cold


def test_warm_run_imports_no_jax_and_prints_the_same(cached_tree):
    root, cold = cached_tree
    assert cold.returncode == 1, cold.stderr
    warm = run_cli(".", "--output-format", "json", "--sarif", "warm.sarif", "-j", "2", cwd=str(root),
                   env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert warm.returncode == cold.returncode
    assert warm.stdout == cold.stdout
    assert _sarif(root / "warm.sarif") == _sarif(root / "cold.sarif")
    imported = {line.rsplit("|", 1)[-1].strip() for line in warm.stderr.splitlines() if "|" in line}
    assert "etrace_lint.running.cache" in imported, "the import time profile did not reach the cache"
    heavy = sorted(m for m in imported if m.split(".")[0] in ("jax", "jaxlib", "brainstate", "braintrace"))
    assert not heavy, heavy


def test_editing_a_helper_relints_only_its_dependents(cached_tree):
    root, _ = cached_tree
    before = _entries(root)
    assert set(before) == {"etrace_target_clean", "etrace_target_leaky", "etrace_target_two_plain_ops"}
    source = (root / "layers.py").read_text()
    (root / "layers.py").write_text("# a line that moves every finding of this file down\n" + source)
    # as pre-commit does: only the changed file is named; --sarif as the cold run, whose results (probed,
    # as a SARIF run is) are the entries this run must find or replace
    proc = run_cli("layers.py", "--output-format", "json", "--sarif", "edit.sarif", cwd=str(root))
    findings = json.loads(proc.stdout)["findings"]
    assert [(f["rule"], f["location"]["path"], f["location"]["line"]) for f in findings] == [
        ("ETL201", "layers.py", 19)], proc.stderr
    after = _entries(root)
    assert after["etrace_target_leaky"] != before["etrace_target_leaky"]
    assert after["etrace_target_clean"] == before["etrace_target_clean"]
    assert after["etrace_target_two_plain_ops"] == before["etrace_target_two_plain_ops"]


def test_corrupted_cache_is_recomputed_without_traceback(cached_tree):
    root, _ = cached_tree
    reference = run_cli(".", "--output-format", "json", cwd=str(root))
    for dirpath, _, files in os.walk(root / ".etrace-lint-cache" / "targets"):
        for name in files:
            path = os.path.join(dirpath, name)
            data = open(path, "rb").read()
            open(path, "wb").write(data[: len(data) // 3])
    again = run_cli(".", "--output-format", "json", cwd=str(root))
    assert again.returncode == reference.returncode
    assert again.stdout == reference.stdout
    assert "Traceback" not in again.stderr


def test_compiled_programs_not_signed_with_the_users_key_are_never_loaded(cached_tree):
    root, _ = cached_tree
    programs = root / ".etrace-lint-cache" / "xla"
    compiled = sorted(p for p in programs.iterdir() if not p.name.endswith(".hmac"))
    assert compiled, "the workers keep their compiled programs in the cache folder"
    assert all((programs / (p.name + ".hmac")).is_file() for p in compiled), "each program is signed"
    edited, planted = compiled[0], programs / "jit_planted-0123456789abcdef-cache"
    edited.write_bytes(b"not what XLA wrote")
    planted.write_bytes(b"copied in from another machine")
    (root / "leaky.py").write_text((root / "leaky.py").read_text() + "\n# a change: the workers start\n")
    proc = run_cli(".", "--output-format", "json", cwd=str(root))
    assert proc.returncode == 1, proc.stderr
    assert "leaky.py" in proc.stdout
    assert not planted.exists()
    assert not edited.exists() or edited.read_bytes() != b"not what XLA wrote"


def test_concurrent_writers_never_expose_half_an_entry(project):
    """Two runs at once: a reader sees the old entry or the new one, never a partial file."""
    import threading

    root, spec = project
    result = _result(spec)
    result.findings *= 100  # a large entry takes a while to write
    _cache(root).put(spec, result)
    stop, misses = threading.Event(), []

    def write():
        while not stop.is_set():
            _cache(root).put(spec, result)

    writers = [threading.Thread(target=write) for _ in range(2)]
    for thread in writers:
        thread.start()
    try:
        for _ in range(100):
            if _cache(root).get(spec) is None:
                misses.append(1)
    finally:
        stop.set()
        for thread in writers:
            thread.join()
    assert not misses
    leftovers = [f for d, _, names in os.walk(root / ".etrace-lint-cache") for f in names if f.startswith(".tmp-")]
    assert not leftovers


@pytest.mark.parametrize("kind", ["a file in the way", "read-only"])
def test_a_cache_folder_that_cannot_be_written_is_named_once(tmp_path, kind):
    shutil.copy(fixture("hermetic", "patching", "b_victims.py"), tmp_path / "victims.py")
    if kind == "read-only":
        if os.geteuid() == 0:
            pytest.skip("the superuser writes into read-only folders")
        folder = tmp_path / "cache"
        run_cli(".", "-j", "1", "--cache-dir", str(folder), cwd=str(tmp_path))
        (tmp_path / "victims.py").write_text((tmp_path / "victims.py").read_text() + "\n# changed\n")
        for dirpath, _, _ in os.walk(folder):
            os.chmod(dirpath, 0o555)
    else:
        (tmp_path / "blocker").write_text("a file where the cache folder would be\n")
        folder = tmp_path / "blocker" / "cache"
    try:
        proc = run_cli(".", "-j", "1", "--cache-dir", str(folder), cwd=str(tmp_path))
    finally:
        for dirpath, _, _ in os.walk(tmp_path / "cache"):
            os.chmod(dirpath, 0o755)
    assert proc.returncode == 1, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line.lower()]
    assert len(warnings) == 1, proc.stderr
    assert str(folder) in warnings[0] and "--no-cache" in warnings[0] and "--cache-dir" in warnings[0]
