"""LIF layers whose recurrent spikes pass through short-term depression or facilitation.

Upstream: chaobrain/braintrace braintrace/_testing/models.py (in the source
distribution: LIF_STDExpCu_Dense_Layer and LIF_STPExpCu_Dense_Layer, the test
models of its compiler and oracle tests: input and last spikes, the latter
through a brainpy.state.STD or STP, concatenated into one braintrace.nn.Linear,
an AlignPostProj onto an Expon synapse with a CUBA output, LIF neurons), read
out by a braintrace.nn.LeakyRateReadout. Small sizes.
"""

import brainpy.state
import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class PlasticLIF(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, plasticity):
        super().__init__()
        self.neu = brainpy.state.LIF(n_rec, tau=5. * u.ms, spk_fun=braintools.surrogate.ReluGrad(),
                                     spk_reset="soft", V_th=1. * u.mV)
        self.short_term = plasticity(n_rec)
        weight = jnp.concat([braintools.init.KaimingNormal()((n_in, n_rec)),
                             braintools.init.KaimingNormal()((n_rec, n_rec))], axis=0)
        self.syn = brainpy.state.AlignPostProj(
            comm=braintrace.nn.Linear(n_in + n_rec, n_rec, weight * u.mS, b_init=braintools.init.ZeroInit(unit=u.mS)),
            syn=brainpy.state.Expon.desc(n_rec, tau=10. * u.ms),
            out=brainpy.state.CUBA.desc(),
            post=self.neu,
        )

    def update(self, inp_spk):
        last_spk = self.neu.get_spike()
        self.syn(jnp.concat([inp_spk, self.short_term(last_spk)], axis=-1))
        self.neu()
        return self.neu.get_spike()


class Net(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out, plasticity):
        super().__init__()
        self.layer = PlasticLIF(n_in, n_rec, plasticity)
        self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=5. * u.ms)

    def update(self, x):
        return self.readout(self.layer(x))


@etrace_lint.target(name="lif-std-expcu", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def lif_std_expcu():
    model = Net(6, 10, 3, lambda n: brainpy.state.STD(n, tau=500. * u.ms, U=0.1))
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)


@etrace_lint.target(name="lif-stp-expcu", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def lif_stp_expcu():
    model = Net(6, 10, 3, lambda n: brainpy.state.STP(n, tau_f=500. * u.ms, tau_d=100. * u.ms))
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)
