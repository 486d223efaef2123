"""Rate RNNs written by hand with braintrace's ETP functions, as brainstate's examples write their cells.

Upstream: chaobrain/brainstate examples (a leaky rate RNN whose update is
`h = (1 - a) h + a tanh(W_in x + W_rec h)` on brainstate.HiddenState, weights in
brainstate.ParamState) with braintrace.matmul in place of `@`, as
chaobrain/braintrace docs/tutorials/etp_primitives.ipynb shows; and the same
cell written with an element-wise (diagonal) recurrent weight,
braintrace.element_wise.
"""

import brainstate
import braintools
import braintrace
import jax
import jax.numpy as jnp

import etrace_lint


class LeakyRateRNN(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out, alpha=0.2, diagonal=False):
        super().__init__()
        self.n_rec = n_rec
        self.alpha = alpha
        self.diagonal = diagonal
        self.w_in = brainstate.ParamState(braintools.init.KaimingNormal()((n_in, n_rec)))
        if diagonal:
            self.w_rec = brainstate.ParamState(jnp.full((n_rec,), 0.9))
        else:
            self.w_rec = brainstate.ParamState(braintools.init.Orthogonal()((n_rec, n_rec)))
        self.readout = braintrace.nn.Linear(n_rec, n_out)

    def init_state(self, batch_size=None, **kwargs):
        self.h = brainstate.HiddenState(braintools.init.param(jnp.zeros, self.n_rec, batch_size))

    def update(self, x):
        if self.diagonal:
            recurrent = braintrace.element_wise(self.w_rec.value) * self.h.value
        else:
            recurrent = braintrace.matmul(self.h.value, self.w_rec.value)
        drive = braintrace.matmul(x, self.w_in.value) + recurrent
        self.h.value = (1 - self.alpha) * self.h.value + self.alpha * jax.nn.tanh(drive)
        return self.readout(self.h.value)


@etrace_lint.target(name="leaky-rate-rnn", verify={"algorithms": ["d_rtrl"]})
def leaky_rate_rnn():
    model = LeakyRateRNN(4, 10, 2)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((4,)),)


@etrace_lint.target(name="leaky-rate-rnn-diagonal", verify={"algorithms": ["d_rtrl"]})
def leaky_rate_rnn_diagonal():
    model = LeakyRateRNN(4, 10, 2, diagonal=True)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((4,)),)
