"""The BrainTrace SHD experiments' RLIF network with RMSNorm and Dropout: two RLIF layers and a leaky readout.

Upstream: chaobrain/braintrace-shd-experiments online_model.py (``SNN`` with
``RLIFLayer`` and ``ReadoutLayer``; ``BaseLayer.apply_norm`` with
``normalization == "rmsnorm"``, a ``brainscale.nn.RMSNorm`` between a layer's
feed-forward ``Linear`` and its neuron; ``brainstate.nn.Dropout(1 - pdrop)`` on
each hidden layer's spikes; the ``SpikeFunctionBoxcar`` surrogate), with
``model_type="RLIF"``, width 32, batch 4 and the training loop's
``brainstate.environ`` key ``fit=True``. Copyright 2025 BrainX Ecosystem
Limited, Apache License 2.0. brainscale's ``ETraceParam(..., op=MatMulOp())`` is
``braintrace.nn.Linear`` here and its ``ElemWiseParam`` a ``ParamState`` read
through ``braintrace.element_wise``; upstream's orthogonal recurrent
initialiser is braintools' ``Orthogonal``.
"""

import brainstate
import braintools
import braintrace
import jax
import jax.numpy as jnp
import numpy as np

import etrace_lint

THRESHOLD, INP_SCALE, REC_SCALE, PDROP = 0.5, 20.0, 1.0, 0.1


class SpikeFunctionBoxcar(braintools.surrogate.Surrogate):
    def surrogate_grad(self, x) -> jax.Array:
        return jnp.where(jnp.abs(x) > 0.5, 0., 1.)


class RLIFLayer(brainstate.nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.alpha_lim = [np.exp(-1 / 5), np.exp(-1 / 25)]
        self.norm = braintrace.nn.RMSNorm(hidden_size)
        self.spike_fct = SpikeFunctionBoxcar()
        self.W = braintrace.nn.Linear(input_size, hidden_size, w_init=braintools.init.KaimingUniform(INP_SCALE),
                                      b_init=None)
        self.V = braintrace.nn.Linear(hidden_size, hidden_size, w_init=braintools.init.Orthogonal(REC_SCALE),
                                      b_init=None)
        self.alpha = brainstate.ParamState(brainstate.random.uniform(*self.alpha_lim, size=hidden_size))
        self.drop = brainstate.nn.Dropout(1 - PDROP)

    def init_state(self, batch_size=None, **kwargs):
        size = (self.hidden_size,) if batch_size is None else (batch_size, self.hidden_size)
        # upstream's state_init == "rand"
        self.ut = brainstate.HiddenState(brainstate.random.rand(*size))
        self.st = brainstate.HiddenState(brainstate.random.rand(*size))

    def update(self, x):
        Wx = self.norm(self.W(x))
        alpha = jnp.clip(braintrace.element_wise(self.alpha.value), *self.alpha_lim)
        ut = alpha * self.ut.value - alpha * self.st.value + (1 - alpha) * (Wx + self.V(self.st.value))
        st = self.spike_fct(ut - THRESHOLD)
        self.ut.value = ut
        self.st.value = st
        return self.drop(st)


class ReadoutLayer(brainstate.nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.alpha_lim = [np.exp(-1 / 5), np.exp(-1 / 25)]
        self.norm = braintrace.nn.RMSNorm(hidden_size)
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
            snn.append(RLIFLayer(input_size, size))
            input_size = size
        snn.append(ReadoutLayer(input_size, layer_sizes[-1]))
        self.snn = snn

    def update(self, x):
        for layer in self.snn:
            x = layer(x)
        return x


@etrace_lint.target(name="shd-rlif-rmsnorm", batch_size=4, environ={"fit": True},
                    verify={"algorithms": ["d_rtrl"]})
def shd_rlif_rmsnorm():
    model = SNN(20, [32, 32, 10])
    brainstate.nn.init_all_states(model, batch_size=4)
    return model, (jnp.ones((4, 20)),)
