"""An LSTM sequence classifier: braintrace's LSTMCell and a linear readout.

Upstream: chaobrain/braintrace docs/tutorials/rnn_online_learning.ipynb (the
recurrent-cell comparison trains LSTMCell with D-RTRL), small sizes. Its cell
state c is computed in the step and read by h in the same step.
"""

import brainstate
import braintrace
import jax.numpy as jnp

import etrace_lint


class LSTMClassifier(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.rnn = braintrace.nn.LSTMCell(n_in, n_rec)
        self.out = braintrace.nn.Linear(n_rec, n_out)

    def update(self, x):
        return self.out(self.rnn(x))


@etrace_lint.target(name="lstm-classifier", verify={"algorithms": ["d_rtrl"]})
def lstm_classifier():
    model = LSTMClassifier(6, 10, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)
