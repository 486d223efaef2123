"""A rate RNN whose recurrent weight is applied with a plain ``@``.

Only ETP ops (``braintrace.matmul``, ``braintrace.nn.Linear``, ...) carry
eligibility traces. ``h @ W_rec`` is an ordinary JAX matmul: the compiler sees
no relation between ``W_rec`` and the hidden state, and online training
leaves it untouched.
"""

import brainstate
import braintrace
import jax.numpy as jnp


class RateRNN(brainstate.nn.Module):
    def __init__(self, n_in=16, n=32, tau=10.0):
        super().__init__()
        self.alpha = 1.0 / tau
        self.w_in = brainstate.ParamState(brainstate.random.randn(n_in, n) * 0.1)
        self.w_rec = brainstate.ParamState(brainstate.random.randn(n, n) / jnp.sqrt(n))
        self.h = brainstate.HiddenState(jnp.zeros((n,)))

    def update(self, x):
        drive = braintrace.matmul(x, self.w_in.value) + jnp.tanh(self.h.value) @ self.w_rec.value
        self.h.value = (1 - self.alpha) * self.h.value + self.alpha * drive
        return self.h.value


def etrace_target_rate_rnn():
    return RateRNN(), (jnp.ones((16,)),)
