"""SpArch-style recurrent LIF layers with a normalisation between the input projection and the neurons.

Upstream: the SpArch speech-recognition code (idiap/sparch, models/snns.py:
LIFLayer/RLIFLayer, W x normalised by a layer norm before the membrane update)
as it is ported to brainstate/braintrace: braintrace.nn.Linear for the input
and recurrent weights, brainstate.nn.LayerNorm (or a bare mean subtraction)
on the input current, a LIF membrane kept in a HiddenState. Small sizes.
"""

import brainstate
import braintools
import braintrace
import jax
import jax.numpy as jnp

import etrace_lint


class RLIFLayer(brainstate.nn.Module):
    """``spikes_from_membrane=True`` keeps only the membrane as a hidden state and reads the
    last spikes from it, as braintrace's own LIF does; False keeps SpArch's two states."""

    def __init__(self, n_in, n_hidden, normalisation="layernorm", spikes_from_membrane=True,
                 alpha=0.6, threshold=0.5):
        super().__init__()
        self.n_hidden = n_hidden
        self.W = braintrace.nn.Linear(n_in, n_hidden, b_init=None, w_init=braintools.init.KaimingNormal(4.0))
        self.V = braintrace.nn.Linear(n_hidden, n_hidden, b_init=None, w_init=braintools.init.Orthogonal())
        self.normalisation = normalisation
        if normalisation == "layernorm":
            self.norm = brainstate.nn.LayerNorm(n_hidden)
        self.spikes_from_membrane = spikes_from_membrane
        self.alpha = alpha
        self.threshold = threshold
        self.spike_fn = braintools.surrogate.Sigmoid()

    def init_state(self, batch_size=None, **kwargs):
        self.ut = brainstate.HiddenState(braintools.init.param(jnp.zeros, self.n_hidden, batch_size))
        if not self.spikes_from_membrane:
            self.st = brainstate.HiddenState(braintools.init.param(jnp.zeros, self.n_hidden, batch_size))

    def last_spikes(self):
        if self.spikes_from_membrane:
            return jax.lax.stop_gradient(self.spike_fn(self.ut.value - self.threshold))
        return self.st.value

    def update(self, x):
        wx = self.W(x)
        if self.normalisation == "layernorm":
            wx = self.norm(wx)
        else:
            wx = wx - wx.mean(axis=-1, keepdims=True)
        st_prev = self.last_spikes()
        ut = self.alpha * (self.ut.value - st_prev) + (1 - self.alpha) * (wx + self.V(st_prev))
        st = self.spike_fn(ut - self.threshold)
        self.ut.value = ut
        if not self.spikes_from_membrane:
            self.st.value = st
        return st


class SparchNet(brainstate.nn.Module):
    def __init__(self, n_in, n_hidden, n_out, normalisation, spikes_from_membrane=True):
        super().__init__()
        self.rlif = RLIFLayer(n_in, n_hidden, normalisation, spikes_from_membrane)
        self.readout = braintrace.nn.LeakyRateReadout(n_hidden, n_out, tau=10.0)

    def update(self, x):
        return self.readout(self.rlif(x))


@etrace_lint.target(name="sparch-rlif-layernorm", environ={"dt": 1.0}, verify={"algorithms": ["d_rtrl"]})
def sparch_rlif_layernorm():
    model = SparchNet(8, 12, 3, "layernorm")
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)


@etrace_lint.target(name="sparch-rlif-mean-subtracted", environ={"dt": 1.0},
                    verify={"algorithms": ["d_rtrl"]})
def sparch_rlif_mean_subtracted():
    model = SparchNet(8, 12, 3, "mean")
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)


@etrace_lint.target(name="sparch-rlif-two-states", environ={"dt": 1.0}, verify={"algorithms": ["d_rtrl"]})
def sparch_rlif_two_states():
    model = SparchNet(8, 12, 3, "layernorm", spikes_from_membrane=False)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)
