"""A training script as users write them: build, compile with braintrace.compile, train a few steps."""
import os
import sys

import brainstate
import braintrace
import jax
import jax.numpy as jnp


class Net(brainstate.nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.cell = braintrace.nn.GRUCell(n_in, n_hidden)
        self.w_out = brainstate.ParamState(brainstate.random.randn(n_hidden, 1) * 0.1)

    def update(self, x):
        h = self.cell(x)
        return h @ self.w_out.value  # a plain matmul on the readout


print("argv", sys.argv)
print("main", __name__, os.path.basename(__file__))
print("path0", sys.path[0])
print("cwd", os.getcwd())
print("stdin", sys.stdin.readline().strip())
brainstate.random.seed(7)
with brainstate.environ.context(dt=0.1):
    net = Net(3, 8)
    x0 = jnp.ones((4, 3))
    learner = braintrace.compile(net, "D_RTRL", x0, batch_size=4)
    print("compiled")
    weights = net.states(brainstate.ParamState)

    def loss_fn(x):
        return jnp.mean(learner(x) ** 2)

    losses = []
    for step in range(3):
        x = brainstate.random.randn(4, 3)
        grads, loss = brainstate.transform.grad(loss_fn, weights, return_value=True)(x)
        for key, grad in grads.items():
            weights[key].value = jax.tree.map(lambda w, g: w - 0.1 * g, weights[key].value, grad)
        losses.append(float(loss))
    # the same model compiled again: linted once; another algorithm: linted again
    learner = braintrace.compile(net, "D_RTRL", x0, batch_size=4)
    learner = braintrace.compile(net, braintrace.pp_prop, x0, batch_size=4, decay_or_rank=0.9)
    print("losses", " ".join(f"{loss:.9g}" for loss in losses), "key", brainstate.random.get_key())
    print("dt", brainstate.environ.get_dt())
