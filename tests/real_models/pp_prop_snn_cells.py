"""The spiking cells of braintrace's pp_prop examples, each with a leaky-rate readout.

Upstream: chaobrain/braintrace examples/pp_prop/_shared.py (LIFCell, ALIFCell,
COBAEICell: input and last spikes concatenated into one braintrace.nn.Linear,
a brainpy.state AlignPostProj onto an Expon synapse and a CUBA output) with
01-basics-lif-integrator.py, 02-neurons-alif-dms.py and
04-neurons-coba-ei-rsnn.py, which train them with pp_prop. Small sizes.
"""

import brainpy.state
import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


def _recurrent_weight(n_in, n_rec, n_exc=None):
    ff = braintools.init.KaimingNormal(2.0, unit=u.mA)((n_in, n_rec))
    rec = braintools.init.KaimingNormal(1.0, unit=u.mA)((n_rec, n_rec))
    if n_exc is not None:  # Dale's law: excitatory rows positive, inhibitory rows negative
        rec = u.math.concatenate([u.math.abs(rec[:n_exc]), -u.math.abs(rec[n_exc:])], axis=0)
    return u.math.concatenate([ff, rec], axis=0)


class SpikingCell(brainstate.nn.Module):
    def __init__(self, neuron, n_in, n_rec, n_exc=None):
        super().__init__()
        self.neu = neuron
        self.syn = brainpy.state.AlignPostProj(
            comm=braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=_recurrent_weight(n_in, n_rec, n_exc),
                                      b_init=braintools.init.ZeroInit(unit=u.mA)),
            syn=brainpy.state.Expon(n_rec, tau=10. * u.ms, g_initializer=braintools.init.ZeroInit(unit=u.mA)),
            out=brainpy.state.CUBA(scale=1.),
            post=self.neu,
        )

    def update(self, x):
        self.syn(u.math.concatenate([x, self.neu.get_spike()], axis=-1))
        self.neu(0. * u.mA)
        return self.neu.get_spike()


class Net(brainstate.nn.Module):
    def __init__(self, cell, n_rec, n_out):
        super().__init__()
        self.cell = cell
        self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=10. * u.ms,
                                                      w_init=braintools.init.KaimingNormal())

    def update(self, x):
        return self.readout(self.cell(x))


def _lif(n):
    return brainpy.state.LIF(n, R=1. * u.ohm, tau=20. * u.ms, V_th=1. * u.mV, V_reset=0. * u.mV,
                             V_rest=0. * u.mV, V_initializer=braintools.init.ZeroInit(unit=u.mV))


@etrace_lint.target(name="pp-prop-lif-integrator", environ={"dt": 1. * u.ms},
                    verify={"algorithms": ["pp_prop"], "algorithm_options": {"pp_prop": {"decay_or_rank": 0.95}}})
def pp_prop_lif_integrator():
    model = Net(SpikingCell(_lif(12), 1, 12), 12, 1)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((1,)),)


@etrace_lint.target(name="pp-prop-alif-dms", environ={"dt": 1. * u.ms},
                    verify={"algorithms": ["pp_prop"], "algorithm_options": {"pp_prop": {"decay_or_rank": 0.97}}})
def pp_prop_alif_dms():
    neuron = brainpy.state.ALIF(12, R=1. * u.ohm, tau=20. * u.ms, tau_a=100. * u.ms, V_th=1. * u.mV,
                                beta=1.8 * u.mV, V_reset=0. * u.mV, V_rest=0. * u.mV,
                                V_initializer=braintools.init.ZeroInit(unit=u.mV))
    model = Net(SpikingCell(neuron, 8, 12), 12, 2)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)


@etrace_lint.target(name="pp-prop-coba-ei-rsnn", environ={"dt": 1. * u.ms},
                    verify={"algorithms": ["pp_prop"], "algorithm_options": {"pp_prop": {"decay_or_rank": 0.95}}})
def pp_prop_coba_ei_rsnn():
    model = Net(SpikingCell(_lif(12), 8, 12, n_exc=9), 12, 2)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)
