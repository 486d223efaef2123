"""brainstate's example of braintrace on rate RNNs: a stack of recurrent cells with a step index.

Upstream: chaobrain/brainstate examples/301_braintrace_for_rnns.py (RateRnnNet:
n_layer cells of braintrace.nn's LSTMCell / URLSTMCell / ValinaRNNCell /
GRUCell in a brainstate.nn.Sequential, a braintrace.nn.Linear readout, and an
update(i, x) that runs the step inside brainstate.environ.context(i=i)), with
two layers and small sizes; the copying task's one-hot inputs become noise.
"""

import brainstate
import braintrace
import jax.numpy as jnp

import etrace_lint


class RateRnnNet(brainstate.nn.Module):
    def __init__(self, cell, n_in, n_rec, n_out, n_layer=2):
        super().__init__()
        layers = []
        for _ in range(n_layer):
            layers.append(cell(n_in, n_rec))
            n_in = n_rec
        self.layer = brainstate.nn.Sequential(*layers)
        self.readout = braintrace.nn.Linear(n_rec, n_out)

    def update(self, i, x):
        with brainstate.environ.context(i=i):
            return self.readout(self.layer(x))


@etrace_lint.target(name="brainstate-urlstm-stack", verify={"algorithms": ["d_rtrl"]})
def urlstm_stack():
    model = RateRnnNet(braintrace.nn.URLSTMCell, 10, 12, 10)
    brainstate.nn.init_all_states(model)
    return model, (0, jnp.ones((10,)))


@etrace_lint.target(name="brainstate-rnn-stack", verify={"algorithms": ["d_rtrl"]})
def rnn_stack():
    model = RateRnnNet(braintrace.nn.ValinaRNNCell, 10, 12, 10)
    brainstate.nn.init_all_states(model)
    return model, (0, jnp.ones((10,)))
