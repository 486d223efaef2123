"""A GRU classifier batched with brainstate.nn.Map, braintrace's batching recipe.

Upstream: chaobrain/braintrace docs/advanced/batching.ipynb and
examples/drtrl/02-batching-vmap.py (the unbatched model wrapped in
brainstate.nn.Map(model, init_map_size=B), its states initialised through the
Map, the learner built on the mapped model). Small sizes.
"""

import brainstate
import braintrace
import jax.numpy as jnp

import etrace_lint


class GRUNet(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out):
        super().__init__()
        self.rnn = braintrace.nn.GRUCell(n_in, n_rec)
        self.out = braintrace.nn.Linear(n_rec, n_out)

    def update(self, x):
        return self.out(self.rnn(x))


@etrace_lint.target(name="gru-map-batched", verify={"algorithms": ["d_rtrl"]})
def gru_map_batched():
    mapped = brainstate.nn.Map(GRUNet(6, 10, 3), init_map_size=4)
    mapped.init_all_states()
    return mapped, (jnp.ones((4, 6)),)
