"""braintrace.compile refuses a model with no hidden state: nothing is routed through ETP ops."""
import brainstate
import braintrace
import jax.numpy as jnp


class Feedforward(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = braintrace.nn.Linear(3, 8)
        self.l2 = braintrace.nn.Linear(8, 1)

    def update(self, x):
        return self.l2(jnp.tanh(self.l1(x)))


try:
    braintrace.compile(Feedforward(), "d_rtrl", jnp.ones((4, 3)), batch_size=4)
except Exception as exc:
    print("refused:", type(exc).__name__)
