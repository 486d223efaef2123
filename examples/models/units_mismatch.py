"""A leaky integrate-and-fire membrane in physical units, missing its resistance.

The membrane potential is kept in mV and the synaptic drive is a current in
nA. ``tau dv/dt = -(v - v_rest) + R I`` needs the membrane resistance ``R`` to
turn the current into a voltage; without it saiunit refuses ``mV + nA`` while
the model is traced, so it cannot be compiled for online learning. The fix is
``... + self.r_m * current`` with ``r_m = 10.0 * u.Mohm``.
"""

import brainstate
import braintrace
import jax.numpy as jnp
import saiunit as u


class MembraneLIF(brainstate.nn.Module):
    def __init__(self, n_in=16, n=32, tau=10.0 * u.ms, dt=1.0 * u.ms, v_rest=-65.0 * u.mV):
        super().__init__()
        self.dt_tau = dt / tau
        self.v_rest = v_rest
        self.w = brainstate.ParamState(brainstate.random.randn(n_in, n) * 0.1)
        self.v = brainstate.HiddenState(jnp.full((n,), -65.0) * u.mV)

    def update(self, x):
        current = braintrace.matmul(x, self.w.value) * u.nA
        self.v.value = self.v.value + self.dt_tau * (self.v_rest - self.v.value + current)
        return self.v.value


def etrace_target_membrane_lif():
    return MembraneLIF(), (jnp.ones((16,)),)
