"""A corpus of real models, built only from installed libraries, that etrace-lint is checked on.

``write_corpus(root)`` writes a tree of model files (about one to three lint
targets each) as people in this field write them:

- ``rnn/``: braintrace's own recurrent cells, each with a
  ``braintrace.nn.Linear`` readout, unbatched and batched;
- ``snn/``: recurrent spiking networks built from the spiking layers that
  braintrace's examples use (``braintrace.nn.LIF``/``ALIF``/``IF``,
  ``Expon``/``Alpha``/``DualExpon``, ``LeakyRateReadout``), with a helper
  module ``snn/_shared.py``;
- ``brainpy_nets/``: brainpy.state networks (LIF, ALIF, Izhikevich, ExpIF,
  AdExIF, Gif, HH, ...; Expon, Alpha, AMPA, GABAa synapses; AlignPostProj,
  DeltaProj and CurrentProj projections whose ``comm`` is a braintrace ETP
  layer; E/I networks with a readout), with another ``_shared.py`` of
  different content;
- ``problems/``: models with real problems (a plain ``x @ W`` recurrent
  weight, ``brainstate.nn.Linear`` where ``braintrace.nn.Linear`` is needed,
  a GRU whose reset-gate weight is excluded, brainpy.state's plain-matmul
  readout).

A ``pyproject.toml`` at the root sets ``dt`` through
``[tool.etrace-lint.environ]``; some targets set their own values with
``@etrace_lint.target(environ=...)``. A model whose class the installed
library lacks is not written, and no brainpy model is written when brainpy
is not importable. :data:`MODELS` says which files hold a real problem
(``problem=True``): every other model should lint without a warning.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import re
import textwrap
from dataclasses import dataclass

PYPROJECT = """\
[tool.etrace-lint]
timeout = 300

