"""The integrator task's vanilla RNN.

Upstream: chaobrain/braintrace examples/101-integrator-rnn.py and
examples/drtrl/01-basics-integrator.py (a braintrace.nn.ValinaRNNCell with a
tanh activation and a linear readout), small sizes.
"""

import brainstate
import braintrace
import jax.numpy as jnp

import etrace_lint


class IntegratorRNN(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.cell = braintrace.nn.ValinaRNNCell(n_in, n_rec, activation="tanh")
        self.out = braintrace.nn.Linear(n_rec, n_out)

    def update(self, x):
        return x >> self.cell >> self.out


@etrace_lint.target(name="integrator-rnn", verify={"algorithms": ["d_rtrl"]})
def integrator_rnn():
    model = IntegratorRNN(1, 12, 1)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((1,)),)


@etrace_lint.target(name="integrator-rnn-pp-prop", verify={"algorithms": ["pp_prop"],
                                                          "algorithm_options": {"pp_prop": {"decay_or_rank": 0.99}}})
def integrator_rnn_pp_prop():
    model = IntegratorRNN(1, 12, 1)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((1,)),)
