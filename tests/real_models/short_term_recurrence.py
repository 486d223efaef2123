"""A rate RNN that keeps its recurrent activity in a ShortTermState, and an MLP with no state at all.

Upstream: chaobrain/brainstate examples (rate-RNN and MLP tutorials that store a
layer's activity as brainstate.ShortTermState, the state type brainstate
uses for values read back within or across steps) with braintrace.nn.Linear
layers in place of brainstate's. braintrace follows only HiddenState.
"""

import brainstate
import braintrace
import jax
import jax.numpy as jnp

import etrace_lint


class ShortTermRNN(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.n_rec = n_rec
        self.w_ih = braintrace.nn.Linear(n_in, n_rec)
        self.w_hh = braintrace.nn.Linear(n_rec, n_rec, b_init=None)
        self.out = braintrace.nn.Linear(n_rec, n_out)

    def init_state(self, batch_size=None, **kwargs):
        self.r = brainstate.ShortTermState(jnp.zeros((self.n_rec,) if batch_size is None else (batch_size, self.n_rec)))

    def update(self, x):
        self.r.value = jax.nn.tanh(self.w_ih(x) + self.w_hh(self.r.value))
        return self.out(self.r.value)


class MLP(brainstate.nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.fc1 = braintrace.nn.Linear(n_in, n_hidden)
        self.fc2 = braintrace.nn.Linear(n_hidden, n_out)

    def update(self, x):
        return self.fc2(jax.nn.relu(self.fc1(x)))


@etrace_lint.target(name="short-term-state-rnn", verify={"algorithms": ["d_rtrl"]})
def short_term_state_rnn():
    model = ShortTermRNN(4, 10, 2)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((4,)),)


@etrace_lint.target(name="stateless-mlp", verify={"algorithms": ["d_rtrl"]})
def stateless_mlp():
    model = MLP(4, 10, 2)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((4,)),)
