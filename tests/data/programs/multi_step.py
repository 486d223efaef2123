"""A learner with a multi-step VJP: it differentiates the loss through the whole window, readout and the
plain input projection included."""
import brainstate
import braintrace
import jax.numpy as jnp


class Net(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.w_in = brainstate.ParamState(jnp.ones((3, 3)) * 0.5)
        self.rnn = braintrace.nn.ValinaRNNCell(3, 5)
        self.out = braintrace.nn.Linear(5, 2)

    def update(self, x):
        return self.out(self.rnn(x @ self.w_in.value))


brainstate.random.seed(5)
learner = braintrace.compile(Net(), "d_rtrl", jnp.ones((4, 3)), batch_size=4, vjp_method="multi-step")
