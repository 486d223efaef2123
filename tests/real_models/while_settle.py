"""A tanh RNN feeding a layer that settles in a ``jax.lax.while_loop``.

Upstream: chaobrain/braintrace braintrace/_algorithm/tests/while_support_test.py,
``_StackedWhileNet`` (Copyright 2026 BrainX Ecosystem Limited, Apache License
2.0), as it is there. Layer 1 is a tanh RNN whose input weight ``w1`` is a
``braintrace.matmul``; layer 2 settles ``h2`` for ``k`` iterations of a while
loop driven by ``w2``'s op. ``while_layer=False`` is upstream's unrolled twin:
the same math with the loop written out, so the same weights.

braintrace's single-step VJP cannot take ``h1``'s learning signal through the
loop (the compiler detaches the loop's inputs in the perturbed step), so
``w1``'s online gradient is exactly zero while BPTT's is not; ``w2`` learns as
in the twin.
"""

import brainstate
import braintrace
import jax
import jax.numpy as jnp

import etrace_lint


class StackedWhileNet(brainstate.nn.Module):
    def __init__(self, n_in: int = 3, n_rec: int = 4, k: int = 3, decay: float = 0.8, while_layer: bool = True):
        super().__init__()
        self.k = k
        self.decay = decay
        self.while_layer = while_layer
        with brainstate.random.seed_context(2):
            self.w1 = brainstate.ParamState(0.1 * brainstate.random.randn(n_in, n_rec))
            self.w2 = brainstate.ParamState(0.1 * brainstate.random.randn(n_rec, n_rec))
        self.h1 = brainstate.HiddenState(jnp.zeros((1, n_rec)))
        self.h2 = brainstate.HiddenState(jnp.zeros((1, n_rec)))

    def update(self, x):
        x_row = x.reshape(1, -1)
        self.h1.value = jnp.tanh(braintrace.matmul(x_row, self.w1.value) + 0.5 * self.h1.value)
        pre = braintrace.matmul(self.h1.value, self.w2.value) + self.decay * self.h2.value
        h_prev = self.h2.value
        if self.while_layer:
            def body(s):
                i, h = s
                return i + 1, h + 0.5 * jnp.tanh(pre - h)

            _, h_new = jax.lax.while_loop(lambda s: s[0] < self.k, body, (0, h_prev))
        else:
            h_new = h_prev
            for _ in range(self.k):
                h_new = h_new + 0.5 * jnp.tanh(pre - h_new)
        self.h2.value = h_new
        return h_new


@etrace_lint.target(name="stacked-while-net", verify={"algorithms": ["d_rtrl"]})
def stacked_while_net():
    model = StackedWhileNet()
    brainstate.nn.init_all_states(model, batch_size=1)
    return model, (jnp.ones((3,)),)


@etrace_lint.target(name="stacked-while-twin", verify={"algorithms": ["d_rtrl"]})
def stacked_while_twin():
    model = StackedWhileNet(while_layer=False)
    brainstate.nn.init_all_states(model, batch_size=1)
    return model, (jnp.ones((3,)),)
