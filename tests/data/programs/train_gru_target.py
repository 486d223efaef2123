"""The model train_gru.py compiles, written as a target factory: what a user wrote before ``etrace-lint run``."""
import brainstate
import braintrace
import jax.numpy as jnp


class Net(brainstate.nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.cell = braintrace.nn.GRUCell(n_in, n_hidden)
        self.w_out = brainstate.ParamState(brainstate.random.randn(n_hidden, 1) * 0.1)

    def update(self, x):
        h = self.cell(x)
        return h @ self.w_out.value  # a plain matmul on the readout


def etrace_target_train_gru():
    return Net(3, 8), jnp.ones((4, 3)), {"batch_size": 4}
