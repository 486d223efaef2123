"""A generalized integrate-and-fire (GIF) network on delayed match-to-sample.

Upstream: chaobrain/braintrace examples/snn_models.py (class GIF, a
brainpy.state.Neuron with an adaptation current I2, and GifNet: one
braintrace.nn.Linear over input and last spikes, a brainpy.state.Expon
synapse, a LeakyRateReadout) and examples/001-gif-snn-for-dms.py. Small sizes.
"""

import brainpy.state
import brainstate
import braintools
import braintrace
import jax
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class GIF(brainpy.state.Neuron):
    def __init__(self, size, V_rest=0. * u.mV, V_th_inf=1. * u.mV, R=1. * u.ohm, tau=20. * u.ms,
                 tau_I2=50. * u.ms, A2=0. * u.mA):
        super().__init__(size, spk_fun=braintools.surrogate.ReluGrad(), spk_reset="soft")
        self.V_rest = braintools.init.param(V_rest, self.varshape)
        self.V_th_inf = braintools.init.param(V_th_inf, self.varshape)
        self.R = braintools.init.param(R, self.varshape)
        self.tau = braintools.init.param(tau, self.varshape)
        self.tau_I2 = braintools.init.param(tau_I2, self.varshape)
        self.A2 = braintools.init.param(A2, self.varshape)

    def init_state(self, batch_size=None, **kwargs):
        self.V = brainstate.HiddenState(braintools.init.param(braintools.init.ZeroInit(unit=u.mV),
                                                              self.varshape, batch_size))
        self.I2 = brainstate.HiddenState(braintools.init.param(braintools.init.ZeroInit(unit=u.mA),
                                                               self.varshape, batch_size))

    def update(self, x=0. * u.mA):
        last_spk = jax.lax.stop_gradient(self.get_spike())
        last_V = self.V.value - self.V_th_inf * last_spk
        last_I2 = self.I2.value - self.A2 * last_spk
        I2 = brainstate.nn.exp_euler_step(lambda i2: -i2 / self.tau_I2, last_I2)
        V = brainstate.nn.exp_euler_step(lambda v, i: (-v + self.V_rest + self.R * i) / self.tau, last_V, x + I2)
        self.I2.value = I2
        self.V.value = V
        return self.get_spike()

    def get_spike(self, V=None):
        V = self.V.value if V is None else V
        return self.spk_fun((V - self.V_th_inf) / self.V_th_inf)


class GifNet(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        w = u.math.concatenate([braintools.init.KaimingNormal(1.0, unit=u.mA)((n_in, n_rec)),
                                braintools.init.KaimingNormal(1.0, unit=u.mA)((n_rec, n_rec))], axis=0)
        self.ir2r = braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=w, b_init=braintools.init.ZeroInit(unit=u.mA))
        self.exp = brainpy.state.Expon(n_rec, tau=5. * u.ms, g_initializer=braintools.init.ZeroInit(unit=u.mA))
        self.r = GIF(n_rec, A2=-1. * u.mA, tau=5. * u.ms, tau_I2=brainstate.random.uniform(100., 150., n_rec) * u.ms)
        self.out = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=5. * u.ms, w_init=braintools.init.KaimingNormal())

    def update(self, spikes):
        cond = self.ir2r(u.math.concatenate([spikes, self.r.get_spike()], axis=-1))
        return self.out(self.r(self.exp(cond)))


@etrace_lint.target(name="gif-dms", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def gif_dms():
    model = GifNet(8, 12, 2)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)
