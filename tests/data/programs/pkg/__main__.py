import sys

import brainstate
import braintrace
import jax.numpy as jnp

print("module argv", sys.argv[1:])
cell = braintrace.nn.ValinaRNNCell(2, 4)
braintrace.compile(cell, "d_rtrl", jnp.ones((2,)))
print("after compile")
