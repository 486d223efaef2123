"""Every target's answer is the one it gets alone in a fresh process, whatever ran before it on the worker.

The fixtures under ``fixtures/hermetic`` do what real files do: swap library
functions at import (``brainstate.nn.Linear``, ``jax.numpy.dot``,
``braintrace.compile_etrace_graph``), switch JAX to 64 bits at import, change
directory, close ``sys.stdout`` and file descriptor 2.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time

import pytest
from helpers import fixture, run_cli


def _copy(tmp_path, name: str) -> str:
    target = tmp_path / name
    shutil.copytree(fixture("hermetic", name), target)
    return str(target)


def _lint(root: str, *args: str) -> dict:
    proc = run_cli(*args, "--output-format", "json", "--show-info", cwd=root)
    assert proc.returncode in (0, 1, 2), proc.stderr
    return json.loads(proc.stdout)


def _by_model(report: dict) -> dict[str, tuple]:
    """What each model got: its findings (rule, file, line) and its tool errors."""
    models: dict[str, tuple[list, list]] = {}
    for finding in report["findings"]:
        models.setdefault(finding["model"], ([], []))[0].append(
            (finding["rule"], finding["location"]["path"], finding["location"]["line"]))
    for error in report["toolErrors"]:
        models.setdefault(error["model"], ([], []))[1].append(error["message"])
    return {model: (sorted(found), sorted(errors)) for model, (found, errors) in models.items()}


@pytest.fixture(scope="module")
def victims_alone(tmp_path_factory):
    """What the victims' file gets linted alone, the same for every number of workers."""
    return _by_model(_lint(_copy(tmp_path_factory.mktemp("alone"), "patching"), "b_victims.py", "-j", "1",
                           "--no-cache"))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_that_swaps_library_functions_changes_nothing_for_the_files_after_it(tmp_path, jobs, victims_alone):
    root = _copy(tmp_path, "patching")
    cache = str(tmp_path / "cache")
    together = _by_model(_lint(root, ".", "-j", jobs, "--cache-dir", cache))
    victims = together["etrace_target_plain_linear"][0]
    assert ("ETL201", "b_victims.py", 17) in victims, together
    assert not [f for f in together["etrace_target_clean_lstm"][0] if f[0].startswith("ETL1")], together
    # the patching file's own target is reported as alone: its compiler is switched off
    assert ("ETL100", "a_patches_libraries.py", 9) in together["etrace_target_patcher"][0], together
    # what the cache keeps from that run is what each file gets alone
    alone = victims_alone
    replayed = _by_model(_lint(root, "b_victims.py", "-j", "1", "--cache-dir", cache))
    assert alone == replayed == {k: v for k, v in together.items() if k != "etrace_target_patcher"}


# one worker: the file that switches on 64 bits at import goes first, and the target after it, which
# raises unless its numbers are 32 bits, shows that it left the next file at 32 bits
@pytest.mark.parametrize("jobs, paths", [("1", ("sixty_four.py", "neighbours.py")), ("2", (".",))])
def test_targets_of_one_file_start_from_what_the_file_import_left_and_nothing_else(tmp_path, jobs, paths):
    """x64 switched on by a helper one target imports, os.chdir, a closed stdout and fd 2 stay with
    the target that did it; a file whose own import switches on x64 keeps it for all its targets."""
    root = _copy(tmp_path, "one_file")
    report = _lint(root, *paths, "-j", jobs, "--no-cache")
    assert report["toolErrors"] == []
    assert {"etrace_target_first", "etrace_target_second", "etrace_target_2_reads_precision"} <= {
        finding["model"] for finding in report["findings"]}
    models = _by_model(report)
    assert len(models) == 8, models
    # each target of neighbours.py builds the same GRU: the same findings, on its own lines
    assert {tuple(rule for rule, _, _ in found) for found, _ in models.values()} == {("ETL001", "ETL001", "ETL005")}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are Linux's")
def test_no_process_a_target_starts_outlives_it(tmp_path):
    root = _copy(tmp_path, "children")
    report = _lint(root, ".", "-j", "1", "--no-cache")
    pids = [int(line) for line in open(os.path.join(root, "pids.txt"), encoding="utf-8")]
    assert len(pids) == 3
    deadline = time.monotonic() + 60  # the wait ends when they do: a bound only for a loaded machine
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in pids if _alive(pid)]
    stopped = {error["model"]: error["message"] for error in report["toolErrors"]}
    assert set(stopped) == {"etrace_target_popen", "etrace_target_new_session", "etrace_target_orphan"}, stopped
    for model, message in stopped.items():
        assert "left processes running, which were stopped" in message and "time.sleep(600)" in message
    # the targets themselves were linted: their findings are there
    assert {"etrace_target_popen", "etrace_target_quiet"} <= set(_by_model(report))


def test_the_language_server_reports_a_file_opened_after_a_patching_one_as_if_alone(tmp_path):
    pytest.importorskip("pygls")
    sys.path.insert(0, fixture("server"))
    from lsp_session import LspSession

    root = _copy(tmp_path, "patching")
    with open(os.path.join(root, "pyproject.toml"), "w", encoding="utf-8") as handle:
        handle.write("[tool.etrace-lint]\n")
    session = LspSession(root, init_options={"trusted": True})
    try:
        patcher, victims = os.path.join(root, "a_patches_libraries.py"), os.path.join(root, "b_victims.py")
        session.open(patcher)
        session.wait_for(lambda s: s.codes(patcher) == [(9, "ETL100")], what="the patching file's own finding")
        session.open(victims)
        session.wait_for(lambda s: s.codes(victims) == [(17, "ETL201")], what="the victims' findings as if alone")
        assert session.codes(patcher) == [(9, "ETL100")]
    finally:
        session.close()


def test_each_target_of_a_file_that_draws_at_import_draws_what_it_draws_alone(tmp_path):
    root = _copy(tmp_path, "random")
    together = _by_model(_lint(root, ".", "-j", "1", "--no-cache"))
    for factory in ("etrace_target_first", "etrace_target_second"):
        alone = _by_model(_lint(root, f"draws_at_import.py::{factory}", "-j", "1", "--no-cache"))
        assert alone[factory] == together[factory]
    first, second = (together[f][1][0].partition("drew ")[2] for f in ("etrace_target_first", "etrace_target_second"))
    assert first == second and first, together
