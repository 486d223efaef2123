"""Recurrent spiking networks of brainpy.state's other neuron and synapse models, wired as its docs wire
a LIF network: an AlignPostProj whose comm is a braintrace.nn.Linear, read out by a LeakyRateReadout.

Upstream: brainpy.state's neuron and synapse reference (AdExIF, ExpIF, QuaIF,
Gif; a DualExpon synapse) and chaobrain/braintrace
examples/002-coba-ei-rsnn.py for the wiring. Small sizes.
"""

import brainpy.state
import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class RecurrentNet(brainstate.nn.Module):
    def __init__(self, neuron, synapse, out, n_in=5, n_rec=10, n_out=2, scale=4.0, unit=u.mA):
        super().__init__()
        self.neu = neuron
        self.unit = unit
        self.proj = brainpy.state.AlignPostProj(
            comm=braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=braintools.init.KaimingNormal(scale, unit=unit),
                                      b_init=braintools.init.ZeroInit(unit=unit)),
            syn=synapse,
            out=out,
            post=self.neu,
        )
        self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=10. * u.ms)

    def update(self, x):
        self.proj(u.math.concatenate([x, self.neu.get_spike()], axis=-1))
        self.neu(0. * self.unit)
        return self.readout(self.neu.get_spike())


def _expon(n, unit=u.mA):
    return brainpy.state.Expon(n, tau=5. * u.ms, g_initializer=braintools.init.ZeroInit(unit=unit))


def _built(neuron, synapse=None, out=None, **kwargs):
    model = RecurrentNet(neuron, synapse or _expon(10), out or brainpy.state.CUBA(scale=1.), **kwargs)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((5,)),)


DT = {"dt": 0.5 * u.ms}
D_RTRL = {"algorithms": ["d_rtrl"]}


@etrace_lint.target(name="adex-rsnn", environ=DT, verify=D_RTRL)
def adex_rsnn():
    return _built(brainpy.state.AdExIF(10, V_initializer=braintools.init.Constant(-65. * u.mV)), scale=40.0)


@etrace_lint.target(name="expif-rsnn", environ=DT, verify=D_RTRL)
def expif_rsnn():
    return _built(brainpy.state.ExpIF(10, V_initializer=braintools.init.Constant(-65. * u.mV)), scale=40.0)


@etrace_lint.target(name="quaif-rsnn", environ=DT, verify=D_RTRL)
def quaif_rsnn():
    return _built(brainpy.state.QuaIF(10, V_initializer=braintools.init.Constant(-65. * u.mV)), scale=40.0)


@etrace_lint.target(name="gif-dual-expon-rsnn", environ=DT, verify=D_RTRL)
def gif_dual_expon_rsnn():
    synapse = brainpy.state.DualExpon(10, tau_decay=10. * u.ms, tau_rise=1. * u.ms,
                                      g_initializer=braintools.init.ZeroInit(unit=u.mA))
    return _built(brainpy.state.Gif(10), synapse, scale=40.0)
