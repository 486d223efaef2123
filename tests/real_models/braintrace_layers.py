"""braintrace's own layers that the rest of the corpus does not use, each as its docs and examples
wire it.

Upstream: chaobrain/braintrace examples/drtrl/10-char-lm-generation.py (a MiniGRU
character model with a braintrace.nn.Linear readout, one-hot inputs), the
braintrace.nn reference (MiniLSTM, CFNCell, Embedding, ScaledWSLinear,
DualExpon, RMSNorm), small sizes.
"""

import brainstate
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class CharModel(brainstate.nn.Module):
    def __init__(self, cell, n_hidden, vocab):
        super().__init__()
        self.cell = cell
        self.readout = braintrace.nn.Linear(n_hidden, vocab)

    def update(self, x):
        return self.readout(self.cell(x))


@etrace_lint.target(name="char-lm-minigru", verify={"algorithms": ["d_rtrl"]})
def char_lm_minigru():
    model = CharModel(braintrace.nn.MiniGRU(8, 12), 12, 8)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)


@etrace_lint.target(name="minilstm-classifier", verify={"algorithms": ["d_rtrl"]})
def minilstm_classifier():
    model = CharModel(braintrace.nn.MiniLSTM(6, 10), 10, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)


@etrace_lint.target(name="cfn-classifier", verify={"algorithms": ["d_rtrl"]})
def cfn_classifier():
    model = CharModel(braintrace.nn.CFNCell(6, 10), 10, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)


class EmbeddedGRU(brainstate.nn.Module):
    def __init__(self, vocab, n_embed, n_hidden):
        super().__init__()
        self.embed = braintrace.nn.Embedding(vocab, n_embed)
        self.cell = braintrace.nn.GRUCell(n_embed, n_hidden)
        self.readout = braintrace.nn.Linear(n_hidden, vocab)

    def update(self, token):
        return self.readout(self.cell(self.embed(token)))


@etrace_lint.target(name="embedded-gru", verify={"algorithms": ["d_rtrl"]})
def embedded_gru():
    model = EmbeddedGRU(10, 6, 8)
    brainstate.nn.init_all_states(model)
    return model, (jnp.asarray(7, dtype=jnp.int32),)


class WSRateRNN(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.rnn = braintrace.nn.ValinaRNNCell(n_in, n_rec)
        self.readout = braintrace.nn.ScaledWSLinear(n_rec, n_out)

    def update(self, x):
        return self.readout(self.rnn(x))


@etrace_lint.target(name="ws-readout-rnn", verify={"algorithms": ["d_rtrl"]})
def ws_readout_rnn():
    model = WSRateRNN(5, 9, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((5,)),)


class DualExponLIF(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.inp = braintrace.nn.Linear(n_in, n_rec, w_init=brainstate.init.KaimingNormal(scale=40.0, unit=u.mS),
                                       b_init=brainstate.init.ZeroInit(unit=u.mS))
        self.syn = braintrace.nn.DualExpon(n_rec)
        self.neu = braintrace.nn.LIF(n_rec)
        self.out = braintrace.nn.LeakyRateReadout(n_rec, n_out)

    def update(self, x):
        return self.out(self.neu(self.syn(self.inp(x)) * u.volt))


@etrace_lint.target(name="dual-expon-lif", environ={"dt": 0.1 * u.ms}, verify={"algorithms": ["d_rtrl"]})
def dual_expon_lif():
    model = DualExponLIF(4, 8, 2)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((4,)),)


class RMSNormedRNN(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.rnn = braintrace.nn.GRUCell(n_in, n_rec)
        self.norm = braintrace.nn.RMSNorm(n_rec)
        self.readout = braintrace.nn.Linear(n_rec, n_out)

    def update(self, x):
        return self.readout(self.norm(self.rnn(x)))


@etrace_lint.target(name="rmsnorm-readout-gru", verify={"algorithms": ["d_rtrl"]})
def rmsnorm_readout_gru():
    model = RMSNormedRNN(5, 8, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((5,)),)
