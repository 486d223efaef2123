"""A user's own algorithm class, built and compiled by hand with compile_graph."""
import brainstate
import braintrace
import jax.numpy as jnp


class MyRTRL(braintrace.D_RTRL):
    def compile_graph(self, *args):
        print("my compile_graph")
        return super().compile_graph(*args)


class Cell(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = braintrace.nn.ValinaRNNCell(3, 6)

    def update(self, x):
        return self.rnn(x)


model = Cell()
brainstate.nn.init_all_states(model)
learner = MyRTRL(model)
learner.compile_graph(jnp.ones((3,)))
print("done")
