"""Two stacked recurrent layers with a readout, and an LSTM trained with pp_prop.

Upstream: chaobrain/braintrace docs/tutorials/two_layer_rnn.ipynb (two
braintrace.nn.GRUCell layers, the second fed by the first, then a
braintrace.nn.Linear) and examples/drtrl/10-char-lm-generation.py (an LSTM
language model; here its recurrent core with an embedding-free input).
"""

import brainstate
import braintrace
import jax.numpy as jnp

import etrace_lint


class TwoLayerGRU(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.layer1 = braintrace.nn.GRUCell(n_in, n_rec)
        self.layer2 = braintrace.nn.GRUCell(n_rec, n_rec)
        self.out = braintrace.nn.Linear(n_rec, n_out)

    def update(self, x):
        return self.out(self.layer2(self.layer1(x)))


class CharLSTM(brainstate.nn.Module):
    def __init__(self, n_vocab, n_rec):
        super().__init__()
        self.rnn = braintrace.nn.LSTMCell(n_vocab, n_rec)
        self.head = braintrace.nn.Linear(n_rec, n_vocab)

    def update(self, x):
        return self.head(self.rnn(x))


@etrace_lint.target(name="two-layer-gru", verify={"algorithms": ["d_rtrl"]})
def two_layer_gru():
    model = TwoLayerGRU(5, 8, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((5,)),)


@etrace_lint.target(name="char-lstm-pp-prop", batch_size=2,
                    verify={"algorithms": ["pp_prop"], "algorithm_options": {"pp_prop": {"decay_or_rank": 0.9}}})
def char_lstm_pp_prop():
    model = CharLSTM(8, 10)
    brainstate.nn.init_all_states(model, batch_size=2)
    return model, (jnp.ones((2, 8)),)
