"""An LSTM with a stateless linear readout.

The readout weight reaches no hidden state, so no eligibility trace is kept
for it. On braintrace 0.2.8 it learns from the current step's error, exactly
(ETL003, a note); that is often what you want. On braintrace 0.2.6 the
single-step algorithms add no same-step gradient, so it does not learn online
at all (ETL209). ``braintrace.nn.LeakyRateReadout`` gives the readout a state of
its own (and an eligibility trace) when it should integrate over time.
"""

import brainstate
import braintrace
import jax.numpy as jnp


class LSTMClassifier(brainstate.nn.Module):
    def __init__(self, n_in=16, n=32, n_out=10):
        super().__init__()
        self.cell = braintrace.nn.LSTMCell(n_in, n)
        self.readout = brainstate.ParamState(brainstate.random.randn(n, n_out) * 0.1)

    def update(self, x):
        return braintrace.matmul(self.cell(x), self.readout.value)


def etrace_target_lstm_classifier():
    return LSTMClassifier(), (jnp.ones((16,)),)
