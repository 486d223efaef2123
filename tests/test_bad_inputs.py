"""A tree full of broken models, linted as a user would in CI.

Every broken target is reported by file and name, every good target's
findings survive, the SARIF is still written and valid, no traceback leaks,
and the whole run ends within the timeout plus three minutes (the rest of
the tree, each file in a fresh worker, on a machine that may be busy).
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest
from helpers import FIXTURES, run_cli, sarif_validator

TIMEOUT = 20


def _sarif_validator():
    return sarif_validator()


def _many_targets(count: int) -> str:
    lines = ["import braintrace", "import jax.numpy as jnp", ""]
    for i in range(count):
        lines += [f"def etrace_target_{i:03d}():", "    return braintrace.nn.GRUCell(2, 2), (jnp.ones((2,)),)", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def hostile_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    models = root / "models"
    shutil.copytree(os.path.join(FIXTURES, "bad"), models)
    (models / "latin1.py").write_bytes(b"# caf\xe9 au lait\nx = '\xe9'\n")
    spaced = models / "modèle à espaces.py"
    spaced.write_text(
        "import braintrace\nimport jax.numpy as jnp\n\n\n"
        "def etrace_target_spaced():\n    return braintrace.nn.GRUCell(3, 4), (jnp.ones((3,)),)\n",
        encoding="utf-8")
    (models / "many.py").write_text(_many_targets(200), encoding="utf-8")
    (models / "empty_folder").mkdir()
    os.symlink(models, models / "loop")
    outside = tmp_path_factory.mktemp("outside")
    (outside / "elsewhere.py").write_text(
        "import braintrace\nimport jax.numpy as jnp\n\n\n"
        "def etrace_target_outside():\n    return braintrace.nn.GRUCell(3, 4), (jnp.ones((3,)),)\n",
        encoding="utf-8")
    os.symlink(outside, models / "outside_link")
    return root


@pytest.fixture(scope="module")
def hostile_run(hostile_tree):
    sarif = hostile_tree / "out.sarif"
    start = time.monotonic()
    # --no-probe: two hundred targets each probed would outlast the time this test allows the whole run
    proc = run_cli("models", "--output-format", "json", "--sarif", str(sarif), "--no-probe", "--timeout", str(TIMEOUT),
                   "-j", "2", "--no-cache", cwd=str(hostile_tree), timeout=TIMEOUT + 600)
    elapsed = time.monotonic() - start
    return proc, json.loads(proc.stdout), json.loads(sarif.read_text(encoding="utf-8")), elapsed


def _errors_by_model(document):
    return {e["model"]: e for e in document["toolErrors"]}


def test_exit_code_is_2_and_nothing_leaks(hostile_run):
    proc, _, _, _ = hostile_run
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr


def test_run_ends_within_timeout_plus_three_minutes(hostile_run):
    *_, elapsed = hostile_run
    # the hang costs one timeout; the rest of the tree has to fit in the three minutes after it
    assert elapsed < TIMEOUT + 180, elapsed


@pytest.mark.parametrize("model, words", [
    ("etrace_target_raises", ["broken_factories.py", "RuntimeError", "dataset path not configured"]),
    ("etrace_target_not_a_pair", ["broken_factories.py", "(model, example_inputs)"]),
    ("etrace_target_not_a_module", ["broken_factories.py", "brainstate.nn.Module"]),
    ("etrace_target_hangs", ["hangs.py", "timeout", str(TIMEOUT)]),
    ("etrace_target_crashes", ["crashes.py", "17"]),
    ("etrace_target_segfaults", ["crashes.py"]),
])
def test_each_broken_factory_is_a_named_tool_error(hostile_run, model, words):
    _, document, _, _ = hostile_run
    errors = _errors_by_model(document)
    assert model in errors, sorted(errors)
    text = errors[model]["message"] + " " + errors[model]["location"]["path"]
    for word in words:
        assert word.lower() in text.lower(), (word, text)


def test_files_that_do_not_import_or_parse_are_named(hostile_run):
    _, document, _, _ = hostile_run
    paths = {e["location"]["path"]: e["message"] for e in document["toolErrors"]}
    assert any(p.endswith("syntax_error.py") for p in paths), paths
    assert any(p.endswith("import_error.py") and "package_that_is_not_installed" in m for p, m in paths.items())
    assert any(p.endswith("latin1.py") for p in paths), paths


@pytest.mark.parametrize("model", ["etrace_target_step_raises", "etrace_target_wrong_shape",
                                   "etrace_target_wrong_dtype"])
def test_models_that_do_not_trace_are_findings_on_the_model(hostile_run, model):
    _, document, _, _ = hostile_run
    mine = [f for f in document["findings"] if f["model"] == model]
    assert mine, f"no finding for {model}"
    assert all(f["level"] == "error" for f in mine)
    assert all(f["location"]["path"].endswith("broken_factories.py") for f in mine)
    assert "braintraceError" in mine[0]["properties"]


def test_good_targets_are_all_linted(hostile_run):
    _, document, _, _ = hostile_run
    models = {f["model"] for f in document["findings"]}
    # the GRU's reset gate is excluded weight-to-weight wherever a GRU is built
    for expected in ("etrace_target_gru", "etrace_target_plain", "etrace_target_spaced",
                     "etrace_target_000", "etrace_target_199"):
        assert expected in models, expected
    many = {f["model"] for f in document["findings"] if f["location"]["path"].endswith("many.py")}
    assert len(many) == 200


def test_symlinks_neither_loop_nor_escape(hostile_run):
    _, document, _, _ = hostile_run
    models = [f["model"] for f in document["findings"]]
    assert models.count("etrace_target_gru") == len({(f["location"]["line"], f["rule"]) for f in document["findings"]
                                                       if f["model"] == "etrace_target_gru"})
    assert "etrace_target_outside" not in models


def test_sarif_is_valid_and_free_of_absolute_paths(hostile_run, hostile_tree):
    _, _, log, _ = hostile_run
    _sarif_validator().validate(log)
    assert str(hostile_tree) not in json.dumps(log)
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert len(invocation["toolExecutionNotifications"]) >= 8


def test_missing_path_and_empty_folder(tmp_path):
    empty = tmp_path / "nothing_here"
    empty.mkdir()
    proc = run_cli(str(empty), "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_cli("does/not/exist.py", "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 2
    assert "does/not/exist.py" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("content, words", [
    ("[tool.etrace-lint\nselect = [", ["pyproject.toml"]),
    ("[tool.etrace-lint]\njobs = \"many\"\n", ["pyproject.toml", "jobs"]),
    ("[tool.etrace-lint]\nselect = \"ETL005\"\nfail-level = 3\n", ["pyproject.toml"]),
])
def test_broken_pyproject_is_a_usage_error(tmp_path, content, words):
    (tmp_path / "pyproject.toml").write_text(content, encoding="utf-8")
    shutil.copy(os.path.join(FIXTURES, "bad", "good_models.py"), tmp_path / "good_models.py")
    proc = run_cli("good_models.py", "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 2
    out = proc.stdout + proc.stderr
    for word in words:
        assert word in out
    assert "Traceback" not in out


def test_corrupted_and_truncated_cache_files_are_recomputed(tmp_path):
    shutil.copy(os.path.join(FIXTURES, "bad", "good_models.py"), tmp_path / "good_models.py")
    first = run_cli("good_models.py", "--output-format", "json", cwd=str(tmp_path))
    cache_files = [os.path.join(d, f) for d, _, files in os.walk(tmp_path / ".etrace-lint-cache")
                   for f in files if f.endswith(".json")]
    assert cache_files, "the first run wrote no cache"
    for index, path in enumerate(cache_files):
        with open(path, "r+b") as handle:
            data = handle.read()
            handle.seek(0)
            handle.truncate()
            handle.write(data[: len(data) // 2] if index % 2 else b"\x00not json{")
    second = run_cli("good_models.py", "--output-format", "json", cwd=str(tmp_path))
    assert second.returncode == first.returncode
    assert json.loads(second.stdout)["findings"] == json.loads(first.stdout)["findings"]
    assert "Traceback" not in second.stdout + second.stderr
