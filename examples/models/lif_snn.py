"""A recurrent spiking network of leaky integrate-and-fire neurons with a leaky readout.

Every weight reaches a hidden state through a braintrace ETP op, so all of
them learn online: etrace-lint reports only the relations (``--show-info``).
"""

import brainstate
import braintrace
import jax
import jax.numpy as jnp
import saiunit as u

import etrace_lint


@jax.custom_jvp
def spike_fn(v):
    return (v > 0.0).astype(v.dtype)


@spike_fn.defjvp
def _spike_fn_jvp(primals, tangents):
    (v,), (dv,) = primals, tangents
    surrogate = 1.0 / (1.0 + jnp.abs(5.0 * v)) ** 2  # fast-sigmoid pseudo-derivative
    return spike_fn(v), surrogate * dv


class RecurrentLIF(brainstate.nn.Module):
    """v <- decay * v + W_in x + W_rec s;  s = H(v - v_th);  soft reset."""

    def __init__(self, n_in, n_rec, tau=20.0, v_th=1.0):
        super().__init__()
        self.decay = float(jnp.exp(-1.0 / tau))
        self.v_th = v_th
        self.w_in = braintrace.nn.Linear(n_in, n_rec)
        self.w_rec = braintrace.nn.Linear(n_rec, n_rec, b_init=None)
        self.v = brainstate.HiddenState(jnp.zeros((n_rec,)))

    def update(self, x):
        spikes = spike_fn(self.v.value - self.v_th)
        v = self.decay * self.v.value + self.w_in(x) + self.w_rec(spikes)
        self.v.value = v - spike_fn(v - self.v_th) * self.v_th
        return spike_fn(self.v.value - self.v_th)


class SpikingClassifier(brainstate.nn.Module):
    def __init__(self, n_in=40, n_rec=64, n_out=10):
        super().__init__()
        self.lif = RecurrentLIF(n_in, n_rec)
        self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=10.0 * u.ms)

    def update(self, x):
        return self.readout(self.lif(x))


@etrace_lint.target(name="lif_classifier")
def lif_classifier():
    with brainstate.environ.context(dt=1.0 * u.ms):
        model = SpikingClassifier()
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((40,)),)
