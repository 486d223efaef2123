"""A recurrent LIF network with a leaky readout, as braintrace's N-MNIST example trains it.

Upstream: chaobrain/braintrace examples/000-lif-snn-for-nmnist.py (input and
last spikes concatenated into one braintrace.nn.Linear, LIF neurons,
braintrace.nn.LeakyRateReadout), at a size that runs in seconds.
"""

import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class LIFRecurrentNet(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        w = u.math.concatenate([braintools.init.KaimingNormal(2.0, unit=u.mA)((n_in, n_rec)),
                                braintools.init.KaimingNormal(1.0, unit=u.mA)((n_rec, n_rec))], axis=0)
        self.i2r = braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=w, b_init=braintools.init.ZeroInit(unit=u.mA))
        self.neu = braintrace.nn.LIF(n_rec, tau=20. * u.ms, V_th=1. * u.mV)
        self.out = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=10. * u.ms)

    def update(self, x):
        current = self.i2r(u.math.concatenate([x, self.neu.get_spike()], axis=-1))
        return self.out(self.neu(current))


@etrace_lint.target(name="lif-rsnn-nmnist", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def lif_rsnn_nmnist():
    model = LIFRecurrentNet(8, 12, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)


@etrace_lint.target(name="lif-rsnn-nmnist-batched", batch_size=4, environ={"dt": 1. * u.ms},
                    verify={"algorithms": ["d_rtrl"]})
def lif_rsnn_nmnist_batched():
    model = LIFRecurrentNet(8, 12, 3)
    brainstate.nn.init_all_states(model, batch_size=4)
    return model, (jnp.ones((4, 8)),)
