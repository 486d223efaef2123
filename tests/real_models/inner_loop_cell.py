"""A cell whose one step runs an inner loop of three sub-steps over one weight.

Upstream: chaobrain/braintrace braintrace/_compiler/canonicalize_test.py
(``_InnerLoopCell``, Apache-2.0): each sub-step applies ``w`` through two
ETP matmuls, to the input and to the hidden state, inside a
``brainstate.transform.for_loop``. The compiler unrolls the loop and keeps
only the last sub-step's two uses of ``w`` as relations; the earlier ones
reach the hidden state through later uses of ``w`` and are excluded. So
``w`` learns, through some of its uses only.
"""

import brainstate
import braintrace
import jax.numpy as jnp

import etrace_lint


class InnerLoopCell(brainstate.nn.Module):
    def __init__(self, n_rec: int, loops: int = 3):
        super().__init__()
        self.loops = loops
        self.w = brainstate.ParamState(0.1 * brainstate.random.randn(n_rec, n_rec))
        self.h = brainstate.HiddenState(jnp.zeros(n_rec))

    def init_state(self, *args, **kwargs):
        self.h.value = jnp.zeros_like(self.h.value)

    def update(self, x):
        def step(i):
            self.h.value = jnp.tanh(
                braintrace.matmul(x, self.w.value)
                + braintrace.matmul(self.h.value, self.w.value)
            )
            return self.h.value

        outs = brainstate.transform.for_loop(step, jnp.arange(self.loops))
        return outs[-1]


@etrace_lint.target(name="inner-loop-cell")
def inner_loop_cell():
    with brainstate.random.seed_context(42):
        cell = InnerLoopCell(4, 3)
    brainstate.nn.init_all_states(cell)
    return cell, (jnp.ones(4),)
