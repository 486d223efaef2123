"""--memory-limit: a runaway target is stopped and named with what it held; the run finishes."""

from __future__ import annotations

import json
import shutil

from helpers import fixture, run_cli


def _tree(tmp_path, config: str = ""):
    shutil.copy(fixture("hermetic", "runaway", "runaway.py"), tmp_path / "runaway.py")
    if config:
        (tmp_path / "pyproject.toml").write_text(f"[tool.etrace-lint]\n{config}\n", encoding="utf-8")
    return str(tmp_path)


def test_runaway_targets_are_stopped_at_the_configured_limit_and_the_run_finishes(tmp_path):
    root = _tree(tmp_path, 'memory-limit = "2GiB"')
    proc = run_cli(".", "-j", "1", "--no-cache", "--output-format", "json", cwd=root)
    assert proc.returncode == 2, proc.stderr
    report = json.loads(proc.stdout)
    errors = {error["model"]: error["message"] for error in report["toolErrors"]}
    for model in ("etrace_target_allocates_forever", "etrace_target_recurses_with_large_frames"):
        assert "more than the memory limit of 2 GiB, and was stopped (--memory-limit" in errors[model], errors
        held = errors[model].split("linting held ")[1].split(" GiB")[0]
        assert float(held) > 2, errors[model]
    # deep recursion is reported as what it is
    assert "RecursionError: maximum recursion depth exceeded" in errors["etrace_target_recurses_without_end"]
    # the model after them is linted by a fresh worker
    assert "etrace_target_fine" not in errors
    assert {f["model"] for f in report["findings"]} == set()  # its notes are hidden: no finding, no error
    assert "1 model" in run_cli("runaway.py::etrace_target_fine", "--no-cache", cwd=root).stdout


def test_the_flag_overrides_the_file_and_a_size_without_unit_is_a_usage_error(tmp_path):
    root = _tree(tmp_path, 'memory-limit = "2GiB"')
    proc = run_cli("runaway.py::etrace_target_allocates_forever", "--memory-limit", "1.5GiB", "--no-cache",
                   "--output-format", "json", cwd=root)
    (error,) = json.loads(proc.stdout)["toolErrors"]
    assert "more than the memory limit of 1.5 GiB" in error["message"]
    bad = run_cli(".", "--memory-limit", "3000", cwd=root)
    assert bad.returncode == 2 and "--memory-limit: '3000' is not a size with a unit" in bad.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.etrace-lint]\nmemory-limit = "lots"\n', encoding="utf-8")
    bad = run_cli(".", cwd=root)
    assert bad.returncode == 2 and "memory-limit: 'lots' is not a size" in bad.stderr
