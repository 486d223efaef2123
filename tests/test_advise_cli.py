"""``etrace-lint advise`` as a user runs it: JSON, SARIF run properties and the text table, through the
workers and the cache."""

from __future__ import annotations

import json

import pytest
from helpers import run_cli, sarif_validator

TARGET = "tests/fixtures/advise/models.py::etrace_target_rate_rnn"
CRASH = "tests/fixtures/advise/crash.py"  # its step ends the worker's process when it runs
KEYS = {"target", "algorithm", "options", "compiles", "runs", "error", "trace_bytes", "trace_bytes_law",
        "xla_temp_bytes", "flops_ratio", "zero_gradient_weights", "weights"}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("advise")
    sarif = folder / "out.sarif"
    cache = folder / "cache"
    args = ("advise", TARGET, CRASH, "--algorithms", "d_rtrl,snap,dni", "--steps", "3", "--batch-size", "8",
            "--cache-dir", str(cache), "--no-probe")  # --sarif alone would turn the probe on: another cache key
    done = run_cli(*args, "--output-format", "json", "--sarif", str(sarif))
    return done, sarif, args


def test_json_has_one_row_per_algorithm_in_the_documented_shape(first_run):
    done, _, _ = first_run
    assert done.returncode == 2, done.stderr  # the crashing model is a tool error
    document = json.loads(done.stdout)
    [error] = document["toolErrors"]
    assert "crash.py::etrace_target_ends_the_process" in error["message"]
    advice = document["advice"]  # nothing of the other target is lost
    assert [row["algorithm"] for row in advice] == ["d_rtrl", "snap", "dni"]
    for row in advice:
        assert KEYS <= set(row), row
        assert row["target"] == TARGET
        assert set(row["trace_bytes_law"]) == {"c0", "c1", "c2"}
        for weight in row["weights"]:
            assert set(weight) == {"weight", "cosine", "relative_error", "verdict"}
    by_name = {row["algorithm"]: row for row in advice}
    snap = by_name["snap"]
    law = snap["trace_bytes_law"]
    assert snap["trace_bytes"] == law["c0"] + 8 * law["c1"] + 64 * law["c2"] and law["c2"] > 0
    assert all(w["verdict"] == "exact" for w in snap["weights"] if w["weight"].startswith("cell."))
    # DNI builds with no synthesizer and refuses its first online step: compiles, does not run
    assert by_name["dni"]["compiles"] and not by_name["dni"]["runs"]
    assert "synthesizer" in by_name["dni"]["error"]
    assert sum(row["recommended"] for row in advice) == 1


def test_sarif_carries_the_table_in_run_properties(first_run):
    done, sarif, _ = first_run
    log = json.loads(sarif.read_text())
    sarif_validator().validate(log)
    advice = log["runs"][0]["properties"]["advice"]
    # SARIF leaves out null properties; every figure is there
    assert advice == _without_nulls(json.loads(done.stdout)["advice"])


def _without_nulls(value):
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def test_text_table_comes_from_the_cache_with_the_same_figures(first_run):
    done, _, args = first_run
    again = run_cli(*[arg for arg in args if arg != CRASH], "-v")
    assert again.returncode in (0, 1), again.stderr
    assert "etrace_target_rate_rnn linted from the cache" in again.stderr
    text = again.stdout
    assert f"Learning-rule advice for {TARGET}" in text
    snap = next(row for row in json.loads(done.stdout)["advice"] if row["algorithm"] == "snap")
    law = snap["trace_bytes_law"]
    line = next(line for line in text.splitlines() if line.strip().lstrip("* ").startswith("snap "))
    assert f"{law['c2']}·B²" in line and f"{law['c0']} + " in line
    from etrace_lint.running.memory import format_size
    assert format_size(snap["trace_bytes"]) in line
    assert "dni: RuntimeError" in text and "recommended:" in text


def test_an_unknown_algorithm_is_a_usage_error_before_any_model_runs():
    done = run_cli("advise", TARGET, "--algorithms", "d_rtrl,snap:multi-step,rtrl")
    assert done.returncode == 2
    assert "--algorithms: unknown snap:multi-step, rtrl" in done.stderr and "d_rtrl:multi-step" in done.stderr
