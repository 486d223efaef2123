"""Models with no weight that reaches a hidden state through an ETP op: braintrace.compile refuses them.

Upstream: chaobrain/braintrace braintrace/_compile.py (the guardrail that raises
``CompilationError: No trainable weights are routed through ETP ops, so the
model has nothing to train online``) and braintrace/_compile_test.py
(``_NoEtraceModel``, ``test_compile_guardrail_no_etrace_weights_raises``),
Copyright 2026 BrainX Ecosystem Limited, Apache License 2.0.

- ``feedforward-tanh-mlp-batched``: ``braintrace.nn.Linear -> tanh ->
  braintrace.nn.Linear`` with no state at all, batch 4 (issue 38, item 2: the
  advisor said every algorithm compiles; ``braintrace.compile(model, algorithm,
  x, batch_size=4)`` refuses each of them).
- ``no-etrace-weight-rnn``: upstream's ``_NoEtraceModel`` as it is there, a
  tanh hidden state driven by a ``ParamState`` through a plain ``jnp.matmul``.
"""

import brainstate
import braintrace
import jax
import jax.numpy as jnp

import etrace_lint


class TanhMLP(brainstate.nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.fc1 = braintrace.nn.Linear(n_in, n_hidden)
        self.fc2 = braintrace.nn.Linear(n_hidden, n_out)

    def update(self, x):
        return self.fc2(jnp.tanh(self.fc1(x)))


class NoEtraceModel(brainstate.nn.Module):
    """A model with a ParamState used through a *plain* JAX op (no ETP routing)."""

    def __init__(self):
        super().__init__()
        self.h = brainstate.HiddenState(jnp.zeros((1, 4)))
        self.w = brainstate.ParamState(jnp.ones((3, 4)))

    def update(self, x):
        self.h.value = jax.nn.tanh(jnp.matmul(x, self.w.value))
        return self.h.value


@etrace_lint.target(name="feedforward-tanh-mlp-batched", batch_size=4, verify={"algorithms": ["d_rtrl"]})
def feedforward_tanh_mlp_batched():
    model = TanhMLP(3, 6, 2)
    brainstate.nn.init_all_states(model, batch_size=4)
    return model, (jnp.ones((4, 3)),)


@etrace_lint.target(name="no-etrace-weight-rnn", verify={"algorithms": ["d_rtrl"]})
def no_etrace_weight_rnn():
    model = NoEtraceModel()
    return model, (jnp.ones((1, 3)),)
