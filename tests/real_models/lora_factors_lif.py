"""A LIF layer whose recurrent matrix is two LoRA factors of its own, W = alpha * B @ A.

Upstream: chaobrain/braintrace examples/pp_prop/10-operator-lora.py
(LoRARecLIFCell: a braintrace.nn.Linear feed-forward current, a low-rank
recurrent current braintrace.lora_matmul(last_spikes, B, A) with B and A
plain brainstate.ParamStates, an Expon synapse into a brainpy.state LIF), read
out here by a braintrace.nn.LeakyRateReadout instead of the example's own
leaky readout; trained with pp_prop as there, and with D-RTRL. Small sizes.
"""

import brainpy.state
import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class LoRARecLIFCell(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, rank=2, alpha=1.0):
        super().__init__()
        self.alpha = alpha
        self.neu = brainpy.state.LIF(n_rec, R=1. * u.ohm, tau=20. * u.ms, V_th=1. * u.mV, V_reset=0. * u.mV,
                                     V_rest=0. * u.mV, V_initializer=braintools.init.ZeroInit(unit=u.mV))
        self.syn = brainpy.state.Expon(n_rec, tau=10. * u.ms, g_initializer=braintools.init.ZeroInit(unit=u.mA))
        self.ff = braintrace.nn.Linear(n_in, n_rec, w_init=braintools.init.KaimingNormal(2.0, unit=u.mA),
                                       b_init=braintools.init.ZeroInit(unit=u.mA))
        self.B = brainstate.ParamState(braintools.init.KaimingNormal(1.0, unit=u.mA)((n_rec, rank)))
        self.A = brainstate.ParamState(braintools.init.KaimingNormal(1.0)((rank, n_rec)))

    def update(self, x):
        last_spk = self.neu.get_spike()
        rec_current = braintrace.lora_matmul(last_spk, self.B.value, self.A.value, alpha=self.alpha)
        g = self.syn(self.ff(x) + rec_current)
        self.neu(g)
        return self.neu.get_spike()


class Net(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out, rank=2):
        super().__init__()
        self.cell = LoRARecLIFCell(n_in, n_rec, rank)
        self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=5. * u.ms)

    def update(self, x):
        return self.readout(self.cell(x))


@etrace_lint.target(name="lora-factors-lif-pp-prop", environ={"dt": 1. * u.ms},
                    verify={"algorithms": ["pp_prop"], "algorithm_options": {"pp_prop": {"decay_or_rank": 0.95}}})
def lora_factors_lif_pp_prop():
    model = Net(8, 12, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)


@etrace_lint.target(name="lora-factors-lif-d-rtrl", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def lora_factors_lif_d_rtrl():
    model = Net(8, 12, 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)
