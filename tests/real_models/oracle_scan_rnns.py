"""braintrace's gradient-oracle leaky integrator and its scan-descent RNNs: inner for_loops of sub-steps.

Upstream: chaobrain/braintrace braintrace/_testing/oracle_models.py
(``leaky_linear``, ``snn_scan_rnn``, ``snn_scan_two_state_rnn``), Copyright 2026
BrainX Ecosystem Limited, Apache License 2.0, as they are there (sizes, seeds,
scales; ``loops`` 8 where upstream defaults to 40).

- ``leaky_linear``: ``h = leak * h + matmul(x, w)``, the hidden-to-hidden
  Jacobian exactly ``leak * I``; trained here with e-prop.
- ``snn_scan_rnn``: each step runs ``loops`` sub-steps
  ``h <- decay * h + tanh(matmul(x, w))`` in a ``brainstate.transform.for_loop``
  (a ``lax.scan`` the compiler unrolls or descends).
- ``snn_scan_two_state_rnn``: the same with two coupled states ``v`` and ``a``.
"""

import brainstate
import braintrace
import jax
import jax.numpy as jnp

import etrace_lint


class LeakyLinear(brainstate.nn.Module):
    def __init__(self, n_in=3, n_rec=4, leak=0.9, seed=0):
        super().__init__()
        self.leak = leak
        self.w = brainstate.ParamState(0.1 * jax.random.normal(jax.random.PRNGKey(seed), (n_in, n_rec)))
        self.h = brainstate.HiddenState(jnp.zeros((1, n_rec)))

    def update(self, x):
        drive = braintrace.matmul(x.reshape(1, -1), self.w.value)
        self.h.value = self.leak * self.h.value + drive
        return self.h.value


class ScanRNN(brainstate.nn.Module):
    def __init__(self, n_rec=4, loops=8, decay=0.9, seed=0):
        super().__init__()
        self.loops = loops
        self.decay = decay
        with brainstate.random.seed_context(seed):
            self.w = brainstate.ParamState(0.1 * brainstate.random.randn(n_rec, n_rec))
        self.h = brainstate.HiddenState(jnp.zeros((1, n_rec)))

    def update(self, x):
        x_row = x.reshape(1, -1)

        def substep(_):
            self.h.value = self.decay * self.h.value + jax.nn.tanh(braintrace.matmul(x_row, self.w.value))
            return self.h.value

        outs = brainstate.transform.for_loop(substep, jnp.arange(self.loops))
        return outs[-1]


class ScanTwoStateRNN(brainstate.nn.Module):
    def __init__(self, n_rec=3, loops=8, seed=0):
        super().__init__()
        self.loops = loops
        with brainstate.random.seed_context(seed):
            self.w = brainstate.ParamState(0.1 * brainstate.random.randn(n_rec, n_rec))
        self.v = brainstate.HiddenState(jnp.zeros((1, n_rec)))
        self.a = brainstate.HiddenState(jnp.zeros((1, n_rec)))

    def update(self, x):
        x_row = x.reshape(1, -1)

        def substep(_):
            v, a = self.v.value, self.a.value
            self.v.value = 0.9 * v + braintrace.matmul(x_row, self.w.value) - 0.1 * a
            self.a.value = 0.95 * a + v
            return self.v.value

        outs = brainstate.transform.for_loop(substep, jnp.arange(self.loops))
        return outs[-1]


@etrace_lint.target(name="oracle-leaky-linear-eprop", verify={"algorithms": ["eprop"]})
def oracle_leaky_linear_eprop():
    return LeakyLinear(), (jnp.ones((3,)),)


@etrace_lint.target(name="oracle-scan-rnn", verify={"algorithms": ["d_rtrl"]})
def oracle_scan_rnn():
    return ScanRNN(), (jnp.ones((4,)),)


@etrace_lint.target(name="oracle-scan-two-state-rnn", verify={"algorithms": ["d_rtrl"]})
def oracle_scan_two_state_rnn():
    return ScanTwoStateRNN(), (jnp.ones((3,)),)
