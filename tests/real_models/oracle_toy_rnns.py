"""braintrace's gradient-oracle toy RNNs: a plain input weight, two coupled states, a tied weight, a cond, a roll.

Upstream: chaobrain/braintrace braintrace/_testing/oracle_models.py
(``tanh_rnn``, ``two_state_rnn``, ``tied_weight_rnn``, ``cond_gate_rnn``,
``rolled_tail_rnn``: the deterministic models braintrace's own gradient-oracle
tests compare its algorithms against BPTT on), Copyright 2026 BrainX Ecosystem
Limited, Apache License 2.0. The models are as they are there (sizes, seeds,
scales); each factory here builds one and initialises it.

- ``tanh_rnn``: the recurrent weight ``w`` goes through ``braintrace.matmul``,
  the input weight ``win`` through a plain ``@`` (upstream: "excluded from ETP").
- ``two_state_rnn``: ``v`` and ``a`` coupled into one hidden group of two states.
- ``tied_weight_rnn``: one weight used by two ETP matmuls (input and recurrence).
- ``cond_gate_rnn``: the drive is a ``lax.cond`` between two ETP matmuls.
- ``rolled_tail_rnn``: the recurrent term is rolled by one position before the
  tanh, so hidden positions are relabelled between the op and the state.
"""

import brainstate
import braintrace
import jax
import jax.numpy as jnp

import etrace_lint


class TanhRNN(brainstate.nn.Module):
    def __init__(self, n_in=3, n_rec=4, seed=0):
        super().__init__()
        self.w = brainstate.ParamState(0.1 * jax.random.normal(jax.random.PRNGKey(seed), (n_rec, n_rec)))
        self.win = brainstate.ParamState(0.1 * jax.random.normal(jax.random.PRNGKey(seed + 1), (n_in, n_rec)))
        self.h = brainstate.HiddenState(jnp.zeros((1, n_rec)))

    def update(self, x):
        inp = x @ self.win.value  # plain op -> excluded from ETP
        self.h.value = jax.nn.tanh(inp + braintrace.matmul(self.h.value, self.w.value))
        return self.h.value


class TwoStateRNN(brainstate.nn.Module):
    def __init__(self, n_in=3, n_rec=3, seed=0):
        super().__init__()
        self.w = brainstate.ParamState(0.1 * jax.random.normal(jax.random.PRNGKey(seed), (n_in, n_rec)))
        self.v = brainstate.HiddenState(jnp.zeros((1, n_rec)))
        self.a = brainstate.HiddenState(jnp.zeros((1, n_rec)))

    def update(self, x):
        v, a = self.v.value, self.a.value
        self.v.value = 0.9 * v + braintrace.matmul(x.reshape(1, -1), self.w.value) - 0.1 * a
        self.a.value = 0.95 * a + v
        return self.v.value


class TiedWeightRNN(brainstate.nn.Module):
    def __init__(self, n_rec=4, seed=0):
        super().__init__()
        with brainstate.random.seed_context(seed):
            self.w = brainstate.ParamState(0.1 * brainstate.random.randn(n_rec, n_rec))
        self.h = brainstate.HiddenState(jnp.zeros((1, n_rec)))

    def update(self, x):
        a = braintrace.matmul(x.reshape(1, -1), self.w.value)
        b = braintrace.matmul(self.h.value, self.w.value)
        self.h.value = jax.nn.tanh(a + b)
        return self.h.value


class CondGateRNN(brainstate.nn.Module):
    def __init__(self, n_in=3, n_rec=4, leak=0.9, seed=0):
        super().__init__()
        self.leak = leak
        with brainstate.random.seed_context(seed):
            self.w_a = brainstate.ParamState(0.1 * brainstate.random.randn(n_in, n_rec))
            self.w_b = brainstate.ParamState(0.1 * brainstate.random.randn(n_in, n_rec))
        self.h = brainstate.HiddenState(jnp.zeros((1, n_rec)))

    def update(self, x):
        x_row = x.reshape(1, -1)
        drive = jax.lax.cond(jnp.sum(x) > 0.,
                             lambda: braintrace.matmul(x_row, self.w_a.value),
                             lambda: braintrace.matmul(x_row, self.w_b.value))
        self.h.value = self.leak * self.h.value + jnp.tanh(drive)
        return self.h.value


class RolledTailRNN(brainstate.nn.Module):
    def __init__(self, n_in=3, n_rec=5, roll=1, seed=0):
        super().__init__()
        self.roll = roll
        with brainstate.random.seed_context(seed):
            self.w = brainstate.ParamState(0.6 * brainstate.random.randn(n_rec, n_rec))
            self.win = brainstate.ParamState(0.5 * brainstate.random.randn(n_in, n_rec))
        self.h = brainstate.HiddenState(jnp.zeros((n_rec,)))

    def update(self, x):
        rec = braintrace.matmul(self.h.value, self.w.value)
        if self.roll:
            rec = jnp.roll(rec, self.roll)
        self.h.value = jax.nn.tanh(x @ self.win.value + rec)
        return self.h.value


@etrace_lint.target(name="oracle-tanh-rnn-plain-input", verify={"algorithms": ["d_rtrl"]})
def oracle_tanh_rnn():
    return TanhRNN(), (jnp.ones((3,)),)


@etrace_lint.target(name="oracle-two-state-rnn-pp-prop",
                    verify={"algorithms": ["pp_prop"], "algorithm_options": {"pp_prop": {"decay_or_rank": 0.9}}})
def oracle_two_state_rnn():
    return TwoStateRNN(), (jnp.ones((3,)),)


@etrace_lint.target(name="oracle-tied-weight-rnn", verify={"algorithms": ["d_rtrl"]})
def oracle_tied_weight_rnn():
    return TiedWeightRNN(), (jnp.ones((4,)),)


@etrace_lint.target(name="oracle-cond-gate-rnn-es-d-rtrl",
                    verify={"algorithms": ["es_d_rtrl"], "algorithm_options": {"es_d_rtrl": {"decay_or_rank": 0.9}}})
def oracle_cond_gate_rnn():
    return CondGateRNN(), (jnp.ones((3,)),)


@etrace_lint.target(name="oracle-rolled-tail-rnn", verify={"algorithms": ["d_rtrl"]})
def oracle_rolled_tail_rnn():
    return RolledTailRNN(), (jnp.ones((3,)),)
