"""A Hebbian rule that rewrites its own weight inside the forward step.

Online gradient training owns the weights; a ParamState written during the
step breaks the compiler's assumption that parameters are constant within it.
Keep plastic weights in a ``brainstate.ShortTermState`` (or apply the update
outside the step).
"""

import brainstate
import braintrace
import jax.numpy as jnp


class HebbianLayer(brainstate.nn.Module):
    def __init__(self, n_in=16, n=32, eta=1e-3):
        super().__init__()
        self.eta = eta
        self.w = brainstate.ParamState(brainstate.random.randn(n_in, n) * 0.1)
        self.h = brainstate.HiddenState(jnp.zeros((n,)))

    def update(self, x):
        self.h.value = 0.9 * self.h.value + braintrace.matmul(x, self.w.value)
        self.w.value = self.w.value + self.eta * jnp.outer(x, self.h.value)
        return self.h.value


def etrace_target_hebbian():
    return HebbianLayer(), (jnp.ones((16,)),)
