"""An e-prop network: recurrent ALIF neurons and a leaky readout, trained with e-prop.

Upstream: Bellec et al. 2020, "A solution to the learning dilemma for
recurrent networks of spiking neurons" (the e-prop code's ALIF network:
input and recurrent weights into adaptive LIF neurons, a leaky output) as
chaobrain/braintrace docs/tutorials/eprop.ipynb builds it with braintrace.nn
layers and braintrace.EProp. Small sizes.
"""

import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class EpropALIF(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.w_in = braintrace.nn.Linear(n_in, n_rec, w_init=braintools.init.KaimingNormal(2.0, unit=u.mA),
                                         b_init=None)
        self.w_rec = braintrace.nn.Linear(n_rec, n_rec, w_init=braintools.init.KaimingNormal(1.0, unit=u.mA),
                                          b_init=None)
        self.neu = braintrace.nn.ALIF(n_rec, tau=20. * u.ms, tau_a=200. * u.ms, V_th=1. * u.mV, beta=0.2 * u.mV)
        self.out = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=20. * u.ms)

    def update(self, x):
        spikes = self.neu(self.w_in(x) + self.w_rec(self.neu.get_spike()))
        return self.out(spikes)


@etrace_lint.target(name="eprop-alif", environ={"dt": 1. * u.ms}, verify={"algorithms": ["eprop"]})
def eprop_alif():
    model = EpropALIF(6, 12, 2)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)


@etrace_lint.target(name="eprop-alif-d-rtrl", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def eprop_alif_d_rtrl():
    model = EpropALIF(6, 12, 2)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)