[tool.etrace-lint.environ]
dt = "0.1 ms"
"""


@dataclass(frozen=True)
class ModelFile:
    path: str                      # relative to the corpus root, with "/"
    source: str
    library: str                   # "braintrace" or "brainpy": what the models are built from
    needs: tuple[str, ...] = ()    # "module:Name" the installed libraries must have
    problem: str = ""              # the real problem it holds, if any (its targets should get findings)

    @property
    def targets(self) -> list[str]:
        """The names of the lint targets the file declares (every corpus target is named)."""
        return re.findall(r'@etrace_lint\.target\(name="([^"]+)"', self.source)


def _source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# --- braintrace.nn recurrent cells, each with a braintrace.nn.Linear readout ------------------

_CELL_HEADER = '''
"""{doc}"""

import brainstate
import braintrace
import jax.numpy as jnp

import etrace_lint


class {model}(brainstate.nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.rnn = {cell}
        self.readout = braintrace.nn.Linear(n_hidden, n_out)

    def update(self, x):
        return self.readout(self.rnn(x))
'''

_CELL_TARGET = '''

@etrace_lint.target(name="{name}"{options})
def {factory}():
    model = {model}({n_in}, {n_hidden}, {n_out})
    brainstate.nn.init_all_states(model{batch_arg})
    return model, (jnp.ones({shape}),)
'''


def _cell_file(path: str, doc: str, model: str, cell: str, needs: str,
               targets: list[dict], problem: str = "") -> ModelFile:
    text = _CELL_HEADER.format(doc=doc, model=model, cell=cell)
    for spec in targets:
        batch = spec.get("batch")
        text += _CELL_TARGET.format(
            name=spec["name"], factory=spec["name"].replace("-", "_"), model=model,
            options=f", batch_size={batch}" if batch else "",
            n_in=spec.get("n_in", 12), n_hidden=spec.get("n_hidden", 32), n_out=spec.get("n_out", 5),
            batch_arg=f", batch_size={batch}" if batch else "",
            shape=f"({batch}, {spec.get('n_in', 12)})" if batch else f"({spec.get('n_in', 12)},)")
    return ModelFile(path, _source(text), "braintrace", (needs,), problem)


RNN_MODELS = [
    _cell_file("rnn/lstm_classifier.py", "An LSTM sequence classifier: braintrace's LSTMCell and a linear readout.",
               "LSTMClassifier", "braintrace.nn.LSTMCell(n_in, n_hidden)", "braintrace.nn:LSTMCell",
               [{"name": "lstm-classifier"}, {"name": "lstm-classifier-batched", "batch": 8}]),
    _cell_file("rnn/mgu.py", "A minimal gated unit (MGU) with a linear readout.",
               "MGUClassifier", "braintrace.nn.MGUCell(n_in, n_hidden)", "braintrace.nn:MGUCell",
               [{"name": "mgu-classifier"}],
               problem="the forget-gate weight also reaches h through the candidate's weight"),
    _cell_file("rnn/minimal_rnn.py", "Chen's minimal RNN cell with a linear readout.",
               "MinimalRNNClassifier", "braintrace.nn.MinimalRNNCell(n_in, n_hidden)",
               "braintrace.nn:MinimalRNNCell",
               [{"name": "minimal-rnn"}, {"name": "minimal-rnn-batched", "batch": 4}],
               problem="phi's weight also reaches h through the gate's weight"),
    _cell_file("rnn/vanilla_rnn.py", "An Elman RNN (braintrace's ValinaRNNCell, ReLU) with a linear readout.",
               "ElmanClassifier", "braintrace.nn.ValinaRNNCell(n_in, n_hidden, activation='tanh')",
               "braintrace.nn:ValinaRNNCell",
               [{"name": "elman-tanh"}, {"name": "elman-tanh-wide", "n_in": 40, "n_hidden": 128, "n_out": 10}]),
    _cell_file("rnn/mini_gru.py", "MiniGRU (parallel-scan friendly GRU) with a linear readout.",
               "MiniGRUClassifier", "braintrace.nn.MiniGRU(n_in, n_hidden)", "braintrace.nn:MiniGRU",
               [{"name": "mini-gru"}]),
    _cell_file("rnn/mini_lstm.py", "MiniLSTM with a linear readout.",
               "MiniLSTMClassifier", "braintrace.nn.MiniLSTM(n_in, n_hidden)", "braintrace.nn:MiniLSTM",
               [{"name": "mini-lstm"}, {"name": "mini-lstm-batched", "batch": 4}]),
    _cell_file("rnn/urlstm.py", "An LSTM with uniform gate initialisation and a refine gate (URLSTM).",
               "URLSTMClassifier", "braintrace.nn.URLSTMCell(n_in, n_hidden)", "braintrace.nn:URLSTMCell",
               [{"name": "urlstm"}]),
    _cell_file("rnn/cfn.py", "A chaos-free network (CFN) cell with a linear readout.",
               "CFNClassifier", "braintrace.nn.CFNCell(n_in, n_hidden)", "braintrace.nn:CFNCell",
               [{"name": "cfn"}]),
    _cell_file("rnn/lru.py", "A linear recurrent unit (LRU) whose output is read out linearly.",
               "LRUClassifier", "braintrace.nn.LRUCell(n_in, n_hidden)  # its output has n_in features",
               "braintrace.nn:LRUCell",
               [{"name": "lru", "n_in": 32, "n_hidden": 32}]),
]

RNN_MODELS += [
    ModelFile("rnn/stacked_lstm.py", _source('''
        """Two stacked LSTM layers with a linear readout, unbatched and batched."""

        import brainstate
        import braintrace
        import jax.numpy as jnp

        import etrace_lint


        class StackedLSTM(brainstate.nn.Module):
            def __init__(self, n_in, n_hidden, n_out):
                super().__init__()
                self.layer1 = braintrace.nn.LSTMCell(n_in, n_hidden)
                self.layer2 = braintrace.nn.LSTMCell(n_hidden, n_hidden)
                self.readout = braintrace.nn.Linear(n_hidden, n_out)

            def update(self, x):
                return self.readout(self.layer2(self.layer1(x)))


        @etrace_lint.target(name="stacked-lstm")
        def stacked_lstm():
            return StackedLSTM(10, 24, 3), (jnp.ones((10,)),)


        @etrace_lint.target(name="stacked-lstm-batched", batch_size=2)
        def stacked_lstm_batched():
            model = StackedLSTM(10, 24, 3)
            brainstate.nn.init_all_states(model, batch_size=2)
            return model, (jnp.ones((2, 10)),)
        '''), "braintrace", ("braintrace.nn:LSTMCell",)),
    ModelFile("rnn/leaky_rate_rnn.py", _source('''
        """A leaky rate RNN written by hand with braintrace ETP ops.

        h <- (1 - a) h + a tanh(W_in x + W_rec h + b): every weight goes through
        ``braintrace.matmul``, so all of them learn online.
        """

        import brainstate
        import braintools
        import braintrace
        import jax.numpy as jnp

        import etrace_lint


        class LeakyRateRNN(brainstate.nn.Module):
            def __init__(self, n_in, n_rec, n_out, tau=10.0):
                super().__init__()
                self.alpha = 1.0 / tau
                self.n_rec = n_rec
                self.w_in = brainstate.ParamState(braintools.init.XavierNormal()((n_in, n_rec)))
                self.w_rec = brainstate.ParamState(braintools.init.Orthogonal()((n_rec, n_rec)))
                self.bias = brainstate.ParamState(jnp.zeros((n_rec,)))
                self.readout = braintrace.nn.Linear(n_rec, n_out)

            def init_state(self, batch_size=None, **kwargs):
                shape = (self.n_rec,) if batch_size is None else (batch_size, self.n_rec)
                self.h = brainstate.HiddenState(jnp.zeros(shape))

            def update(self, x):
                drive = braintrace.matmul(x, self.w_in.value, self.bias.value)
                drive = drive + braintrace.matmul(self.h.value, self.w_rec.value)
                self.h.value = (1 - self.alpha) * self.h.value + self.alpha * jnp.tanh(drive)
                return self.readout(self.h.value)


        @etrace_lint.target(name="leaky-rate-rnn")
        def leaky_rate_rnn():
            return LeakyRateRNN(8, 64, 2), (jnp.ones((8,)),)
        '''), "braintrace", ()),
    ModelFile("rnn/token_lstm.py", _source('''
        """A character-level LSTM: embedding, LSTM, linear decoder to the vocabulary."""

        import brainstate
        import braintrace
        import jax.numpy as jnp

        import etrace_lint

        VOCAB = 48


        class CharLSTM(brainstate.nn.Module):
            def __init__(self, vocab=VOCAB, n_embed=16, n_hidden=64):
                super().__init__()
                self.embed = braintrace.nn.Embedding(vocab, n_embed)
                self.lstm = braintrace.nn.LSTMCell(n_embed, n_hidden)
                self.decoder = braintrace.nn.Linear(n_hidden, vocab)

            def update(self, token):
                return self.decoder(self.lstm(self.embed(token)))


        @etrace_lint.target(name="char-lstm")
        def char_lstm():
            return CharLSTM(), (jnp.asarray(3, dtype=jnp.int32),)
        '''), "braintrace", ("braintrace.nn:Embedding", "braintrace.nn:LSTMCell"),
        "the embedding reaches the LSTM state only through the LSTM's weights"),
]


# --- recurrent spiking networks from the spiking layers braintrace's examples use --------------

SNN_SHARED = _source('''
    """Settings shared by the spiking networks of this folder."""

    import braintools
    import jax.numpy as jnp
    import saiunit as u

    N_IN = 20
    N_OUT = 4
    TAU_MEM = 20.0 * u.ms
    TAU_OUT = 10.0 * u.ms
    V_TH = 1.0 * u.mV


    def surrogate():
        """The pseudo-derivative of the spike used by every layer."""
        return braintools.surrogate.ReluGrad()


    def current_init(scale=2.0):
        """Weights that turn spikes into a synaptic current (R = 1 ohm: 1 mA gives 1 mV)."""
        return braintools.init.KaimingNormal(scale=scale, unit=u.mA)


    def current_bias():
        return braintools.init.ZeroInit(unit=u.mA)


    def spike_input(batch=None):
        """One step of input spikes, a fixed pattern."""
        spikes = (jnp.arange(N_IN) % 3 == 0).astype(jnp.float32)
        return spikes if batch is None else jnp.tile(spikes, (batch, 1))
    ''')


def _snn(path: str, text: str, needs: tuple[str, ...]) -> ModelFile:
    # braintrace.nn's spiking layers forward to brainpy.state: without brainpy they do not exist
    return ModelFile(path, _source(text), "braintrace", ("brainpy.state:LIF",) + needs)


SNN_MODELS = [
    ModelFile("snn/_shared.py", SNN_SHARED, "braintrace", ("brainpy.state:LIF",)),
    _snn("snn/lif_expon.py", '''
        """A recurrent LIF network: input -> Linear -> Expon synapse -> LIF, recurrent spikes, leaky readout."""

        import brainstate
        import braintools
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class LIFExponNet(brainstate.nn.Module):
            def __init__(self, n_in, n_rec, n_out):
                super().__init__()
                self.linear = braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=_shared.current_init(),
                                                   b_init=_shared.current_bias())
                self.syn = braintrace.nn.Expon(n_rec, tau=5.0 * u.ms,
                                               g_initializer=braintools.init.ZeroInit(unit=u.mA))
                self.neu = braintrace.nn.LIF(n_rec, tau=_shared.TAU_MEM, V_th=_shared.V_TH,
                                             spk_fun=_shared.surrogate())
                self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=_shared.TAU_OUT)

            def update(self, spikes):
                recurrent = self.neu.get_spike()
                current = self.syn(self.linear(u.math.concatenate([spikes, recurrent], axis=-1)))
                return self.readout(self.neu(current))


        @etrace_lint.target(name="lif-expon")
        def lif_expon():
            model = LIFExponNet(_shared.N_IN, 64, _shared.N_OUT)
            brainstate.nn.init_all_states(model)
            return model, (_shared.spike_input(),)


        @etrace_lint.target(name="lif-expon-batched", batch_size=4, environ={"dt": "1 ms"})
        def lif_expon_batched():
            model = LIFExponNet(_shared.N_IN, 64, _shared.N_OUT)
            brainstate.nn.init_all_states(model, batch_size=4)
            return model, (_shared.spike_input(batch=4),)
        ''', ("braintrace.nn:LIF", "braintrace.nn:Expon")),
    _snn("snn/alif_alpha.py", '''
        """Adaptive LIF neurons (ALIF) behind alpha-function synapses, with separate input and recurrent weights."""

        import brainstate
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class ALIFAlphaNet(brainstate.nn.Module):
            def __init__(self, n_in, n_rec, n_out):
                super().__init__()
                self.w_in = braintrace.nn.Linear(n_in, n_rec, w_init=_shared.current_init(),
                                                 b_init=_shared.current_bias())
                self.w_rec = braintrace.nn.Linear(n_rec, n_rec, w_init=_shared.current_init(1.0), b_init=None)
                self.syn = braintrace.nn.Alpha(n_rec, tau=8.0 * u.ms, g_initializer=0.0 * u.mA)
                self.neu = braintrace.nn.ALIF(n_rec, tau=_shared.TAU_MEM, tau_a=200.0 * u.ms,
                                              V_th=_shared.V_TH, beta=0.07 * u.mV, spk_fun=_shared.surrogate())
                self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=_shared.TAU_OUT)

            def update(self, spikes):
                current = self.syn(self.w_in(spikes) + self.w_rec(self.neu.get_spike()))
                return self.readout(self.neu(current))


        @etrace_lint.target(name="alif-alpha")
        def alif_alpha():
            return ALIFAlphaNet(_shared.N_IN, 48, _shared.N_OUT), (_shared.spike_input(),)
        ''', ("braintrace.nn:ALIF", "braintrace.nn:Alpha")),
    _snn("snn/if_dual_expon.py", '''
        """Integrate-and-fire neurons with dual-exponential synapses and a leaky readout."""

        import brainstate
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class IFDualExponNet(brainstate.nn.Module):
            def __init__(self, n_in, n_rec, n_out):
                super().__init__()
                self.linear = braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=_shared.current_init(),
                                                   b_init=_shared.current_bias())
                self.syn = braintrace.nn.DualExpon(n_rec, tau_decay=10.0 * u.ms, tau_rise=2.0 * u.ms,
                                                   g_initializer=0.0 * u.mA)
                self.neu = braintrace.nn.IF(n_rec, tau=_shared.TAU_MEM, V_th=_shared.V_TH, spk_fun=_shared.surrogate())
                self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=_shared.TAU_OUT)

            def update(self, spikes):
                x = u.math.concatenate([spikes, self.neu.get_spike()], axis=-1)
                return self.readout(self.neu(self.syn(self.linear(x))))


        @etrace_lint.target(name="if-dual-expon")
        def if_dual_expon():
            return IFDualExponNet(_shared.N_IN, 40, _shared.N_OUT), (_shared.spike_input(),)
        ''', ("braintrace.nn:IF", "braintrace.nn:DualExpon")),
    _snn("snn/lif_delta.py", '''
        """e-prop style LIF networks: the weighted spikes drive the membrane directly, no synapse state."""

        import brainstate
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class DeltaLIFNet(brainstate.nn.Module):
            def __init__(self, n_in, n_rec, n_out, tau=_shared.TAU_MEM):
                super().__init__()
                self.neu = braintrace.nn.LIF(n_rec, tau=tau, V_th=_shared.V_TH, spk_fun=_shared.surrogate())
                self.linear = braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=_shared.current_init(4.0),
                                                   b_init=_shared.current_bias())
                self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=_shared.TAU_OUT)

            def update(self, spikes):
                x = u.math.concatenate([spikes, self.neu.get_spike()], axis=-1)
                return self.readout(self.neu(self.linear(x)))


        @etrace_lint.target(name="lif-delta")
        def lif_delta():
            return DeltaLIFNet(_shared.N_IN, 100, _shared.N_OUT), (_shared.spike_input(),)


        @etrace_lint.target(name="lif-delta-slow", environ={"dt": "1 ms"})
        def lif_delta_slow():
            return DeltaLIFNet(_shared.N_IN, 100, _shared.N_OUT, tau=100.0 * u.ms), (_shared.spike_input(),)
        ''', ("braintrace.nn:LIF",)),
    _snn("snn/depressing_input.py", '''
        """A recurrent LIF network whose input synapses depress with use (short-term depression)."""

        import brainstate
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class DepressingInputNet(brainstate.nn.Module):
            def __init__(self, n_in, n_rec, n_out):
                super().__init__()
                self.std = braintrace.nn.STD(n_in, tau=200.0 * u.ms, U=0.2)
                self.w_in = braintrace.nn.Linear(n_in, n_rec, w_init=_shared.current_init(4.0),
                                                 b_init=_shared.current_bias())
                self.w_rec = braintrace.nn.Linear(n_rec, n_rec, w_init=_shared.current_init(), b_init=None)
                self.neu = braintrace.nn.LIF(n_rec, tau=_shared.TAU_MEM, V_th=_shared.V_TH, spk_fun=_shared.surrogate())
                self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=_shared.TAU_OUT)

            def update(self, spikes):
                current = self.w_in(self.std(spikes)) + self.w_rec(self.neu.get_spike())
                return self.readout(self.neu(current))


        @etrace_lint.target(name="depressing-input")
        def depressing_input():
            return DepressingInputNet(_shared.N_IN, 64, _shared.N_OUT), (_shared.spike_input(),)
        ''', ("braintrace.nn:LIF", "braintrace.nn:STD")),
    _snn("snn/two_layer.py", '''
        """Two recurrent LIF layers stacked, each behind an exponential synapse, and a leaky readout."""

        import brainstate
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class RecurrentLayer(brainstate.nn.Module):
            def __init__(self, n_in, n_rec):
                super().__init__()
                self.linear = braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=_shared.current_init(),
                                                   b_init=_shared.current_bias())
                self.syn = braintrace.nn.Expon(n_rec, tau=5.0 * u.ms, g_initializer=0.0 * u.mA)
                self.neu = braintrace.nn.LIF(n_rec, tau=_shared.TAU_MEM, V_th=_shared.V_TH,
                                             spk_fun=_shared.surrogate())

            def update(self, spikes):
                x = u.math.concatenate([spikes, self.neu.get_spike()], axis=-1)
                return self.neu(self.syn(self.linear(x)))


        class TwoLayerSNN(brainstate.nn.Module):
            def __init__(self, n_in, n_hidden, n_out):
                super().__init__()
                self.layer1 = RecurrentLayer(n_in, n_hidden)
                self.layer2 = RecurrentLayer(n_hidden, n_hidden)
                self.readout = braintrace.nn.LeakyRateReadout(n_hidden, n_out, tau=_shared.TAU_OUT)

            def update(self, spikes):
                return self.readout(self.layer2(self.layer1(spikes)))


        @etrace_lint.target(name="two-layer-snn")
        def two_layer_snn():
            return TwoLayerSNN(_shared.N_IN, 32, _shared.N_OUT), (_shared.spike_input(),)
        ''', ("braintrace.nn:LIF", "braintrace.nn:Expon")),
]


# --- brainpy.state networks whose projections use braintrace ETP layers --------------------------

BRAINPY_SHARED = _source('''
    """Populations, initialisers and inputs shared by the brainpy.state networks of this folder."""

    import brainpy
    import braintools
    import braintrace
    import jax.numpy as jnp
    import saiunit as u

    N_IN = 16
    N_OUT = 3


    def ei_sizes(n, exc_fraction=0.8):
        n_exc = int(n * exc_fraction)
        return n_exc, n - n_exc


    def lif_population(n, **overrides):
        params = dict(tau=20.0 * u.ms, V_rest=-60.0 * u.mV, V_reset=-60.0 * u.mV, V_th=-50.0 * u.mV,
                      V_initializer=braintools.init.Normal(-55.0 * u.mV, 2.0 * u.mV),
                      spk_fun=braintools.surrogate.Sigmoid())
        params.update(overrides)
        return brainpy.state.LIF(n, **params)


    def conductance_init(scale=1.0):
        return braintools.init.KaimingNormal(scale=scale, unit=u.mS)


    def afferent(n_in, post, n_post, tau=5.0 * u.ms):
        """Input spikes onto ``post`` through current-based exponential synapses."""
        return brainpy.state.AlignPostProj(
            comm=braintrace.nn.Linear(n_in, n_post, w_init=conductance_init(2.0), b_init=None),
            syn=brainpy.state.Expon.desc(n_post, tau=tau),
            out=brainpy.state.CUBA.desc(scale=u.volt),
            post=post,
        )


    def readout(n, n_out=N_OUT):
        return braintrace.nn.LeakyRateReadout(n, n_out, tau=10.0 * u.ms)


    def input_spikes(n=N_IN, batch=None):
        spikes = (jnp.arange(n) % 4 == 1).astype(jnp.float32)
        return spikes if batch is None else jnp.tile(spikes, (batch, 1))
    ''')


def _bp(path: str, text: str, needs: tuple[str, ...] = (), problem: str = "") -> ModelFile:
    return ModelFile(path, _source(text), "brainpy", ("brainpy.state:LIF",) + needs, problem)


BRAINPY_MODELS = [
    ModelFile("brainpy_nets/_shared.py", BRAINPY_SHARED, "brainpy", ("brainpy.state:LIF",)),
    _bp("brainpy_nets/ei_coba.py", '''
        """A conductance-based E/I network of LIF neurons (80% excitatory) with a leaky readout.

        Excitatory and inhibitory spikes reach the whole population through
        exponential synapses aligned on the post-synaptic side; the weights are
        sign-constrained (Dale's law) and go through braintrace's ETP matmul.
        """

        import brainpy
        import brainstate
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class EINet(brainstate.nn.Module):
            def __init__(self, n=100):
                super().__init__()
                self.n_exc, self.n_inh = _shared.ei_sizes(n)
                self.pop = _shared.lif_population(n)
                self.inp = _shared.afferent(_shared.N_IN, self.pop, n)
                self.exc = brainpy.state.AlignPostProj(
                    comm=braintrace.nn.SignedWLinear(self.n_exc, n, w_init=_shared.conductance_init(0.5)),
                    syn=brainpy.state.Expon.desc(n, tau=5.0 * u.ms),
                    out=brainpy.state.COBA.desc(E=0.0 * u.mV),
                    post=self.pop,
                )
                self.inh = brainpy.state.AlignPostProj(
                    comm=braintrace.nn.SignedWLinear(self.n_inh, n, w_init=_shared.conductance_init(2.0)),
                    syn=brainpy.state.Expon.desc(n, tau=10.0 * u.ms),
                    out=brainpy.state.COBA.desc(E=-80.0 * u.mV),
                    post=self.pop,
                )
                self.readout = _shared.readout(n)

            def update(self, spikes):
                last = self.pop.get_spike()
                self.inp(spikes)
                self.exc(last[..., :self.n_exc])
                self.inh(last[..., self.n_exc:])
                return self.readout(self.pop())


        @etrace_lint.target(name="ei-coba")
        def ei_coba():
            return EINet(), (_shared.input_spikes(),)


        @etrace_lint.target(name="ei-coba-batched", batch_size=2)
        def ei_coba_batched():
            model = EINet()
            brainstate.nn.init_all_states(model, batch_size=2)
            return model, (_shared.input_spikes(batch=2),)
        ''', ("brainpy.state:AlignPostProj", "brainpy.state:COBA", "braintrace.nn:SignedWLinear")),
    _bp("brainpy_nets/ei_cuba_alpha.py", '''
        """A current-based E/I network with alpha-function synapses aligned on the pre-synaptic side.

        The alpha synapse filters each population's spikes; a CurrentProj maps the
        filtered trace through a braintrace Linear layer into the LIF population.
        """

        import brainpy
        import brainstate
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class AlphaEINet(brainstate.nn.Module):
            def __init__(self, n=80):
                super().__init__()
                self.n_exc, self.n_inh = _shared.ei_sizes(n)
                self.pop = _shared.lif_population(n, tau=10.0 * u.ms)
                self.inp = _shared.afferent(_shared.N_IN, self.pop, n)
                self.syn_exc = brainpy.state.Alpha(self.n_exc, tau=3.0 * u.ms)
                self.syn_inh = brainpy.state.Alpha(self.n_inh, tau=6.0 * u.ms)
                self.exc = brainpy.state.CurrentProj(comm=braintrace.nn.Linear(self.n_exc, n, b_init=None),
                                                     out=brainpy.state.CUBA(scale=u.volt), post=self.pop)
                self.inh = brainpy.state.CurrentProj(comm=braintrace.nn.Linear(self.n_inh, n, b_init=None),
                                                     out=brainpy.state.CUBA(scale=-1.0 * u.volt), post=self.pop)
                self.readout = _shared.readout(n)

            def update(self, spikes):
                last = self.pop.get_spike()
                self.inp(spikes)
                self.exc(self.syn_exc(last[..., :self.n_exc] * u.mS))
                self.inh(self.syn_inh(last[..., self.n_exc:] * u.mS))
                return self.readout(self.pop())


        @etrace_lint.target(name="ei-cuba-alpha")
        def ei_cuba_alpha():
            return AlphaEINet(), (_shared.input_spikes(),)
        ''', ("brainpy.state:Alpha", "brainpy.state:CurrentProj", "brainpy.state:CUBA")),
    _bp("brainpy_nets/izhikevich_ampa.py", '''
        """Izhikevich neurons coupled by kinetic AMPA (excitatory) and GABAa (inhibitory) receptors.

        The receptors read the time ``t`` from brainstate.environ, so the target
        sets it next to ``dt``.
        """

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class IzhikevichNet(brainstate.nn.Module):
            def __init__(self, neuron=brainpy.state.Izhikevich, n=60):
                super().__init__()
                self.n_exc, self.n_inh = _shared.ei_sizes(n)
                self.pop = neuron(n, spk_fun=braintools.surrogate.Sigmoid())
                self.w_in = braintrace.nn.Linear(_shared.N_IN, n, b_init=None,
                                                 w_init=braintools.init.KaimingNormal(unit=u.mV / u.ms))
                self.ampa = brainpy.state.AMPA(self.n_exc, g_initializer=0.0 / u.ms)
                self.gaba = brainpy.state.GABAa(self.n_inh, g_initializer=0.0 / u.ms)
                self.exc = brainpy.state.CurrentProj(comm=braintrace.nn.Linear(self.n_exc, n, b_init=None),
                                                     out=brainpy.state.COBA(E=0.0 * u.mV), post=self.pop)
                self.inh = brainpy.state.CurrentProj(comm=braintrace.nn.Linear(self.n_inh, n, b_init=None),
                                                     out=brainpy.state.COBA(E=-80.0 * u.mV), post=self.pop)
                self.readout = _shared.readout(n)

            def update(self, spikes):
                last = self.pop.get_spike()
                self.exc(self.ampa(last[..., :self.n_exc]))
                self.inh(self.gaba(last[..., self.n_exc:]))
                return self.readout(self.pop(self.w_in(spikes)))


        @etrace_lint.target(name="izhikevich-ampa", environ={"t": "0 ms"})
        def izhikevich_ampa():
            return IzhikevichNet(), (_shared.input_spikes(),)


        @etrace_lint.target(name="izhikevich-ref-ampa", environ={"t": "0 ms"})
        def izhikevich_ref_ampa():
            return IzhikevichNet(brainpy.state.IzhikevichRef), (_shared.input_spikes(),)
        ''', ("brainpy.state:Izhikevich", "brainpy.state:IzhikevichRef", "brainpy.state:AMPA", "brainpy.state:GABAa",
              "brainpy.state:CurrentProj")),
    _bp("brainpy_nets/exponential_if.py", '''
        """Exponential integrate-and-fire networks, plain (ExpIF) and adaptive (AdExIF), with recurrent synapses."""

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class RecurrentNet(brainstate.nn.Module):
            def __init__(self, neuron, n=50):
                super().__init__()
                self.pop = neuron(n, spk_fun=braintools.surrogate.Sigmoid())
                self.inp = _shared.afferent(_shared.N_IN, self.pop, n)
                self.rec = brainpy.state.AlignPostProj(
                    comm=braintrace.nn.Linear(n, n, w_init=_shared.conductance_init(), b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=8.0 * u.ms),
                    out=brainpy.state.CUBA.desc(scale=u.volt),
                    post=self.pop,
                )
                self.readout = _shared.readout(n)

            def update(self, spikes):
                self.rec(self.pop.get_spike())
                self.inp(spikes)
                return self.readout(self.pop())


        @etrace_lint.target(name="expif-net")
        def expif_net():
            return RecurrentNet(brainpy.state.ExpIF), (_shared.input_spikes(),)


        @etrace_lint.target(name="adexif-net")
        def adexif_net():
            return RecurrentNet(brainpy.state.AdExIF), (_shared.input_spikes(),)
        ''', ("brainpy.state:ExpIF", "brainpy.state:AdExIF", "brainpy.state:AlignPostProj")),
    _bp("brainpy_nets/gif.py", '''
        """Generalized integrate-and-fire neurons (Mihalas-Niebur) with recurrent exponential synapses."""

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class GifNet(brainstate.nn.Module):
            def __init__(self, n=40):
                super().__init__()
                self.pop = brainpy.state.Gif(n, spk_fun=braintools.surrogate.ReluGrad())
                self.inp = _shared.afferent(_shared.N_IN, self.pop, n)
                self.rec = brainpy.state.AlignPostProj(
                    comm=braintrace.nn.Linear(n, n, w_init=_shared.conductance_init(0.5), b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=5.0 * u.ms),
                    out=brainpy.state.CUBA.desc(scale=u.volt),
                    post=self.pop,
                )
                self.readout = _shared.readout(n)

            def update(self, spikes):
                self.rec(self.pop.get_spike())
                self.inp(spikes)
                return self.readout(self.pop())


        @etrace_lint.target(name="gif-net")
        def gif_net():
            return GifNet(), (_shared.input_spikes(),)
        ''', ("brainpy.state:Gif", "brainpy.state:AlignPostProj"),
        problem="Gif's spike reads two hidden states (V and V_th) in one operation"),
    _bp("brainpy_nets/hh_coba.py", '''
        """Hodgkin-Huxley neurons with conductance-based excitatory and inhibitory synapses."""

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class HHNet(brainstate.nn.Module):
            def __init__(self, neuron=brainpy.state.HH, n=40):
                super().__init__()
                self.n_exc, self.n_inh = _shared.ei_sizes(n)
                self.pop = neuron(n, spk_fun=braintools.surrogate.Sigmoid())
                self.inp = brainpy.state.AlignPostProj(
                    comm=braintrace.nn.Linear(_shared.N_IN, n, w_init=_shared.conductance_init(0.1), b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=5.0 * u.ms),
                    out=brainpy.state.COBA.desc(E=0.0 * u.mV),
                    post=self.pop,
                )
                self.exc = brainpy.state.AlignPostProj(
                    comm=braintrace.nn.Linear(self.n_exc, n, w_init=_shared.conductance_init(0.05), b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=5.0 * u.ms),
                    out=brainpy.state.COBA.desc(E=0.0 * u.mV),
                    post=self.pop,
                )
                self.inh = brainpy.state.AlignPostProj(
                    comm=braintrace.nn.Linear(self.n_inh, n, w_init=_shared.conductance_init(0.2), b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=10.0 * u.ms),
                    out=brainpy.state.COBA.desc(E=-80.0 * u.mV),
                    post=self.pop,
                )
                self.readout = _shared.readout(n)

            def update(self, spikes):
                last = self.pop.get_spike()
                self.inp(spikes)
                self.exc(last[..., :self.n_exc])
                self.inh(last[..., self.n_exc:])
                return self.readout(self.pop())


        @etrace_lint.target(name="hh-coba", environ={"dt": "0.01 ms"})
        def hh_coba():
            return HHNet(), (_shared.input_spikes(),)


        @etrace_lint.target(name="wang-buzsaki-coba", environ={"dt": "0.01 ms"})
        def wang_buzsaki_coba():
            return HHNet(brainpy.state.WangBuzsakiHH), (_shared.input_spikes(),)
        ''', ("brainpy.state:HH", "brainpy.state:WangBuzsakiHH", "brainpy.state:AlignPostProj", "brainpy.state:COBA")),
    _bp("brainpy_nets/delta_coupled.py", '''
        """LIF populations whose recurrent spikes jump the membrane directly (DeltaProj), plain and refractory."""

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class DeltaNet(brainstate.nn.Module):
            def __init__(self, neuron, n=64):
                super().__init__()
                self.pop = neuron(n, tau=10.0 * u.ms, V_th=1.0 * u.mV, spk_fun=braintools.surrogate.ReluGrad())
                weights = braintools.init.KaimingNormal(unit=u.mV)
                self.inp = brainpy.state.DeltaProj(comm=braintrace.nn.Linear(_shared.N_IN, n, w_init=weights,
                                                                             b_init=None),
                                                   post=self.pop)
                self.rec = brainpy.state.DeltaProj(comm=braintrace.nn.Linear(n, n, w_init=weights, b_init=None),
                                                   post=self.pop)
                self.readout = _shared.readout(n)

            def update(self, spikes):
                self.rec(self.pop.get_spike())
                self.inp(spikes)
                return self.readout(self.pop())


        @etrace_lint.target(name="delta-lif")
        def delta_lif():
            return DeltaNet(brainpy.state.LIF), (_shared.input_spikes(),)


        @etrace_lint.target(name="delta-lif-ref", environ={"t": "0 ms"})
        def delta_lif_ref():
            return DeltaNet(brainpy.state.LIFRef), (_shared.input_spikes(),)
        ''', ("brainpy.state:DeltaProj", "brainpy.state:LIFRef")),
    _bp("brainpy_nets/alif_readout.py", '''
        """A recurrent ALIF network in brainpy.state with a current-based input and a leaky readout."""

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class ALIFNet(brainstate.nn.Module):
            def __init__(self, n=64):
                super().__init__()
                self.pop = brainpy.state.ALIF(n, tau=20.0 * u.ms, tau_a=300.0 * u.ms, V_th=1.0 * u.mV,
                                              spk_fun=braintools.surrogate.ReluGrad())
                self.rec = brainpy.state.CurrentProj(
                    comm=braintrace.nn.Linear(_shared.N_IN + n, n, w_init=braintools.init.KaimingNormal(unit=u.mA),
                                              b_init=braintools.init.ZeroInit(unit=u.mA)),
                    out=brainpy.state.CUBA(scale=1.0),
                    post=self.pop,
                )
                self.readout = _shared.readout(n)

            def update(self, spikes):
                self.rec(u.math.concatenate([spikes, self.pop.get_spike()], axis=-1))
                return self.readout(self.pop())


        @etrace_lint.target(name="alif-net")
        def alif_net():
            return ALIFNet(), (_shared.input_spikes(),)
        ''', ("brainpy.state:ALIF", "brainpy.state:CurrentProj", "brainpy.state:CUBA")),
    _bp("brainpy_nets/quadratic_if.py", '''
        """Quadratic integrate-and-fire networks, plain (QuaIF) and adaptive (AdQuaIF)."""

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class QuadraticNet(brainstate.nn.Module):
            def __init__(self, neuron, n=48):
                super().__init__()
                self.pop = neuron(n, spk_fun=braintools.surrogate.Sigmoid())
                self.rec = brainpy.state.AlignPostProj(
                    comm=braintrace.nn.Linear(_shared.N_IN + n, n, w_init=_shared.conductance_init(), b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=6.0 * u.ms),
                    out=brainpy.state.CUBA.desc(scale=u.volt),
                    post=self.pop,
                )
                self.readout = _shared.readout(n)

            def update(self, spikes):
                self.rec(u.math.concatenate([spikes, self.pop.get_spike()], axis=-1))
                return self.readout(self.pop())


        @etrace_lint.target(name="quaif-net")
        def quaif_net():
            return QuadraticNet(brainpy.state.QuaIF), (_shared.input_spikes(),)


        @etrace_lint.target(name="adquaif-net")
        def adquaif_net():
            return QuadraticNet(brainpy.state.AdQuaIF), (_shared.input_spikes(),)
        ''', ("brainpy.state:QuaIF", "brainpy.state:AdQuaIF", "brainpy.state:AlignPostProj")),
    _bp("brainpy_nets/refractory.py", '''
        """Exponential integrate-and-fire neurons with a refractory period (they read ``t`` from environ)."""

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import saiunit as u

        import _shared
        import etrace_lint


        class RefractoryNet(brainstate.nn.Module):
            def __init__(self, neuron, n=40):
                super().__init__()
                self.pop = neuron(n, tau_ref=2.0 * u.ms, spk_fun=braintools.surrogate.Sigmoid())
                self.inp = _shared.afferent(_shared.N_IN, self.pop, n)
                self.rec = brainpy.state.AlignPostProj(
                    comm=braintrace.nn.Linear(n, n, w_init=_shared.conductance_init(), b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=5.0 * u.ms),
                    out=brainpy.state.CUBA.desc(scale=u.volt),
                    post=self.pop,
                )
                self.readout = _shared.readout(n)

            def update(self, spikes):
                self.rec(self.pop.get_spike())
                self.inp(spikes)
                return self.readout(self.pop())


        @etrace_lint.target(name="expif-ref", environ={"t": "0 ms"})
        def expif_ref():
            return RefractoryNet(brainpy.state.ExpIFRef), (_shared.input_spikes(),)


        @etrace_lint.target(name="adexif-ref", environ={"t": "0 ms"})
        def adexif_ref():
            return RefractoryNet(brainpy.state.AdExIFRef), (_shared.input_spikes(),)
        ''', ("brainpy.state:ExpIFRef", "brainpy.state:AdExIFRef", "brainpy.state:AlignPostProj")),
]


# --- models with real problems ------------------------------------------------------------------

PROBLEM_MODELS = [
    ModelFile("problems/plain_matmul_rnn.py", _source('''
        """A rate RNN whose recurrent weight is applied with a plain ``@``: it never learns online."""

        import brainstate
        import braintools
        import braintrace
        import jax.numpy as jnp

        import etrace_lint


        class PlainRecurrenceRNN(brainstate.nn.Module):
            def __init__(self, n_in=10, n_rec=32, n_out=4):
                super().__init__()
                self.w_in = braintrace.nn.Linear(n_in, n_rec)
                self.w_rec = brainstate.ParamState(braintools.init.Orthogonal()((n_rec, n_rec)))
                self.readout = braintrace.nn.Linear(n_rec, n_out)
                self.h = brainstate.HiddenState(jnp.zeros((n_rec,)))

            def update(self, x):
                self.h.value = jnp.tanh(self.w_in(x) + self.h.value @ self.w_rec.value)
                return self.readout(self.h.value)


        @etrace_lint.target(name="plain-matmul-rnn")
        def plain_matmul_rnn():
            return PlainRecurrenceRNN(), (jnp.ones((10,)),)
        '''), "braintrace", (), "recurrent weight through a plain `@`"),
    ModelFile("problems/brainstate_linear_rnn.py", _source('''
        """An Elman RNN whose recurrent layer is brainstate.nn.Linear instead of braintrace.nn.Linear."""

        import brainstate
        import braintrace
        import jax
        import jax.numpy as jnp

        import etrace_lint


        class MixedLinearRNN(brainstate.nn.Module):
            def __init__(self, n_in=12, n_rec=40, n_out=6):
                super().__init__()
                self.w_in = braintrace.nn.Linear(n_in, n_rec)
                self.w_rec = brainstate.nn.Linear(n_rec, n_rec, b_init=None)
                self.readout = braintrace.nn.Linear(n_rec, n_out)
                self.h = brainstate.HiddenState(jnp.zeros((n_rec,)))

            def update(self, x):
                self.h.value = jax.nn.relu(self.w_in(x) + self.w_rec(self.h.value))
                return self.readout(self.h.value)


        @etrace_lint.target(name="brainstate-linear-rnn")
        def brainstate_linear_rnn():
            return MixedLinearRNN(), (jnp.ones((12,)),)
        '''), "braintrace", (), "recurrent brainstate.nn.Linear (plain matmul)"),
    _cell_file("problems/gru_classifier.py",
               "A GRU classifier; the GRU's reset-gate weight reaches the hidden state only through another weight.",
               "GRUClassifier", "braintrace.nn.GRUCell(n_in, n_hidden)", "braintrace.nn:GRUCell",
               [{"name": "gru-classifier"}, {"name": "gru-classifier-batched", "batch": 4}],
               problem="GRU reset-gate weight excluded"),
    _bp("problems/brainpy_dense_comm.py", '''
        """A brainpy.state E/I network wired as its documentation shows, with brainstate.nn.Linear projections.

        brainstate.nn.Linear multiplies with a plain matmul, so none of the
        projection weights learns online; only the braintrace readout does.
        """

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import jax.numpy as jnp
        import saiunit as u

        import etrace_lint


        class DocsEINet(brainstate.nn.Module):
            def __init__(self, n_in=16, n_exc=40, n_inh=10):
                super().__init__()
                n = n_exc + n_inh
                self.n_exc = n_exc
                self.pop = brainpy.state.LIF(n, tau=20.0 * u.ms, spk_fun=braintools.surrogate.Sigmoid())
                w_init = braintools.init.KaimingNormal(unit=u.mS)
                self.inp = brainpy.state.AlignPostProj(
                    comm=brainstate.nn.Linear(n_in, n, w_init=w_init, b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=5.0 * u.ms),
                    out=brainpy.state.CUBA.desc(scale=u.volt), post=self.pop)
                self.exc = brainpy.state.AlignPostProj(
                    comm=brainstate.nn.Linear(n_exc, n, w_init=w_init, b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=5.0 * u.ms),
                    out=brainpy.state.CUBA.desc(scale=u.volt), post=self.pop)
                self.inh = brainpy.state.AlignPostProj(
                    comm=brainstate.nn.Linear(n_inh, n, w_init=w_init, b_init=None),
                    syn=brainpy.state.Expon.desc(n, tau=10.0 * u.ms),
                    out=brainpy.state.CUBA.desc(scale=-1.0 * u.volt), post=self.pop)
                self.readout = braintrace.nn.LeakyRateReadout(n, 3, tau=10.0 * u.ms)

            def update(self, x):
                last = self.pop.get_spike()
                self.inp(x)
                self.exc(last[..., :self.n_exc])
                self.inh(last[..., self.n_exc:])
                return self.readout(self.pop())


        @etrace_lint.target(name="brainpy-dense-comm")
        def brainpy_dense_comm():
            return DocsEINet(), (jnp.ones((16,)),)
        ''', ("brainpy.state:AlignPostProj",), problem="projections through brainstate.nn.Linear"),
    _bp("problems/brainpy_plain_readout.py", '''
        """A recurrent LIF network read out by brainpy.state.LeakyRateReadout, whose weight is a plain matmul."""

        import brainpy
        import brainstate
        import braintools
        import braintrace
        import jax.numpy as jnp
        import saiunit as u

        import etrace_lint


        class PlainReadoutNet(brainstate.nn.Module):
            def __init__(self, n_in=16, n=48, n_out=3):
                super().__init__()
                self.pop = brainpy.state.LIF(n, tau=20.0 * u.ms, V_th=1.0 * u.mV,
                                             spk_fun=braintools.surrogate.ReluGrad())
                self.rec = brainpy.state.DeltaProj(
                    comm=braintrace.nn.Linear(n_in + n, n, b_init=None,
                                              w_init=braintools.init.KaimingNormal(unit=u.mV)),
                    post=self.pop)
                self.readout = brainpy.state.LeakyRateReadout(n, n_out, tau=10.0 * u.ms)

            def update(self, x):
                self.rec(u.math.concatenate([x, self.pop.get_spike()], axis=-1))
                return self.readout(self.pop())


        @etrace_lint.target(name="brainpy-plain-readout")
        def brainpy_plain_readout():
            return PlainReadoutNet(), (jnp.ones((16,)),)
        ''', ("brainpy.state:LeakyRateReadout", "brainpy.state:DeltaProj"),
        problem="brainpy.state.LeakyRateReadout weight through a plain matmul"),
]

MODELS: list[ModelFile] = RNN_MODELS + SNN_MODELS + BRAINPY_MODELS + PROBLEM_MODELS


@functools.cache
def _brainpy_importable() -> bool:
    if importlib.util.find_spec("brainpy") is None:
        return False
    try:
        importlib.import_module("brainpy.state")
    except Exception:  # an installed but broken brainpy counts as missing
        return False
    return True


@functools.cache
def available(need: str) -> bool:
    """Whether the installed libraries have ``module:Name`` (importing the module once)."""
    import warnings

    module_name, _, name = need.partition(":")
    if module_name.startswith("brainpy") and not _brainpy_importable():
        return False
    try:
        module = importlib.import_module(module_name)
        with warnings.catch_warnings():  # braintrace.nn forwards its spiking layers with a DeprecationWarning
            warnings.simplefilter("ignore")
            getattr(module, name)
    except Exception:
        return False
    return True


def selected_models(only: list[str] | None = None) -> list[ModelFile]:
    """The models the installed libraries can build, optionally only the files named in ``only``.

    A selected model's folder helper (``_shared.py``) comes with it.
    """
    chosen = MODELS if only is None else [m for m in MODELS if m.path in set(only)]
    if only is not None:
        unknown = set(only) - {m.path for m in MODELS}
        if unknown:
            raise ValueError(f"not in the corpus: {sorted(unknown)}")
        helpers = {os.path.dirname(m.path) + "/_shared.py" for m in chosen}
        chosen = [m for m in MODELS if m in chosen or m.path in helpers]
    return [m for m in chosen if all(available(need) for need in m.needs)]


def write_corpus(root: str, only: list[str] | None = None) -> list[str]:
    """Write the corpus (or the files named in ``only``) under ``root``; returns the files written.

    The first file is ``pyproject.toml``, which sets ``dt`` for every target.
    """
    written = [os.path.join(root, "pyproject.toml")]
    os.makedirs(root, exist_ok=True)
    with open(written[0], "w", encoding="utf-8") as handle:
        handle.write(PYPROJECT)
    for model in selected_models(only):
        path = os.path.join(root, *model.path.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(model.source)
        written.append(path)
    return written


def target_files(written: list[str]) -> list[str]:
    """The written files that hold lint targets (not the configuration or a helper module)."""
    return [p for p in written if p.endswith(".py") and not os.path.basename(p).startswith("_")]


def problem_free(written: list[str], root: str) -> list[str]:
    """The written target files of stock models that hold no real problem."""
    clean = {m.path for m in MODELS if not m.problem}
    return [p for p in target_files(written) if os.path.relpath(p, root).replace(os.sep, "/") in clean]


if __name__ == "__main__":
    import sys

    for written_path in write_corpus(sys.argv[1] if len(sys.argv) > 1 else "corpus"):
        print(written_path)
