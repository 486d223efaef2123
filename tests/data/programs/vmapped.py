"""braintrace.compile(..., vmap=True): the learner is built per sample."""
import brainstate
import braintrace
import jax.numpy as jnp


class Cell(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = braintrace.nn.ValinaRNNCell(3, 5)
        self.out = braintrace.nn.Linear(5, 2)

    def update(self, x):
        return self.out(self.rnn(x))


brainstate.random.seed(3)
model = Cell()
learner = braintrace.compile(model, "d_rtrl", jnp.ones((4, 3)), batch_size=4, vmap=True)
print("vmapped", learner(jnp.ones((4, 3))).shape)
