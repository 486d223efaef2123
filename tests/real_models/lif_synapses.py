"""Recurrent LIF and IF networks with Alpha and Expon synapses, trained with D-RTRL or ES-D-RTRL.

Upstream: chaobrain/braintrace docs/tutorials/snn_online_learning.ipynb and
examples/003-snn-memory-and-speed-evaluation-batched.py (braintrace.nn.LIF/IF
neurons driven through braintrace.nn.Linear into braintrace.nn.Expon or
braintrace.nn.Alpha synapses; the evaluation script compares D_RTRL with
ES_D_RTRL). Small sizes.
"""

import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class SynapticRSNN(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out, synapse="expon", neuron="lif"):
        super().__init__()
        self.i2r = braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=braintools.init.KaimingNormal(2.0, unit=u.mA),
                                        b_init=braintools.init.ZeroInit(unit=u.mA))
        syn = braintrace.nn.Alpha if synapse == "alpha" else braintrace.nn.Expon
        self.syn = syn(n_rec, tau=10. * u.ms, g_initializer=braintools.init.ZeroInit(unit=u.mA))
        if neuron == "if":
            self.neu = braintrace.nn.IF(n_rec, tau=20. * u.ms, V_th=1. * u.mV)
        else:
            self.neu = braintrace.nn.LIF(n_rec, tau=20. * u.ms, V_th=1. * u.mV)
        self.out = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=10. * u.ms)

    def update(self, x):
        current = self.syn(self.i2r(u.math.concatenate([x, self.neu.get_spike()], axis=-1)))
        return self.out(self.neu(current))


def _built(**kwargs):
    model = SynapticRSNN(6, 12, 2, **kwargs)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((6,)),)


@etrace_lint.target(name="lif-expon-rsnn", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def lif_expon_rsnn():
    return _built(synapse="expon")


@etrace_lint.target(name="lif-alpha-rsnn", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def lif_alpha_rsnn():
    return _built(synapse="alpha")


@etrace_lint.target(name="if-expon-rsnn", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def if_expon_rsnn():
    return _built(synapse="expon", neuron="if")


@etrace_lint.target(name="lif-expon-es-d-rtrl", environ={"dt": 1. * u.ms},
                    verify={"algorithms": ["es_d_rtrl"], "algorithm_options": {"es_d_rtrl": {"decay_or_rank": 0.99}}})
def lif_expon_es_d_rtrl():
    return _built(synapse="expon")
