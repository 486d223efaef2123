"""Rules of our own: what the compiler does not say."""

from __future__ import annotations

import glob
import os

import pytest

from etrace_lint import registry
from helpers import FIXTURES, assert_fixture, lint_file

OWN_FIXTURES = sorted(glob.glob(os.path.join(FIXTURES, "own", "*.py")))


@pytest.mark.parametrize("path", OWN_FIXTURES, ids=os.path.basename)
def test_fixture_reports_exactly_its_markers(path):
    assert_fixture(path)


def test_plain_op_finding_names_weight_hidden_state_and_op():
    findings, _ = lint_file(os.path.join(FIXTURES, "own", "plain_op.py") + "::etrace_target_plain_input")
    (finding,) = [f for f in findings if f.rule_id == "ETL201"]
    assert "w_in" in finding.message and "h" in finding.message and "dot_general" in finding.message
    assert any(loc.label == "weight created here" and loc.line == 11 for loc in finding.related)


def test_online_gradient_check_runs_only_when_asked():
    rule = registry.all_rules()["ETL205"]
    assert rule.opt_in_flag == "--check-online-grad"
    path = os.path.join(FIXTURES, "own", "plain_op.py") + "::etrace_target_etp_everywhere"
    calls = []
    from etrace_lint import braintrace_adapter

    original = braintrace_adapter.online_gradient_failure

    def spy(model, inputs):
        calls.append(model)
        return original(model, inputs)

    braintrace_adapter.online_gradient_failure = spy
    try:
        lint_file(path)
        assert calls == []
        findings, errors = lint_file(path, check_online_grad=True)
    finally:
        braintrace_adapter.online_gradient_failure = original
    assert len(calls) == 1 and not errors
    assert [f for f in findings if f.rule_id == "ETL205"] == []


def test_online_gradient_failure_is_reported(monkeypatch):
    from etrace_lint import braintrace_adapter

    monkeypatch.setattr(braintrace_adapter, "online_gradient_failure",
                        lambda model, inputs: "NotImplementedError: reverse-mode of while_loop")
    findings, _ = lint_file(os.path.join(FIXTURES, "own", "plain_op.py") + "::etrace_target_etp_everywhere",
                            check_online_grad=True)
    (finding,) = [f for f in findings if f.rule_id == "ETL205"]
    assert "while_loop" in finding.message and finding.level.value == "error"


def test_online_gradient_check_leaves_the_model_as_it_was():
    import brainstate
    import jax.numpy as jnp
    import numpy as np

    from etrace_lint.braintrace_adapter import online_gradient_failure
    from etrace_lint.targets import load_target
    from etrace_lint.discover import discover

    (spec,) = discover([os.path.join(FIXTURES, "own", "plain_op.py") + "::etrace_target_etp_everywhere"],
                       FIXTURES).targets
    model = load_target(spec).model
    brainstate.nn.init_all_states(model)
    model.h.value = jnp.arange(4.0)
    before = {p: np.asarray(s.value) for p, s in brainstate.graph.states(model).items()}
    assert online_gradient_failure(model, (jnp.ones((4,)),)) is None
    after = {p: np.asarray(s.value) for p, s in brainstate.graph.states(model).items()}
    assert before.keys() == after.keys()
    for path in before:
        np.testing.assert_array_equal(before[path], after[path])
