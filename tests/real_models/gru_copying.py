"""A GRU on the copying task with a linear readout.

Upstream: chaobrain/braintrace examples/100-gru-on-copying-task.py (a
braintrace.nn.GRUCell followed by a braintrace.nn.Linear), small sizes.
"""

import brainstate
import braintrace
import jax.numpy as jnp

import etrace_lint


class CopyingGRU(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.rnn = braintrace.nn.GRUCell(n_in, n_rec)
        self.out = braintrace.nn.Linear(n_rec, n_out)

    def update(self, x):
        return self.out(self.rnn(x))


@etrace_lint.target(name="gru-copying", verify={"algorithms": ["d_rtrl"]})
def gru_copying():
    model = CopyingGRU(6, 10, 6)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)
