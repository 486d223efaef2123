"""The gated cells of braintrace's RNN tutorial: a minimal gated unit and a minimal RNN.

Upstream: chaobrain/braintrace docs/tutorials/rnn_online_learning.ipynb (MGUCell,
MinimalRNNCell, each followed by a braintrace.nn.Linear), small sizes.
"""

import brainstate
import braintrace
import jax.numpy as jnp

import etrace_lint


class CellClassifier(brainstate.nn.Module):
    def __init__(self, cell, n_rec, n_out):
        super().__init__()
        self.rnn = cell
        self.out = braintrace.nn.Linear(n_rec, n_out)

    def update(self, x):
        return self.out(self.rnn(x))


@etrace_lint.target(name="mgu-classifier", verify={"algorithms": ["d_rtrl"]})
def mgu_classifier():
    model = CellClassifier(braintrace.nn.MGUCell(6, 10), 10, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)


@etrace_lint.target(name="minimal-rnn-classifier", verify={"algorithms": ["d_rtrl"]})
def minimal_rnn_classifier():
    model = CellClassifier(braintrace.nn.MinimalRNNCell(6, 10), 10, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)
