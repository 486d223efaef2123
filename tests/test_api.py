"""etrace_lint.check / check_target: the verdicts as objects, for notebooks and for users' own tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from helpers import REPO

RATE_RNN = os.path.join(REPO, "examples", "models", "plain_matmul_rnn.py")


def _python(code: str, cwd: str = REPO) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_check_target_gives_each_weights_verdict_and_the_findings():
    import etrace_lint

    result = etrace_lint.check_target(RATE_RNN, root=os.path.join(REPO, "examples"))
    assert result.weights() == {"etrace_target_rate_rnn": {"w_in": "learns", "w_rec": "does not learn"}}
    assert [f.rule_id for f in result.warnings] == ["ETL201"]
    assert not result.errors and not result.tool_errors
    graph, = result.graphs
    w_rec = next(node for node in graph.nodes if node.label == "w_rec")
    # the finding is drawn on the weight it is about
    assert graph.node_of(w_rec.findings[0]) == w_rec
    # paths relative to the root given, as --root does
    assert "\n  models/plain_matmul_rnn.py:23:57: ETL201 w_rec reaches h" in repr(result)


def test_check_of_a_model_built_in_the_caller():
    import braintrace
    import jax.numpy as jnp

    import etrace_lint

    result = etrace_lint.check(braintrace.nn.GRUCell(4, 8), jnp.ones((4,)), name="gru")
    assert result.weights()["gru"]["Wr.weight"] == "does not learn"
    assert result.weights()["gru"]["Wh.weight"] == "learns"
    assert all(f.path == os.path.abspath(__file__) for f in result.findings)  # the caller's line


def test_an_unknown_option_is_refused():
    import pytest

    import etrace_lint

    with pytest.raises(TypeError, match="unknown option 'slect'"):
        etrace_lint.check_target(RATE_RNN, slect=["ETL2"])


def test_import_etrace_lint_does_not_import_jax():
    done = _python("import sys, etrace_lint; etrace_lint.check; print('jax' in sys.modules)")
    assert done.stdout.strip() == "False", done.stderr


def test_a_failing_assert_in_a_users_test_prints_the_findings(tmp_path):
    test = tmp_path / "test_model.py"
    test.write_text(textwrap.dedent(f"""
        import etrace_lint

        def test_units():
            result = etrace_lint.check_target({os.path.join(REPO, "examples", "models", "units_mismatch.py")!r})
            assert not result.errors
    """), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "pytest", str(test), "-q", "-p", "no:cacheprovider"],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1
    assert "assert not <1 finding:" in done.stdout
    assert "units_mismatch.py:26:54: ETL101 unit mismatch: mV and nA meet in one expression" in done.stdout


def test_each_weight_has_one_state_partial_learning_and_learning_against_bptt_included():
    import etrace_lint

    partly = etrace_lint.check_target(os.path.join(REPO, "tests", "real_models", "inner_loop_cell.py"))
    assert partly.weights() == {"inner-loop-cell": {"w": "learns partly"}}
    against = etrace_lint.check_target(os.path.join(REPO, "tests", "fixtures", "verify", "against.py"), verify=True)
    states = against.weights()
    assert states["etrace_target_delayed_inhibition"] == {"w.weight": "learns against BPTT"}
    assert states["etrace_target_elementwise_inhibition"] == {"w.weight": "learns"}


def test_the_findings_about_a_weight_or_state_are_read_from_their_subjects_not_their_messages():
    import etrace_lint

    long_scan = os.path.join(REPO, "tests", "fixtures", "compiler", "control_flow.py::etrace_target_long_scan_plain")
    result = etrace_lint.check_target(long_scan)
    # ETL015 says only in words that w, used through plain ops in a long scan, does not learn online
    assert "ETL015" in {f.rule_id for f in result.about("w")}
    # and braintrace.compile refuses the model, whose only weight reaches no hidden state through an ETP op (ETL204)
    assert result.weights() == {"etrace_target_long_scan_plain": {"w": "refused"}}
    assert "ETL013" in {f.rule_id for f in result.about("h")}  # the scan structured descent handles carries h
    assert not result.about("nothing")


def test_a_readout_braintrace_names_only_in_its_record_has_a_verdict():
    import braintrace
    import pytest

    import etrace_lint

    if "output_bypasses_hidden" not in {kind.value for kind in braintrace.DiagnosticKind}:
        pytest.skip(f"braintrace {braintrace.__version__} reports no output bypass")
    readout = os.path.join(REPO, "tests", "fixtures", "compiler", "output_bypass.py::etrace_target_skip_readout")
    result = etrace_lint.check_target(readout)
    assert [f.rule_id for f in result.about("w_skip")] == ["ETL019"]
    # a plain `x @ w_skip` into the output: its exact same-step gradient is what it learns from
    assert result.weights()["etrace_target_skip_readout"]["w_skip"] == "learns"
