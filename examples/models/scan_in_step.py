"""ETP ops inside ``lax.scan`` and ``lax.while_loop`` within one time step.

Sub-stepping the membrane with a scan, or iterating a relaxation with a while
loop, hides the weight from the compiler: a scan body's ETP op may be unrolled
or descended into, a while loop's never is.
"""

import brainstate
import braintrace
import jax
import jax.numpy as jnp


class SubsteppedNeurons(brainstate.nn.Module):
    """Four Euler sub-steps per time step, each re-reading the synaptic input."""

    def __init__(self, n_in=16, n=32, substeps=4):
        super().__init__()
        self.substeps = substeps
        self.w = brainstate.ParamState(brainstate.random.randn(n_in, n) * 0.1)
        self.v = brainstate.HiddenState(jnp.zeros((n,)))

    def update(self, x):
        def substep(v, _):
            return 0.95 * v + 0.05 * braintrace.matmul(x, self.w.value), None

        self.v.value = jax.lax.scan(substep, self.v.value, None, length=self.substeps)[0]
        return self.v.value


class RelaxedAttractor(brainstate.nn.Module):
    """Iterates the recurrent input until it settles, then leaks into the state."""

    def __init__(self, n=32):
        super().__init__()
        self.w = brainstate.ParamState(jnp.eye(n) * 0.5)
        self.h = brainstate.HiddenState(jnp.zeros((n,)))

    def update(self, x):
        settle = jax.lax.while_loop(lambda y: jnp.abs(y).max() > 1.0,
                                    lambda y: jnp.tanh(braintrace.matmul(y, self.w.value)), x)
        self.h.value = 0.9 * self.h.value + settle
        return self.h.value


def etrace_target_substepped():
    return SubsteppedNeurons(), (jnp.ones((16,)),)


def etrace_target_relaxed():
    return RelaxedAttractor(), (jnp.ones((32,)),)
