"""The BrainTrace SHD experiments' adLIF network with DyT normalization: two adLIF layers and a leaky readout.

Upstream: chaobrain/braintrace-shd-experiments online_models.py (``SNN`` with
``adLIFLayer`` and ``ReadoutLayer``, ``BaseLayer.apply_norm`` with
``normalization == "dyt"``: ``DyT``, a ``ParamState`` dict of ``alpha``,
``weight`` and ``bias`` applied as ``tanh(alpha * x) * weight + bias`` between
a layer's feed-forward ``Linear`` and its neuron; the ``SpikeFunctionBoxcar``
surrogate) and online_main.py's defaults (three layers with the readout,
threshold 0.5, ``inp_scale`` 20), Copyright 2025 BrainX Ecosystem Limited,
Apache License 2.0. The experiments were written against brainscale, braintrace's
former name: its ``ETraceParam(..., op=MatMulOp())`` is ``braintrace.nn.Linear``
here and its ``ElemWiseParam`` a ``ParamState`` read through
``braintrace.element_wise``, the replacements braintrace 0.2 names for them.
Dropout (upstream's ``pdrop``) is left out; the hidden states start as
upstream's ``state_init == "rand"`` draws them. Small sizes, batch 4.

Issue 38, item 6: under ``d_rtrl`` with ``vjp_method="multi-step"`` the DyT
``alpha`` of the second layer was measured learning against BPTT's direction.
"""

import brainstate
import braintools
import braintrace
import jax
import jax.numpy as jnp
import numpy as np

import etrace_lint

THRESHOLD, INP_SCALE = 0.5, 20.0


class SpikeFunctionBoxcar(braintools.surrogate.Surrogate):
    def surrogate_grad(self, x) -> jax.Array:
        return jnp.where(jnp.abs(x) > 0.5, 0., 1.)


class DyT(brainstate.nn.Module):
    def __init__(self, num_features, alpha_init_value=0.5):
        super().__init__()
        self.param = brainstate.ParamState({'alpha': jnp.ones(1) * alpha_init_value,
                                            'weight': jnp.ones(num_features),
                                            'bias': jnp.zeros(num_features)})

    def update(self, x):
        x = jnp.tanh(self.param.value['alpha'] * x)
        return x * self.param.value['weight'] + self.param.value['bias']


class adLIFLayer(brainstate.nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.alpha_lim = [np.exp(-1 / 5), np.exp(-1 / 25)]
        self.beta_lim = [np.exp(-1 / 30), np.exp(-1 / 120)]
        self.a_lim = [-1.0, 1.0]
        self.b_lim = [0.0, 2.0]
        self.norm = DyT(hidden_size)
        self.spike_fct = SpikeFunctionBoxcar()
        self.W = braintrace.nn.Linear(input_size, hidden_size, w_init=braintools.init.KaimingUniform(INP_SCALE),
                                      b_init=None)
        self.alpha = brainstate.ParamState(brainstate.random.uniform(*self.alpha_lim, size=hidden_size))
        self.beta = brainstate.ParamState(brainstate.random.uniform(*self.beta_lim, size=hidden_size))
        self.a = brainstate.ParamState(brainstate.random.uniform(*self.a_lim, size=hidden_size))
        self.b = brainstate.ParamState(brainstate.random.uniform(*self.b_lim, size=hidden_size))

    def init_state(self, batch_size=None, **kwargs):
        size = (self.hidden_size,) if batch_size is None else (batch_size, self.hidden_size)
        # upstream's state_init == "rand": with zero states and DyT bounding the drive to [-1, 1], no
        # neuron reaches threshold within a few steps and the readout's output, hence the loss, stays zero
        self.ut = brainstate.HiddenState(brainstate.random.rand(*size))
        self.wt = brainstate.HiddenState(brainstate.random.rand(*size))
        self.st = brainstate.HiddenState(brainstate.random.rand(*size))

    def update(self, x):
        Wx = self.norm(self.W(x))
        alpha = jnp.clip(braintrace.element_wise(self.alpha.value), *self.alpha_lim)
        beta = jnp.clip(braintrace.element_wise(self.beta.value), *self.beta_lim)
        a = jnp.clip(braintrace.element_wise(self.a.value), *self.a_lim)
        b = jnp.clip(braintrace.element_wise(self.b.value), *self.b_lim)
        wt = beta * self.wt.value + a * self.ut.value + b * self.st.value
        ut = alpha * self.ut.value - alpha * self.st.value + (1 - alpha) * (Wx - wt)
        st = self.spike_fct(ut - THRESHOLD)
        self.ut.value = ut
        self.wt.value = wt
        self.st.value = st
        return st


class ReadoutLayer(brainstate.nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.alpha_lim = [np.exp(-1 / 5), np.exp(-1 / 25)]
        self.norm = DyT(hidden_size)
        self.W = braintrace.nn.Linear(input_size, hidden_size, w_init=braintools.init.KaimingUniform(), b_init=None)
        self.alpha = brainstate.ParamState(brainstate.random.uniform(*self.alpha_lim, size=hidden_size))

    def init_state(self, batch_size=None, **kwargs):
        size = (self.hidden_size,) if batch_size is None else (batch_size, self.hidden_size)
        self.ut = brainstate.HiddenState(jnp.zeros(size))

    def update(self, x):
        Wx = self.norm(self.W(x))
        alpha = jnp.clip(braintrace.element_wise(self.alpha.value), *self.alpha_lim)
        ut = alpha * self.ut.value + (1 - alpha) * Wx
        self.ut.value = ut
        return ut


class SNN(brainstate.nn.Module):
    def __init__(self, input_size, layer_sizes):
        super().__init__()
        snn = []
        for size in layer_sizes[:-1]:
            snn.append(adLIFLayer(input_size, size))
            input_size = size
        snn.append(ReadoutLayer(input_size, layer_sizes[-1]))
        self.snn = snn

    def update(self, x):
        for layer in self.snn:
            x = layer(x)
        return x


class OnlineNet(brainstate.nn.Module):
    def __init__(self, input_size, layer_sizes):
        super().__init__()
        self.layer = SNN(input_size, layer_sizes)

    def update(self, x):
        return self.layer(x)


def _built():
    model = OnlineNet(10, [8, 8, 4])
    brainstate.nn.init_all_states(model, batch_size=4)
    return model, (jnp.ones((4, 10)),)


@etrace_lint.target(name="shd-adlif-dyt", batch_size=4, verify={"algorithms": ["d_rtrl"]})
def shd_adlif_dyt():
    return _built()


@etrace_lint.target(name="shd-adlif-dyt-multi-step", batch_size=4,
                    verify={"algorithms": ["d_rtrl"], "algorithm_options": {"d_rtrl": {"vjp_method": "multi-step"}}})
def shd_adlif_dyt_multi_step():
    return _built()
