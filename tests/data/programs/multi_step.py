"""A learner with a multi-step VJP: it differentiates the loss through the whole window, readout included."""
import brainstate
import braintrace
import jax.numpy as jnp


class Net(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = braintrace.nn.ValinaRNNCell(3, 5)
        self.out = braintrace.nn.Linear(5, 2)

    def update(self, x):
        return self.out(self.rnn(x))


brainstate.random.seed(5)
learner = braintrace.compile(Net(), "d_rtrl", jnp.ones((4, 3)), batch_size=4, vjp_method="multi-step")
