"""Excitatory-inhibitory spiking networks with conductance-based (COBA) and current-based (CUBA) synapses.

Upstream: chaobrain/braintrace examples/002-coba-ei-rsnn.py (an E/I recurrent
network of brainpy.state LIF neurons whose excitatory and inhibitory
projections are brainpy.state.AlignPostProj with braintrace.nn.Linear weights,
Expon synapses and COBA outputs, read out by a LeakyRateReadout) and
brainpy.state's CUBA E/I benchmark network. Small sizes.
"""

import brainpy.state
import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class EINet(brainstate.nn.Module):
    def __init__(self, n_in, n_exc, n_inh, n_out, coba=True):
        super().__init__()
        self.n_exc = n_exc
        n_rec = n_exc + n_inh
        self.pop = brainpy.state.LIF(n_rec, R=1. * u.ohm, tau=20. * u.ms, V_th=1. * u.mV, V_reset=0. * u.mV,
                                     V_rest=0. * u.mV, V_initializer=braintools.init.ZeroInit(unit=u.mV))
        unit = u.mS if coba else u.mA
        self.inp = brainpy.state.AlignPostProj(
            comm=braintrace.nn.Linear(n_in, n_rec, w_init=braintools.init.KaimingNormal(2.0, unit=u.mA),
                                      b_init=braintools.init.ZeroInit(unit=u.mA)),
            syn=brainpy.state.Expon(n_rec, tau=5. * u.ms, g_initializer=braintools.init.ZeroInit(unit=u.mA)),
            out=brainpy.state.CUBA(scale=1.),
            post=self.pop,
        )
        self.exc = brainpy.state.AlignPostProj(
            comm=braintrace.nn.SignedWLinear(n_exc, n_rec, w_init=braintools.init.KaimingNormal(1.0, unit=unit)),
            syn=brainpy.state.Expon(n_rec, tau=5. * u.ms, g_initializer=braintools.init.ZeroInit(unit=unit)),
            out=brainpy.state.COBA(E=3. * u.mV) if coba else brainpy.state.CUBA(scale=1.),
            post=self.pop,
        )
        self.inh = brainpy.state.AlignPostProj(
            comm=braintrace.nn.SignedWLinear(n_inh, n_rec, w_init=braintools.init.KaimingNormal(1.0, unit=unit),
                                             w_sign=-1.0 if not coba else None),
            syn=brainpy.state.Expon(n_rec, tau=10. * u.ms, g_initializer=braintools.init.ZeroInit(unit=unit)),
            out=brainpy.state.COBA(E=-1. * u.mV) if coba else brainpy.state.CUBA(scale=1.),
            post=self.pop,
        )
        self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=10. * u.ms)

    def update(self, x):
        spikes = self.pop.get_spike()
        self.inp(x)
        self.exc(spikes[..., :self.n_exc])
        self.inh(spikes[..., self.n_exc:])
        self.pop(0. * u.mA)
        return self.readout(self.pop.get_spike())


@etrace_lint.target(name="coba-ei-rsnn", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def coba_ei_rsnn():
    model = EINet(6, 9, 3, 2, coba=True)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)


@etrace_lint.target(name="cuba-ei-rsnn", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def cuba_ei_rsnn():
    model = EINet(6, 9, 3, 2, coba=False)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)
