"""An adaptive LIF (ALIF) recurrent network read out three ways.

Upstream: chaobrain/braintrace docs/tutorials/snn_online_learning.ipynb (an ALIF
layer whose recurrent input goes through a braintrace.nn.Linear, read out by a
braintrace.nn.LeakyRateReadout) and examples/drtrl/05-vjp-multi-step.py (the
same learner with vjp_method="multi-step"). The spikes the readout sees are
the ones ALIF returns, computed from the membrane before its next reset.
"""

import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class ALIFNet(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out, leaky_readout=True):
        super().__init__()
        self.i2r = braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=braintools.init.KaimingNormal(2.0, unit=u.mA),
                                        b_init=braintools.init.ZeroInit(unit=u.mA))
        self.neu = braintrace.nn.ALIF(n_rec, tau=20. * u.ms, tau_a=100. * u.ms, V_th=1. * u.mV, beta=0.5 * u.mV)
        if leaky_readout:
            self.out = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=10. * u.ms)
        else:
            self.out = braintrace.nn.Linear(n_rec, n_out)

    def update(self, x):
        spikes = self.neu(self.i2r(u.math.concatenate([x, self.neu.get_spike()], axis=-1)))
        return self.out(spikes)


def _built(leaky_readout):
    model = ALIFNet(6, 12, 2, leaky_readout)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)


@etrace_lint.target(name="alif-leaky-readout", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def alif_leaky_readout():
    return _built(True)


@etrace_lint.target(name="alif-linear-readout", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def alif_linear_readout():
    return _built(False)


@etrace_lint.target(name="alif-leaky-readout-multi-step", environ={"dt": 1. * u.ms},
                    verify={"algorithms": ["d_rtrl"], "algorithm_options": {"d_rtrl": {"vjp_method": "multi-step"}}})
def alif_leaky_readout_multi_step():
    return _built(True)
